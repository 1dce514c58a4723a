/**
 * Editing a node's labels and taints: the patches, and which of the form's fields each of the
 * server's validation errors belongs to (the API reports a bad label at `metadata.labels` with
 * the offending key or value, a bad taint at `spec.taints[i].key|value|effect`).
 */
import { sameTaint, withoutTaint } from '../../../client/api/taints.js';
import type { Node, Taint } from '../../../client/api/types.js';
import type { FieldError } from '../../../client/api/validation.js';
import { rfc3339 } from '../../../client/util/clock.js';
import { describeCause } from '../editor/errorlines.js';

/** A merge patch setting one label (null removes it); other labels are left alone. */
export function labelPatch(key: string, value: string | null): object {
  return { metadata: { labels: { [key]: value } } };
}

/**
 * A merge patch of the node's taints with `set` added (replacing a taint of the same key and
 * effect, like `kubectl taint --overwrite`) or `remove` taken out, pinned to the version the
 * list was computed from: taints are one list, and without the pin a taint the node lifecycle
 * controller added meanwhile would be dropped. Undefined when nothing would change.
 */
export function taintsPatch(
  node: Node,
  change: { set?: Taint; remove?: Taint },
  now: Date,
): object | undefined {
  const current = node.spec?.taints ?? [];
  let taints = change.remove ? withoutTaint(current, change.remove) : current;
  const set = change.set;
  if (set) {
    const same = taints.find((t) => sameTaint(t, set));
    if (!same || (same.value ?? '') !== (set.value ?? '')) {
      // Like kubectl taint: a NoExecute taint says when it came, for tolerationSeconds to count from.
      const stamped = set.effect === 'NoExecute' ? { ...set, timeAdded: rfc3339(now.getTime()) } : set;
      taints = [...withoutTaint(taints, set), stamped];
    }
  }
  const unchanged = taints.length === current.length && taints.every((t, i) => t === current[i]);
  return unchanged ? undefined : patchOf(node, taints);
}

function patchOf(node: Node, taints: Taint[]): object {
  return { metadata: { resourceVersion: node.metadata?.resourceVersion }, spec: { taints } };
}

export interface FormErrors<F extends string> {
  fields: Partial<Record<F, string>>;
  /** Errors that belong to no one field of the form. */
  other: string[];
}

function collect<F extends string>(
  causes: readonly FieldError[],
  fieldOf: (c: FieldError) => F | undefined,
): FormErrors<F> {
  const result: FormErrors<F> = { fields: {}, other: [] };
  for (const cause of causes) {
    const field = fieldOf(cause);
    const text = describeCause(cause);
    if (!field) result.other.push(cause.field ? `${cause.field}: ${text}` : text);
    else result.fields[field] = result.fields[field] ? `${result.fields[field]}; ${text}` : text;
  }
  return result;
}

export function labelFormErrors(
  causes: readonly FieldError[],
  key: string,
  value: string,
): FormErrors<'key' | 'value'> {
  return collect(causes, (c) => {
    if (c.field === `metadata.labels[${key}]`) return 'value';
    if (c.field !== 'metadata.labels') return undefined;
    if (c.value === key) return 'key';
    if (c.value === value) return 'value';
    return undefined;
  });
}

export function taintFormErrors(causes: readonly FieldError[]): FormErrors<'key' | 'value' | 'effect'> {
  return collect(causes, (c) => {
    const m = /^spec\.taints\[\d+\]\.(key|value|effect)$/.exec(c.field);
    return m ? (m[1] as 'key' | 'value' | 'effect') : undefined;
  });
}
