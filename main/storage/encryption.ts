/**
 * Encryption at rest (Kubernetes' aesgcm provider): values of the keys it covers (Secrets) are
 * stored as `k8s:enc:aesgcm:v1:NAME:` + base64(nonce ‖ ciphertext ‖ tag), AES-256-GCM with a
 * fresh 12-byte nonce, the storage key as additional data (a value moved to another key does
 * not decrypt). The key file holds one key per line, `NAME:BASE64` (32 bytes); the first
 * encrypts, all decrypt — rotation is: add a new first line, restart, rewrite every Secret,
 * remove the old line. The file is created with a random key (mode 0600) on first start.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';

export const ENCRYPTED_PREFIX = 'k8s:enc:aesgcm:v1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

export interface EncryptionKey {
  name: string;
  key: Buffer;
}

export class KeyFileError extends Error {}

/** Reads the key file, creating it with one random key when it does not exist. */
export function loadOrCreateKeys(path: string): EncryptionKey[] {
  if (!existsSync(path)) {
    writeFileSync(path, `key1:${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const keys: EncryptionKey[] = [];
  for (const [i, raw] of readFileSync(path, 'utf8').split('\n').entries()) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    const name = line.slice(0, colon);
    const key = Buffer.from(line.slice(colon + 1), 'base64');
    if (colon < 0 || !KEY_NAME.test(name) || key.length !== 32)
      throw new KeyFileError(
        `${path} line ${i + 1}: expected NAME:KEY with a lowercase name and a base64 32-byte key (make one with: openssl rand -base64 32)`,
      );
    if (keys.some((k) => k.name === name))
      throw new KeyFileError(`${path} line ${i + 1}: the key name "${name}" repeats`);
    keys.push({ name, key });
  }
  if (!keys.length)
    throw new KeyFileError(`${path} has no key; add a line NAME:KEY (openssl rand -base64 32)`);
  return keys;
}

export class ValueEncryption {
  constructor(private readonly keys: EncryptionKey[]) {}

  encrypt(storageKey: string, plain: string): string {
    const { name, key } = this.keys[0];
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(Buffer.from(storageKey));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${ENCRYPTED_PREFIX}${name}:${Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64')}`;
  }

  /** The plain value; a value stored before encryption was on is returned as it is. */
  decrypt(storageKey: string, stored: string): string {
    if (!stored.startsWith(ENCRYPTED_PREFIX)) return stored;
    const rest = stored.slice(ENCRYPTED_PREFIX.length);
    const colon = rest.indexOf(':');
    const name = rest.slice(0, colon);
    const entry = this.keys.find((k) => k.name === name);
    if (!entry) throw new KeyFileError(`encrypted with the key "${name}", which the key file does not hold`);
    const bytes = Buffer.from(rest.slice(colon + 1), 'base64');
    if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new KeyFileError('the encrypted value is truncated');
    const decipher = createDecipheriv('aes-256-gcm', entry.key, bytes.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(storageKey));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new KeyFileError(
        `the value does not decrypt with the key "${name}" (a different key of the same name?)`,
      );
    }
  }

  /** Whether a stored value is encrypted with a key other than the current first one. */
  isStale(stored: string): boolean {
    return !stored.startsWith(`${ENCRYPTED_PREFIX}${this.keys[0].name}:`);
  }
}
