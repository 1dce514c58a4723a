/**
 * Template hashes (controller.ComputeHash): the DaemonSet's revision names and the
 * Deployment's pod-template-hash. Equal templates hash equal whatever their key order; the
 * collision count is mixed in so a name clash is resolved by counting it and hashing again.
 */
import { createHash } from 'node:crypto';
import type { PodTemplateSpec } from '../../../client/api/types.js';

/** Characters that never spell words (rand.SafeEncodeString). */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** JSON with sorted keys and without the codec's bookkeeping: equal templates, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([k, v]) => v !== undefined && k !== '_unknownFields')
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The template's hash, as a short label-safe string (controller.ComputeHash). */
export function computeHash(
  template: PodTemplateSpec | undefined,
  collisionCount: number | undefined,
): string {
  const digest = createHash('sha256').update(canonicalJson(template ?? {}));
  if (collisionCount) digest.update(String(collisionCount));
  const n = digest.digest().readUInt32BE(0);
  return [...String(n)].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length]).join('');
}
