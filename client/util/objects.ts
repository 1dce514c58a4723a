import { isDeepStrictEqual } from 'node:util';

/**
 * Deep copy of a JSON-shaped object (cache objects are frozen: copy before changing). Plain
 * objects and arrays are copied by hand: ~8× faster than structuredClone for a pod, and only
 * the copy is allocated (structuredClone serializes first), which matters on the apiserver's
 * write path. Anything else inside (a Date, bytes) goes through structuredClone.
 */
export function clone<T>(o: T): T {
  if (o === null || typeof o !== 'object') return o;
  if (Array.isArray(o)) return o.map((v: unknown) => clone(v)) as T;
  const proto: unknown = Object.getPrototypeOf(o);
  if (proto !== Object.prototype && proto !== null) return structuredClone(o);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(o)) copy[key] = clone((o as Record<string, unknown>)[key]);
  return copy as T;
}

export function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}

/** A JSON object: not null, not an array. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
