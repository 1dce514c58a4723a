/**
 * One copy of each common subtree the caches hold, across objects. Pods of one DaemonSet differ
 * in a name, a node and a few timestamps: their containers, tolerations, affinity shape and
 * above all their managedFields (a tree of `f:` keys down to `{}`, dozens of objects per
 * manager) are the same. Parsed on its own, a pod is ~100 objects for the garbage collector to
 * trace; sharing what it has in common with the pods before it, ~10.
 *
 * A frozen subtree whose own children are all shared is looked up by a hash of its keys and
 * values in a fixed-size table (a new subtree takes the slot of an older one, so the table
 * keeps no more than its slots alive); a slot holding an equal subtree — the same keys in the
 * same order and identical values — gives back that one. The objects are frozen, so sharing
 * them is safe; an equal subtree that is not found is merely not shared.
 */

/** Table slots (a power of two). */
const SLOTS = 1 << 16;
const table: Array<object | undefined> = new Array<object | undefined>(SLOTS).fill(undefined);

/** Mixes `value` into the running hash `h` (32 bits). */
export function mix(h: number, value: number): number {
  h = Math.imul(h ^ value, 0x5bd1e995);
  return h ^ (h >>> 15);
}

/** A hash of a string: every character of a short one, the length and ends of a long one. */
export function hashString(s: string): number {
  const len = s.length;
  let hash = len;
  if (len <= 64) {
    for (let i = 0; i < len; i++) hash = (Math.imul(hash, 31) + s.charCodeAt(i)) | 0;
  } else {
    for (let i = 0; i < 16; i++)
      hash = (Math.imul(hash, 31) + s.charCodeAt(i) + s.charCodeAt(len - 1 - i)) | 0;
  }
  return hash;
}

/** A hash of a JSON scalar. */
export function hashScalar(v: number | boolean | null): number {
  if (v === null) return 0x2545f491;
  if (typeof v === 'boolean') return v ? 0x1b873593 : 0x0cc9e2d5;
  return Number.isInteger(v) ? mix(0x68e31da4, v | 0) ^ Math.floor(v / 4294967296) : hashString(String(v));
}

/** Where the hash of an array, and of an object, starts. */
export const ARRAY_SEED = 0x3c6ef372;
export const OBJECT_SEED = 0x7f4a7c15;

/**
 * The shared copy of `o` (frozen, every child already shared), found by `hash`, or `o` itself,
 * which then becomes the copy others share.
 */
export function sharedSubtree<T extends object>(o: T, hash: number): T {
  const slot = (hash ^ (hash >>> 16)) & (SLOTS - 1);
  const known = table[slot];
  if (known !== undefined && known !== o && sameShallow(known, o)) return known as T;
  table[slot] = o;
  return o;
}

function sameShallow(a: object, b: object): boolean {
  const aArray = Array.isArray(a);
  if (aArray !== Array.isArray(b)) return false;
  if (aArray) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i];
    if (k !== kb[i] || x[k] !== y[k]) return false;
  }
  return true;
}
