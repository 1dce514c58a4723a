/**
 * Keeping the deprecated beta OS and architecture labels equal to the stable ones (Kubernetes'
 * reconcileNodeLabels and its labelReconcileInfo), pure. Older charts and manifests still
 * select nodes with `beta.kubernetes.io/os` or `beta.kubernetes.io/arch`; the agent sets only
 * the stable labels, so this controller mirrors them. The stable label is the source of truth:
 * a beta label that differs is overwritten, a missing one is added; nothing is ever removed,
 * and a node with only the beta label is left alone (its stable label is not made up from it).
 */
import type { Node } from '../../../client/api/types.js';

export const LABEL_OS = 'kubernetes.io/os';
export const LABEL_ARCH = 'kubernetes.io/arch';
export const LABEL_OS_BETA = 'beta.kubernetes.io/os';
export const LABEL_ARCH_BETA = 'beta.kubernetes.io/arch';

/** One label kept in step with another. */
export interface LabelMirror {
  /** The source of truth. */
  primary: string;
  /** Set to the primary's value whenever both exist and differ. */
  secondary: string;
  /** Whether a missing secondary is created from the primary. */
  ensureSecondaryExists: boolean;
}

export const LABEL_MIRRORS: readonly LabelMirror[] = [
  { primary: LABEL_OS, secondary: LABEL_OS_BETA, ensureSecondaryExists: true },
  { primary: LABEL_ARCH, secondary: LABEL_ARCH_BETA, ensureSecondaryExists: true },
];

/** A secondary label to write. */
export interface LabelFix {
  primary: string;
  /** The primary's value the fix was decided from (and the value to write). */
  value: string;
  secondary: string;
  /** Whether the secondary exists now (with another value) or is to be created. */
  secondaryExists: boolean;
}

/** What to write so the node's secondary labels follow their primaries. */
export function labelFixes(node: Node, mirrors: readonly LabelMirror[] = LABEL_MIRRORS): LabelFix[] {
  const labels = node.metadata?.labels;
  if (!labels) return [];
  const fixes: LabelFix[] = [];
  for (const m of mirrors) {
    // Presence, not truthiness: "" is a value like any other.
    if (!Object.hasOwn(labels, m.primary)) continue;
    const value = labels[m.primary];
    const secondaryExists = Object.hasOwn(labels, m.secondary);
    if (secondaryExists ? labels[m.secondary] !== value : m.ensureSecondaryExists) {
      fixes.push({ primary: m.primary, value, secondary: m.secondary, secondaryExists });
    }
  }
  return fixes;
}

export interface JsonPatchOperation {
  op: 'test' | 'add' | 'replace';
  path: string;
  value: string;
}

/**
 * The fixes as one JSON patch that holds only if each primary still has the value the fix was
 * decided from (`test`), so a label changed meanwhile is never mirrored with its old value:
 * the patch then fails and the node is synced again from a fresher copy. Nothing else about
 * the node is pinned, so the agent's status writes do not make it conflict. A secondary that
 * existed is replaced (failing if it was removed meanwhile, to be decided again); a missing
 * one is added (overwriting any value that appeared meanwhile, as the primary wins anyway).
 */
export function labelFixPatch(fixes: readonly LabelFix[]): JsonPatchOperation[] {
  const path = (key: string) => `/metadata/labels/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  return [
    ...fixes.map((f): JsonPatchOperation => ({ op: 'test', path: path(f.primary), value: f.value })),
    ...fixes.map((f): JsonPatchOperation => ({
      op: f.secondaryExists ? 'replace' : 'add',
      path: path(f.secondary),
      value: f.value,
    })),
  ];
}
