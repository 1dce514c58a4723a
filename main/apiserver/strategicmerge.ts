/**
 * Kubernetes' strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch), which
 * kubectl sends for built-in kinds (apply, edit, cordon, rollout restart): a JSON merge patch,
 * except that the lists Kubernetes marks `patchStrategy: merge` are merged item by item on their
 * merge key (containers by name, conditions by type, …) instead of replaced, and the directives
 * `$patch` (replace, delete), `$setElementOrder/…`, `$deleteFromPrimitiveList/…` and
 * `$retainKeys` are honoured. Which lists merge, and on what, is Kubernetes' table for the
 * kinds kubelab serves (MERGE_KEYS); every other list is replaced, as Kubernetes does.
 */
import { ApiError, echo } from '../../client/api/errors.js';
import { mergeRules, type MergeRule } from '../../client/api/mergekeys.js';
import { isPlainObject } from '../../client/util/objects.js';

const SET_ORDER = '$setElementOrder/';
const DELETE_FROM = '$deleteFromPrimitiveList/';

function fail(path: string, why: string): never {
  throw new ApiError(
    'BadRequest',
    `the strategic merge patch cannot be applied at ${echo(path || '.', 200)}: ${why}`,
  );
}

function mergeList(
  kind: string,
  path: string,
  current: unknown,
  patch: unknown[],
  deleteFrom: unknown[] | undefined,
): unknown[] {
  const rule = mergeRules(kind)[path];
  const base = Array.isArray(current) ? current : [];
  if (rule === undefined) {
    // Replaced, as a JSON merge patch does; `$patch` items have no meaning here.
    return patch.map((item, i) =>
      isPlainObject(item) ? mergeObject(kind, `${path}[]`, undefined, item, `${path}[${i}]`) : item,
    );
  }
  if (rule === '') {
    // A set of scalars: the patch's items are added, those listed for deletion removed.
    const out = base.filter((v) => !(deleteFrom ?? []).includes(v));
    for (const v of patch) if (!out.includes(v)) out.push(v);
    return out;
  }
  if (patch.some((item) => isPlainObject(item) && item.$patch === 'replace'))
    return patch.filter((item) => !(isPlainObject(item) && item.$patch === 'replace'));
  const out = base.map((v) => (isPlainObject(v) ? { ...v } : v)) as unknown[];
  for (const [i, item] of patch.entries()) {
    if (!isPlainObject(item)) fail(`${path}[${i}]`, `items of this list are objects merged on "${rule}"`);
    const key = item[rule];
    if (key === undefined) fail(`${path}[${i}]`, `the item has no "${rule}", the key this list merges on`);
    const at = out.findIndex((v) => isPlainObject(v) && v[rule] === key);
    if (item.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    const merged = mergeObject(kind, `${path}[]`, at >= 0 ? out[at] : undefined, item, `${path}[${i}]`);
    if (at >= 0) out[at] = merged;
    else out.push(merged);
  }
  return out;
}

/** `typePath` names the field in MERGE_KEYS' terms; `where` is for messages. */
function mergeObject(
  kind: string,
  typePath: string,
  current: unknown,
  patch: Record<string, unknown>,
  where: string,
): Record<string, unknown> {
  if (patch.$patch === 'replace') {
    const { $patch: _replace, ...rest } = patch;
    return rest;
  }
  if (patch.$patch !== undefined && patch.$patch !== 'merge')
    fail(where, `$patch "${echo(String(patch.$patch), 20)}" is not one of replace, merge or delete`);
  const out: Record<string, unknown> = isPlainObject(current) ? { ...current } : {};
  const retain = patch.$retainKeys;
  for (const [field, value] of Object.entries(patch)) {
    if (field === '$patch' || field === '$retainKeys' || field.startsWith(SET_ORDER)) continue;
    if (field.startsWith(DELETE_FROM)) continue;
    const fieldPath = typePath ? `${typePath}.${field}` : field;
    const fieldWhere = where ? `${where}.${field}` : field;
    if (value === null) {
      delete out[field];
    } else if (Array.isArray(value)) {
      const deleteFrom = patch[`${DELETE_FROM}${field}`];
      out[field] = mergeList(
        kind,
        fieldPath,
        out[field],
        value,
        Array.isArray(deleteFrom) ? deleteFrom : undefined,
      );
    } else if (isPlainObject(value)) {
      if (value.$patch === 'delete') delete out[field];
      else out[field] = mergeObject(kind, fieldPath, out[field], value, fieldWhere);
    } else {
      out[field] = value;
    }
  }
  // Deletions from a primitive list the patch does not otherwise touch.
  for (const [field, value] of Object.entries(patch)) {
    if (!field.startsWith(DELETE_FROM)) continue;
    const name = field.slice(DELETE_FROM.length);
    if (name in patch) continue;
    if (!Array.isArray(value)) fail(`${where}.${field}`, 'must be a list');
    if (Array.isArray(out[name])) out[name] = (out[name] as unknown[]).filter((v) => !value.includes(v));
  }
  // The order the patch asks for, of the lists it names, after they are merged.
  for (const [field, order] of Object.entries(patch)) {
    if (!field.startsWith(SET_ORDER)) continue;
    const name = field.slice(SET_ORDER.length);
    if (!Array.isArray(order)) fail(`${where}.${field}`, 'must be a list');
    const rule = mergeRules(kind)[typePath ? `${typePath}.${name}` : name];
    const before = isPlainObject(current) ? current[name] : undefined;
    if (rule === undefined || !Array.isArray(out[name])) continue;
    out[name] = inPatchOrder(out[name] as unknown[], order, Array.isArray(before) ? before : [], rule);
  }
  if (retain !== undefined) {
    if (!Array.isArray(retain) || !retain.every((k) => typeof k === 'string'))
      fail(`${where}.$retainKeys`, 'must be a list of field names');
    for (const field of Object.keys(out)) if (!retain.includes(field)) delete out[field];
  }
  return out;
}

/**
 * A merged list in the order `$setElementOrder` gives (Kubernetes' normalizeElementOrder): the
 * items it names in its order, the items only the server had in their order before, and the two
 * interleaved so that a server-only item stays ahead of the named items it came before.
 */
function inPatchOrder(merged: unknown[], order: unknown[], original: unknown[], rule: MergeRule): unknown[] {
  const keyOf = (item: unknown) => (rule === '' ? item : isPlainObject(item) ? item[rule] : undefined);
  const positions = (list: unknown[]) => {
    const at = new Map<unknown, number>();
    list.forEach((item, i) => {
      const key = keyOf(item);
      if (!at.has(key)) at.set(key, i);
    });
    return at;
  };
  const inOrder = positions(order);
  const inOriginal = positions(original);
  // Items the server did not have go after those it had.
  const originalIndex = (item: unknown) => inOriginal.get(keyOf(item)) ?? Infinity;
  const named = merged.filter((item) => inOrder.has(keyOf(item)));
  const serverOnly = merged.filter((item) => !inOrder.has(keyOf(item)));
  named.sort((a, b) => inOrder.get(keyOf(a))! - inOrder.get(keyOf(b))!);
  serverOnly.sort((a, b) => originalIndex(a) - originalIndex(b));
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < named.length) {
    if (i >= serverOnly.length) out.push(named[j++]);
    else if (j >= named.length) out.push(serverOnly[i++]);
    else {
      const left = originalIndex(serverOnly[i]);
      const right = originalIndex(named[j]);
      out.push(left !== Infinity && right !== Infinity && left < right ? serverOnly[i++] : named[j++]);
    }
  }
  return out;
}

export function applyStrategicMergePatch(kind: string, target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch))
    throw new ApiError(
      'BadRequest',
      'a strategic merge patch must be a JSON object, e.g. {"spec":{"unschedulable":true}}',
    );
  return mergeObject(kind, '', target, patch, '');
}
