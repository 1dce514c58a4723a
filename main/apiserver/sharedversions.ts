/**
 * A new version of a cached object shares with the version before it every part that did not
 * change. The watch cache's history holds every version written in the last 75 s — at 10,000
 * nodes, 100,000 lease renewals — and a renewal changes a timestamp or two: parsed on its own,
 * each version would be a full tree of small objects (its managedFields alone are dozens), all
 * marked by every garbage collection; sharing, it is the few objects on the paths to what
 * changed. Both versions are frozen, so sharing is safe.
 */
import { freezeSharingStrings, sharedString } from './sharedstrings.js';

/**
 * Freezes a freshly parsed JSON value in place, as freezeSharingStrings does, and gives back
 * `previous`'s own subtree wherever the two are equal (same keys in the same order, same
 * values): the result is equal to `value`, JSON.stringify included.
 */
export function freezeSharingWith<T>(value: T, previous: unknown): T {
  return shareTree(value, previous) as T;
}

function shareTree(v: unknown, p: unknown): unknown {
  if (typeof v === 'string') return p === v ? p : sharedString(v);
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return v;
  if (p === null || typeof p !== 'object' || !Object.isFrozen(p) || Array.isArray(v) !== Array.isArray(p))
    return freezeSharingStrings(v);
  let same: boolean;
  if (Array.isArray(v)) {
    const prev = p as unknown[];
    same = v.length === prev.length;
    for (let i = 0; i < v.length; i++) {
      v[i] = shareTree(v[i], prev[i]);
      if (v[i] !== prev[i]) same = false;
    }
  } else {
    const o = v as Record<string, unknown>;
    const prev = p as Record<string, unknown>;
    const keys = Object.keys(o);
    const prevKeys = Object.keys(prev);
    same = keys.length === prevKeys.length;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      // An own "__proto__" (JSON.parse makes one) must not go through the prototype setter.
      if (k === '__proto__') {
        freezeSharingStrings(o[k]);
        same = false;
        continue;
      }
      if (same && prevKeys[i] !== k) same = false;
      const had = Object.prototype.hasOwnProperty.call(prev, k);
      o[k] = shareTree(o[k], had ? prev[k] : undefined);
      if (!had || o[k] !== prev[k]) same = false;
    }
  }
  return same ? p : Object.freeze(v);
}
