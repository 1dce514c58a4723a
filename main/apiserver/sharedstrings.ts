/**
 * One copy of each short string the caches hold. JSON.parse makes a new string for every
 * value, so 50,000 cached pods hold 50,000 copies of "True", "Running", their namespace and
 * their node's name; sharing them through a small table of recently seen strings makes a
 * cached pod about a third smaller, and the garbage collector has that much less to trace.
 * The table is fixed-size (a new string takes the slot of an older one), so unique strings
 * (uids, names) cost nothing that lasts.
 */

/** Strings up to this long are shared. */
const SHARED_MAX_LENGTH = 64;
/** Table slots (a power of two). */
const SLOTS = 1 << 16;
const seen: string[] = new Array<string>(SLOTS).fill('');

export function sharedString(s: string): string {
  const len = s.length;
  if (len === 0 || len > SHARED_MAX_LENGTH) return s;
  let hash = len;
  for (let i = 0; i < len; i++) hash = (Math.imul(hash, 31) + s.charCodeAt(i)) | 0;
  const slot = (hash ^ (hash >>> 15)) & (SLOTS - 1);
  const known = seen[slot];
  if (known === s) return known;
  seen[slot] = s;
  return s;
}

/**
 * Freezes a freshly parsed JSON value in place, its short strings replaced by their shared
 * copies: the cache's objects are read by everyone and changed by no one.
 */
export function freezeSharingStrings<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  const o = value as Record<string, unknown>;
  if (Array.isArray(o)) {
    for (let i = 0; i < o.length; i++) o[i] = share(o[i]);
  } else {
    for (const k in o) {
      // An own "__proto__" (JSON.parse makes one) must not go through the prototype setter.
      if (k === '__proto__') freezeSharingStrings(o[k]);
      else o[k] = share(o[k]);
    }
  }
  return Object.freeze(value);
}

function share(v: unknown): unknown {
  return typeof v === 'string' ? sharedString(v) : freezeSharingStrings(v);
}
