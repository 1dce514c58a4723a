/**
 * One copy of each short string the caches hold. JSON.parse makes a new string for every
 * value, so 50,000 cached pods hold 50,000 copies of "True", "Running", their namespace and
 * their node's name; sharing them through a small table of recently seen strings makes a
 * cached pod about a third smaller, and the garbage collector has that much less to trace.
 * The table is fixed-size (a new string takes the slot of an older one), so unique strings
 * (uids, names) cost nothing that lasts. The same walk shares whole subtrees across objects
 * (sharedsubtrees.ts): it hashes each value on the way up, so a subtree costs one lookup.
 */

import { ARRAY_SEED, hashScalar, hashString, mix, OBJECT_SEED, sharedSubtree } from './sharedsubtrees.js';

/** Strings up to this long are shared. */
const SHARED_MAX_LENGTH = 64;
/** Table slots (a power of two). */
const SLOTS = 1 << 16;
const seen: string[] = new Array<string>(SLOTS).fill('');

export function sharedString(s: string): string {
  return sharedStringHashed(s, hashString(s));
}

function sharedStringHashed(s: string, hash: number): string {
  const len = s.length;
  if (len === 0 || len > SHARED_MAX_LENGTH) return s;
  const slot = (hash ^ (hash >>> 15)) & (SLOTS - 1);
  const known = seen[slot];
  if (known === s) return known;
  seen[slot] = s;
  return s;
}

/**
 * Freezes a freshly parsed JSON value in place, its short strings replaced by their shared
 * copies and its common subtrees by theirs (sharedsubtrees.ts): the cache's objects are read by
 * everyone and changed by no one.
 */
export function freezeSharingStrings<T>(value: T): T {
  return share(value) as T;
}

/** The hash of the value `share` returned last, when it has one (a shared or sharable value). */
let lastHash = 0;
let lastHashed = false;
/** About how many bytes of JSON the value `share` returned last is. */
let lastSize = 0;
/**
 * Larger subtrees are not shared across objects: a table slot keeps what it holds alive until
 * another subtree takes it, and a quiet server should not keep a deleted ConfigMap's data.
 */
const MAX_SHARED_SUBTREE_BYTES = 2048;

function share(v: unknown): unknown {
  if (typeof v === 'string') {
    lastHash = hashString(v);
    lastHashed = true;
    lastSize = v.length + 2;
    return sharedStringHashed(v, lastHash);
  }
  if (v === null || typeof v !== 'object') {
    lastHash = hashScalar(v as number | boolean | null);
    lastHashed = true;
    lastSize = 4;
    return v;
  }
  // Frozen already: shared with another version, its hash unknown (its parent is not shared).
  if (Object.isFrozen(v)) {
    lastHashed = false;
    return v;
  }
  let hash: number;
  let all = true;
  let size = 2;
  if (Array.isArray(v)) {
    hash = ARRAY_SEED;
    for (let i = 0; i < v.length; i++) {
      v[i] = share(v[i]);
      all &&= lastHashed;
      hash = mix(hash, lastHash);
      size += lastSize + 1;
    }
  } else {
    hash = OBJECT_SEED;
    const o = v as Record<string, unknown>;
    for (const k in o) {
      // An own "__proto__" (JSON.parse makes one) must not go through the prototype setter.
      if (k === '__proto__') {
        share(o[k]);
        all = false;
        continue;
      }
      o[k] = share(o[k]);
      all &&= lastHashed;
      hash = mix(mix(hash, hashString(k)), lastHash);
      size += lastSize + k.length + 4;
    }
  }
  Object.freeze(v);
  lastSize = size;
  if (!all || size > MAX_SHARED_SUBTREE_BYTES) {
    lastHashed = false;
    return v;
  }
  lastHash = hash;
  lastHashed = true;
  return sharedSubtree(v, hash);
}
