/**
 * The secret that signs browser-mode session cookies (login.ts), kept in
 * <data-dir>/ui-session.key (0600) so that a restarted server still accepts the cookies it
 * issued before: the open pages reconnect signed in. Deleting the file signs every browser
 * out at the next start.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFileAtomic, writeFileAtomic } from '../../client/util/atomicfile.js';

const KEY_BYTES = 32;

export function loginKeyPath(dataDir: string): string {
  return join(dataDir, 'ui-session.key');
}

function readKey(path: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const key = Buffer.from(text, 'base64url');
  return key.length === KEY_BYTES && key.toString('base64url') === text ? key : undefined;
}

/** Returns the data folder's signing key, making one on first use (or when the file is damaged). */
export function ensureLoginKey(dataDir: string): Buffer {
  const path = loginKeyPath(dataDir);
  const existing = readKey(path);
  if (existing) return existing;
  const key = randomBytes(KEY_BYTES);
  const text = key.toString('base64url') + '\n';
  try {
    // Whole or not at all, and never over another's: two servers sharing a data folder and
    // starting together agree on the first key, and neither reads half of it.
    createFileAtomic(path, text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const raced = readKey(path);
    if (raced) return raced;
    // The file is there but damaged: replace it (the sessions it signed cannot be checked anyway).
    writeFileAtomic(path, text);
  }
  return key;
}
