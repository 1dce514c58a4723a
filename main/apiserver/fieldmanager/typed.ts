/**
 * An object's values read through its kind's shape, as structured-merge-diff's typed values:
 * the set of fields a value sets, what changed between two values, an applied configuration
 * merged onto a live object, and fields taken out of one. Paths given to the shape are the
 * value's field names joined by "." with "[]" for a list's items ("spec.containers[].ports").
 */
import { ApiError } from '../../../client/api/errors.js';
import { deepEqual, isPlainObject } from '../../../client/util/objects.js';
import { FieldSet, printPath, type PathElement } from './fieldset.js';
import type { ListType, Shape } from './shape.js';

type Obj = Record<string, unknown>;

function fieldPath(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

/** A value whose fields are owned one by one (not a leaf). */
function isGranular(shape: Shape, value: unknown, path: string): value is Obj {
  return isPlainObject(value) && hasOwnKeys(value) && !shape.isAtomic(path);
}

function hasOwnKeys(o: Obj): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}

/**
 * The "k:" element of an associative list's item: its key fields in name order. `strict`
 * (an applied configuration) refuses an item without its key; a stored object's such item is
 * left out of the set instead (undefined).
 */
function keyElement(
  item: unknown,
  list: Extract<ListType, { type: 'map' }>,
  at: Trail | undefined,
  strict: boolean,
): PathElement | undefined {
  const key: Obj = {};
  for (const k of [...list.keys].sort()) {
    const v = isPlainObject(item) ? (item[k] ?? list.defaults?.[k]) : undefined;
    if (v === undefined || v === null || isPlainObject(v) || Array.isArray(v)) {
      if (!strict) return undefined;
      throw new ApiError(
        'BadRequest',
        `${printPath(elements(at)) || '.'}: an item of this list has no "${k}"; items of this list are identified by ${list.keys.map((x) => `"${x}"`).join(' and ')}, so set it`,
      );
    }
    key[k] = v;
  }
  return `k:${JSON.stringify(key)}`;
}

function valueElement(v: unknown): PathElement {
  return `v:${JSON.stringify(v)}`;
}

/** A path built on the way down, turned into elements only when needed (a difference, an error). */
interface Trail {
  readonly up: Trail | undefined;
  readonly e: PathElement;
}

function down(up: Trail | undefined, e: PathElement): Trail {
  return { up, e };
}

function elements(t: Trail | undefined): PathElement[] {
  const out: PathElement[] = [];
  for (let x = t; x; x = x.up) out.push(x.e);
  return out.reverse();
}

/**
 * The fields `value` sets: every leaf, every list item by its key, every set member. With
 * `strict` (an applied configuration), an item without its key or one key given twice is an
 * error; a stored object is read as best it can be.
 */
export function fieldSetOf(shape: Shape, value: unknown, strict = false): FieldSet {
  const set = setBelow(shape, value, '', undefined, strict);
  set.member = false; // the object itself is no field
  return set;
}

/**
 * The fields of `value`, which sits at `path` (`at` in elements, for messages): below it, or
 * the path itself (a member root) for a leaf — a scalar, an empty value, an atomic value.
 */
function setBelow(
  shape: Shape,
  value: unknown,
  path: string,
  at: Trail | undefined,
  strict: boolean,
): FieldSet {
  const node = new FieldSet();
  if (isGranular(shape, value, path)) {
    addFields(shape, node, value, path, at, strict);
    if (node.isEmpty()) node.member = true;
    return node;
  }
  if (Array.isArray(value) && value.length > 0) {
    const list = shape.listType(path);
    if (list.type === 'set') {
      for (const item of value) node.at(valueElement(item)).member = true;
      return node;
    }
    if (list.type === 'map') {
      for (const item of value) {
        const e = keyElement(item, list, at, strict);
        if (!e) continue;
        if (strict && node.children.has(e))
          throw new ApiError(
            'BadRequest',
            `${printPath([...elements(at), e])}: the list holds this item twice; give each item its own key`,
          );
        const itemNode = node.at(e);
        itemNode.member = true;
        if (isPlainObject(item))
          addFields(shape, itemNode, item, `${path}[]`, strict ? down(at, e) : undefined, strict);
      }
      return node;
    }
  }
  node.member = true;
  return node;
}

/** The fields of a struct's or map's members, below `into`. */
function addFields(
  shape: Shape,
  into: FieldSet,
  obj: Obj,
  objPath: string,
  objAt: Trail | undefined,
  strict: boolean,
): void {
  for (const k in obj) {
    const child = obj[k];
    if (child === null || child === undefined) continue;
    const e = `f:${k}`;
    const sub = setBelow(shape, child, fieldPath(objPath, k), strict ? down(objAt, e) : undefined, strict);
    if (!sub.isEmpty()) into.put(e, sub);
  }
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** What changed from `before` to `after`, field by field. */
export function compare(shape: Shape, before: unknown, after: unknown): Comparison {
  const out: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const replaced = (a: unknown, b: unknown, at: Trail | undefined, path: string): void => {
    const sa = subSet(shape, a, path);
    const sb = subSet(shape, b, path);
    const where = elements(at);
    out.modified.graft(where, sa.intersection(sb));
    out.removed.graft(where, sa.difference(sb));
    out.added.graft(where, sb.difference(sa));
  };
  const fields = (a: Obj, b: Obj, path: string, at: Trail | undefined): void => {
    // Most fields of an update are as they were: no path is made for them.
    for (const k in a) if (a[k] !== b[k]) walk(a[k], b[k], fieldPath(path, k), down(at, `f:${k}`));
    for (const k in b) if (!(k in a)) walk(undefined, b[k], fieldPath(path, k), down(at, `f:${k}`));
  };
  const walk = (a: unknown, b: unknown, path: string, at: Trail | undefined): void => {
    if (a === b) return;
    if (a === undefined || a === null) return out.added.graft(elements(at), subSet(shape, b, path));
    if (b === undefined || b === null) return out.removed.graft(elements(at), subSet(shape, a, path));
    if (isGranular(shape, a, path) && isGranular(shape, b, path)) return fields(a, b, path, at);
    if (Array.isArray(a) && Array.isArray(b) && a.length && b.length) {
      const list = shape.listType(path);
      if (list.type === 'map') {
        const items = (xs: unknown[]) => {
          const m = new Map<PathElement, unknown>();
          for (const x of xs) {
            const e = keyElement(x, list, at, false);
            if (e && !m.has(e)) m.set(e, x);
          }
          return m;
        };
        const ia = items(a);
        const ib = items(b);
        for (const [e, x] of ia) {
          const y = ib.get(e);
          if (y === undefined) out.removed.graft(elements(down(at, e)), itemSet(shape, x, path));
          else if (isPlainObject(x) && isPlainObject(y)) fields(x, y, `${path}[]`, down(at, e));
        }
        for (const [e, y] of ib)
          if (!ia.has(e)) out.added.graft(elements(down(at, e)), itemSet(shape, y, path));
        return;
      }
      if (list.type === 'set') {
        const sa = subSet(shape, a, path);
        const sb = subSet(shape, b, path);
        const where = elements(at);
        out.removed.graft(where, sa.difference(sb));
        out.added.graft(where, sb.difference(sa));
        return;
      }
    }
    if (!deepEqual(a, b)) replaced(a, b, at, path);
  };
  walk(before, after, '', undefined);
  return out;
}

/** The fields of a value below its own path (a leaf value: the path itself). */
function subSet(shape: Shape, value: unknown, path: string): FieldSet {
  return setBelow(shape, value, path, undefined, false);
}

/** An associative list item's fields, the item itself included. */
function itemSet(shape: Shape, item: unknown, listPath: string): FieldSet {
  const set = isPlainObject(item) ? setBelow(shape, item, `${listPath}[]`, undefined, false) : new FieldSet();
  set.member = true;
  return set;
}

/** `config` merged onto `live`: maps field by field, map lists item by key, sets by member, the rest replaced. */
export function merge(shape: Shape, live: unknown, config: unknown): unknown {
  const at = (l: unknown, c: unknown, path: string): unknown => {
    if (c === undefined || c === null) return l;
    if (isPlainObject(c) && !shape.isAtomic(path)) {
      const out: Obj = isPlainObject(l) ? { ...l } : {};
      for (const [k, v] of Object.entries(c)) {
        const merged = at(out[k], v, fieldPath(path, k));
        if (merged !== undefined) out[k] = merged;
      }
      return out;
    }
    if (Array.isArray(c)) {
      const list = shape.listType(path);
      const base = Array.isArray(l) ? [...l] : [];
      if (list.type === 'set') {
        for (const v of c) if (!base.some((x) => deepEqual(x, v))) base.push(v);
        return base;
      }
      if (list.type === 'map') {
        for (const item of c) {
          const e = keyElement(item, list, undefined, true);
          const i = base.findIndex((x) => keyElement(x, list, undefined, false) === e);
          const merged = at(i >= 0 ? base[i] : undefined, item, `${path}[]`);
          if (i >= 0) base[i] = merged;
          else base.push(merged);
        }
        return base;
      }
    }
    return c;
  };
  return at(live, config, '');
}

/**
 * `value` without the members of `set`: a member field is deleted, a member list item or set
 * member dropped; below a non-member the walk goes on.
 */
export function removeFields(shape: Shape, value: unknown, set: FieldSet): unknown {
  const at = (v: unknown, node: FieldSet, path: string): unknown => {
    if (node.member) return undefined;
    if (isPlainObject(v)) {
      const out: Obj = { ...v };
      for (const [e, child] of node.children) {
        if (!e.startsWith('f:')) continue;
        const k = e.slice(2);
        if (!(k in out)) continue;
        const next = at(out[k], child, fieldPath(path, k));
        if (next === undefined) delete out[k];
        else out[k] = next;
      }
      return out;
    }
    if (Array.isArray(v)) {
      const list = shape.listType(path);
      if (list.type === 'set') return v.filter((x) => !node.children.get(valueElement(x))?.member);
      if (list.type === 'map') {
        const out: unknown[] = [];
        for (const item of v) {
          const e = keyElement(item, list, undefined, false);
          const child = e ? node.children.get(e) : undefined;
          if (!child) out.push(item);
          else {
            const next = at(item, child, `${path}[]`);
            if (next !== undefined) out.push(next);
          }
        }
        return out;
      }
    }
    return v;
  };
  return at(value, set, '');
}
