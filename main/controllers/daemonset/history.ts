/**
 * A DaemonSet's history (controller_history): each distinct pod template is a
 * ControllerRevision named `<ds>-<hash>`, holding the template as Kubernetes does (a patch of
 * `spec.template` with `$patch: replace`) and a revision number; the newest is the current
 * one. The hash covers the template and status.collisionCount, so a name clash with a revision
 * of another template is resolved by counting the collision and hashing again.
 */
import { createHash } from 'node:crypto';
import type { ControllerRevision, DaemonSet, PodTemplateSpec } from '../../../client/api/types.js';
import { REVISION_HASH_LABEL } from './util.js';

/** Characters that never spell words (rand.SafeEncodeString). */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** JSON with sorted keys and without the codec's bookkeeping: equal templates, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([k, v]) => v !== undefined && k !== '_unknownFields')
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The template's hash, as a short label-safe string (controller.ComputeHash). */
export function computeHash(
  template: PodTemplateSpec | undefined,
  collisionCount: number | undefined,
): string {
  const digest = createHash('sha256').update(canonicalJson(template ?? {}));
  if (collisionCount) digest.update(String(collisionCount));
  const n = digest.digest().readUInt32BE(0);
  return [...String(n)].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length]).join('');
}

/** What a revision stores: the template as a replace-patch of the DaemonSet. */
export function revisionData(ds: DaemonSet): Record<string, unknown> {
  return { spec: { template: { ...(ds.spec?.template ?? {}), $patch: 'replace' } } };
}

/** The template a revision holds (for rollback). */
export function templateOf(revision: ControllerRevision): PodTemplateSpec {
  const template = { ...((revision.data as { spec?: { template?: object } })?.spec?.template ?? {}) };
  delete (template as Record<string, unknown>).$patch;
  return template as PodTemplateSpec;
}

/** The revision holds the DaemonSet's current template (history.Match). */
export function revisionMatches(ds: DaemonSet, revision: ControllerRevision): boolean {
  return canonicalJson(revision.data ?? {}) === canonicalJson(revisionData(ds));
}

export function revisionName(ds: DaemonSet, hash: string): string {
  return `${ds.metadata!.name}-${hash}`;
}

export function maxRevision(revisions: ControllerRevision[]): number {
  return revisions.reduce((m, r) => Math.max(m, r.revision ?? 0), 0);
}

/** A new revision object for the current template, owned by the DaemonSet. */
export function newRevision(ds: DaemonSet, hash: string, revision: number): ControllerRevision {
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(ds, hash),
      namespace: ds.metadata!.namespace,
      labels: { ...(ds.spec?.template?.metadata?.labels ?? {}), [REVISION_HASH_LABEL]: hash },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          name: ds.metadata!.name,
          uid: ds.metadata!.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: revisionData(ds),
    revision,
  };
}

/**
 * Revisions to delete beyond revisionHistoryLimit (cleanupHistory): the oldest first, never
 * one whose hash a live pod still carries, never the current one (not in `old`).
 */
export function revisionsToDelete(
  ds: DaemonSet,
  old: ControllerRevision[],
  liveHashes: Set<string>,
): ControllerRevision[] {
  let toKill = old.length - (ds.spec?.revisionHistoryLimit ?? 10);
  const result: ControllerRevision[] = [];
  for (const r of [...old].sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0))) {
    if (toKill <= 0) break;
    if (liveHashes.has(r.metadata?.labels?.[REVISION_HASH_LABEL] ?? '')) continue;
    result.push(r);
    toKill--;
  }
  return result;
}
