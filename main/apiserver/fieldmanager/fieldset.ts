/**
 * A set of an object's fields, as server-side apply names them (structured-merge-diff's
 * fieldpath.Set): a tree whose edges are path elements —
 *   "f:<name>"   a field of a struct or map,
 *   "k:<json>"   an item of an associative list, by its key fields ({"name":"nginx"}),
 *   "v:<json>"   a member of a set-like list ("v:\"foregroundDeletion\""),
 *   "i:<n>"      an item by position (only ever read, from other servers' documents);
 * and whose nodes say whether the path leading to them is itself a member (a leaf, a list
 * item). Serialized as FieldsV1: a leaf is `{}`, a member with children carries `".": {}`.
 */
import { ApiError, echo } from '../../../client/api/errors.js';

export type PathElement = string;

/** What a leaf's children are: most nodes are leaves, so they share this instead of a Map each. */
const NO_CHILDREN: ReadonlyMap<string, FieldSet> = new Map<string, FieldSet>();
export type FieldPath = readonly PathElement[];

export class FieldSet {
  /** The path leading here is itself in the set. */
  member = false;
  private own: Map<PathElement, FieldSet> | undefined;

  /** The nodes below, by element (read-only: change them through at() and put()). */
  get children(): ReadonlyMap<PathElement, FieldSet> {
    return this.own ?? NO_CHILDREN;
  }

  /** Sets the node at `element`. */
  put(element: PathElement, child: FieldSet): void {
    (this.own ??= new Map()).set(element, child);
  }

  private remove(element: PathElement): void {
    this.own?.delete(element);
  }

  isEmpty(): boolean {
    return !this.member && this.children.size === 0;
  }

  /** The node at `element`, made when absent (callers leave no empty node behind). */
  at(element: PathElement): FieldSet {
    let child = this.own?.get(element);
    if (!child) {
      child = new FieldSet();
      this.put(element, child);
    }
    return child;
  }

  insert(path: FieldPath): void {
    descend(this, path, true)!.member = true;
  }

  has(path: FieldPath): boolean {
    return descend(this, path, false)?.member ?? false;
  }

  /** The subtree below `path` (empty when there is none). */
  below(path: FieldPath): FieldSet {
    return descend(this, path, false) ?? new FieldSet();
  }

  /** Adds `other`'s members below `path` (in place). */
  graft(path: FieldPath, other: FieldSet): void {
    if (other.isEmpty()) return;
    descend(this, path, true)!.addAll(other);
  }

  /** The set without anything at or below each of `paths`. */
  withoutSubtrees(...paths: FieldPath[]): FieldSet {
    return this.copy().dropSubtrees(...paths);
  }

  /** Removes, in place, anything at or below each of `paths`; returns the set. */
  dropSubtrees(...paths: FieldPath[]): FieldSet {
    const drop = (node: FieldSet, path: FieldPath): void => {
      const child = node.children.get(path[0]);
      if (!child) return;
      if (path.length === 1) node.remove(path[0]);
      else {
        drop(child, path.slice(1));
        if (child.isEmpty()) node.remove(path[0]);
      }
    };
    for (const p of paths) if (p.length) drop(this, p);
    return this;
  }

  /** Only what is at or below `path`. */
  onlySubtree(path: FieldPath): FieldSet {
    const out = new FieldSet();
    const sub = descend(this, path, false);
    if (sub) out.graft(path, sub);
    return out;
  }

  private addAll(other: FieldSet): void {
    if (other.member) this.member = true;
    for (const [e, child] of other.children) if (!child.isEmpty()) this.at(e).addAll(child);
  }

  union(other: FieldSet): FieldSet {
    const out = this.copy();
    out.addAll(other);
    return out;
  }

  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && !other.member;
    for (const [e, child] of this.children) {
      const o = other.children.get(e);
      const d = o ? child.difference(o) : child.copy();
      if (!d.isEmpty()) out.put(e, d);
    }
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && other.member;
    for (const [e, child] of this.children) {
      const o = other.children.get(e);
      if (!o) continue;
      const i = child.intersection(o);
      if (!i.isEmpty()) out.put(e, i);
    }
    return out;
  }

  /** Some member of this set is a member of `other` (intersection(other) is not empty), made without allocating. */
  intersects(other: FieldSet): boolean {
    if (this.member && other.member) return true;
    const swap = this.children.size > other.children.size;
    const small = swap ? other : this;
    const large = swap ? this : other;
    for (const [e, child] of small.children) {
      const o = large.children.get(e);
      if (o && child.intersects(o)) return true;
    }
    return false;
  }

  /** Every member of `other` is a member of this set (other.difference(this) is empty), made without allocating. */
  covers(other: FieldSet): boolean {
    if (other.member && !this.member) return false;
    for (const [e, child] of other.children) {
      if (child.isEmpty()) continue;
      const mine = this.children.get(e);
      if (!mine || !mine.covers(child)) return false;
    }
    return true;
  }

  equals(other: FieldSet): boolean {
    if (this.member !== other.member || this.children.size !== other.children.size) return false;
    for (const [e, child] of this.children) {
      const o = other.children.get(e);
      if (!o || !child.equals(o)) return false;
    }
    return true;
  }

  copy(): FieldSet {
    const out = new FieldSet();
    out.member = this.member;
    for (const [e, child] of this.children) out.put(e, child.copy());
    return out;
  }

  /** Every member path, depth first, in the elements' sorted order. */
  *members(prefix: PathElement[] = []): Generator<PathElement[]> {
    if (this.member) yield prefix;
    for (const e of [...this.children.keys()].sort()) yield* this.children.get(e)!.members([...prefix, e]);
  }

  /** The FieldsV1 document of the set. */
  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (!this.own?.size) return out;
    if (this.member) out['.'] = {};
    const keys = this.own.size === 1 ? this.own.keys() : [...this.own.keys()].sort();
    for (const e of keys) {
      const child = this.children.get(e)!;
      if (!child.isEmpty()) out[e] = child.toFieldsV1();
    }
    return out;
  }

  /**
   * Reads a FieldsV1 document (a client's, or the store's); `where` names it in errors. The
   * document's size and depth were bounded by the parser that read the object.
   */
  static fromFieldsV1(doc: unknown, where: string, trusted = false): FieldSet {
    if (trusted) return readTrusted(doc as Record<string, unknown>, true);
    const read = (value: unknown, path: string, isRoot: boolean): FieldSet => {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw badFields(path, 'must be an object');
      const node = new FieldSet();
      const entries = Object.entries(value);
      if (entries.length === 0) node.member = !isRoot;
      for (const [e, child] of entries) {
        if (e === '.') {
          node.member = !isRoot;
          continue;
        }
        if (!/^[fkvi]:/.test(e))
          throw badFields(`${path}.${e}`, 'is not a path element ("f:", "k:", "v:", "i:" or ".")');
        if (e.startsWith('k:') && !isJsonObject(e.slice(2)))
          throw badFields(`${path}.${e}`, 'must be "k:" and the item\'s key fields as a JSON object');
        if (e.startsWith('i:') && !/^i:\d+$/.test(e))
          throw badFields(`${path}.${e}`, 'must be "i:" and an index');
        const c = read(child, `${path}.${e}`, false);
        if (!c.isEmpty()) node.put(e, c);
      }
      return node;
    };
    return read(doc, where, true);
  }
}

/** FieldsV1 the server wrote itself: read without checking. */
function readTrusted(doc: Record<string, unknown>, isRoot: boolean): FieldSet {
  const node = new FieldSet();
  let empty = true;
  for (const e in doc) {
    empty = false;
    if (e === '.') node.member = !isRoot;
    else node.put(e, readTrusted(doc[e] as Record<string, unknown>, false));
  }
  if (empty) node.member = !isRoot;
  return node;
}

/** The node at `path` below `start`; made on the way with `create`, else undefined when absent. */
function descend(start: FieldSet, path: FieldPath, create: boolean): FieldSet | undefined {
  let node: FieldSet | undefined = start;
  for (const e of path) {
    node = create ? node.at(e) : node.children.get(e);
    if (!node) return undefined;
  }
  return node;
}

function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

function badFields(path: string, why: string): ApiError {
  return new ApiError(
    'BadRequest',
    `${echo(path, 200)} ${why}; send fieldsV1 as the server wrote it, or leave managedFields out`,
  );
}

/** A path as structured-merge-diff prints it: `.spec.containers[name="nginx"].image`. */
export function printPath(path: FieldPath): string {
  let out = '';
  for (const e of path) {
    const body = e.slice(2);
    if (e.startsWith('f:')) out += `.${body}`;
    else if (e.startsWith('k:')) {
      const key = JSON.parse(body) as Record<string, unknown>;
      out += `[${Object.entries(key)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    } else if (e.startsWith('v:')) out += `[=${body}]`;
    else out += `[${body}]`;
  }
  return out;
}
