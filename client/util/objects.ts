import { isDeepStrictEqual } from 'node:util';

/** Deep copy of a JSON-shaped object (cache objects are frozen: copy before changing). */
export function clone<T>(o: T): T {
  return structuredClone(o);
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
