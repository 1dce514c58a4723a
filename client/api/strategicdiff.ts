/**
 * The strategic merge patch that takes `original` to `modified` (Kubernetes'
 * strategicpatch.CreateTwoWayMergePatch): only what changed, so that a writer who sends it
 * does not overwrite what others changed meanwhile and needs no resourceVersion. Fields gone
 * from `modified` are sent as null; the lists MERGE_KEYS names are diffed item by item on their
 * key (a changed item is sent as its key and its changes, a removed one as `$patch: delete`,
 * and `$setElementOrder/<list>` gives the order), lists of scalars merged as sets through
 * `$deleteFromPrimitiveList/<list>`; every other list is sent whole when it changed.
 */
import { isPlainObject, deepEqual } from '../util/objects.js';
import { mergeRules, type MergeRule } from './mergekeys.js';

type JsonObject = Record<string, unknown>;

export function twoWayMergePatch(kind: string, original: unknown, modified: unknown): JsonObject {
  if (!isPlainObject(original) || !isPlainObject(modified))
    throw new Error('a strategic merge patch is made between two objects');
  return diffObjects(mergeRules(kind), '', original, modified);
}

function diffObjects(
  rules: Record<string, MergeRule>,
  typePath: string,
  original: JsonObject,
  modified: JsonObject,
): JsonObject {
  const patch: JsonObject = {};
  for (const [field, value] of Object.entries(modified)) {
    const before = original[field];
    const path = typePath ? `${typePath}.${field}` : field;
    // Two objects are diffed field by field below, not compared whole first at every level.
    if (isPlainObject(before) && isPlainObject(value)) {
      const sub = diffObjects(rules, path, before, value);
      if (Object.keys(sub).length > 0) patch[field] = sub;
    } else if (deepEqual(before, value)) {
      continue;
    } else if (Array.isArray(value) && rules[path] !== undefined) {
      Object.assign(patch, diffList(rules, path, field, Array.isArray(before) ? before : [], value));
    } else {
      patch[field] = value;
    }
  }
  for (const field of Object.keys(original)) if (!(field in modified)) patch[field] = null;
  return patch;
}

/** The patch's entries for one changed list that merges (its own, and its directives). */
function diffList(
  rules: Record<string, MergeRule>,
  path: string,
  field: string,
  original: unknown[],
  modified: unknown[],
): JsonObject {
  const key = rules[path];
  if (key === '') {
    const added = modified.filter((v) => !original.includes(v));
    const removed = original.filter((v) => !modified.includes(v));
    return {
      [`$setElementOrder/${field}`]: modified,
      ...(added.length > 0 ? { [field]: added } : {}),
      ...(removed.length > 0 ? { [`$deleteFromPrimitiveList/${field}`]: removed } : {}),
    };
  }
  const keyed = (items: unknown[]) => items.every((v) => isPlainObject(v) && v[key] !== undefined);
  // Items without their key cannot be merged: the list goes whole, replacing what is there.
  if (!keyed(original) || !keyed(modified)) return { [field]: [...modified, { $patch: 'replace' }] };
  const before = new Map((original as JsonObject[]).map((item) => [item[key], item]));
  const after = new Set((modified as JsonObject[]).map((item) => item[key]));
  const items: unknown[] = [];
  for (const item of modified as JsonObject[]) {
    const old = before.get(item[key]);
    if (!old) items.push(item);
    else if (!deepEqual(old, item))
      items.push({ [key]: item[key], ...diffObjects(rules, `${path}[]`, old, item) });
  }
  for (const item of original as JsonObject[])
    if (!after.has(item[key])) items.push({ [key]: item[key], $patch: 'delete' });
  return {
    [`$setElementOrder/${field}`]: (modified as JsonObject[]).map((item) => ({ [key]: item[key] })),
    ...(items.length > 0 ? { [field]: items } : {}),
  };
}
