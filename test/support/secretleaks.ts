import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

/**
 * Asserts a Secret's value (and its base64) is in none of `logs` and in no file under
 * `dataDir` (the server's: the store, its WAL, its keys).
 */
export function expectSecretNowhere(value: string, logs: string, dataDir: string): void {
  const b64 = Buffer.from(value).toString('base64');
  expect(logs).not.toContain(value);
  expect(logs).not.toContain(b64);
  for (const f of readdirSync(dataDir, { recursive: true, withFileTypes: true })) {
    if (!f.isFile()) continue;
    const bytes = readFileSync(join(f.parentPath, f.name));
    expect(bytes.includes(value), f.name).toBe(false);
    expect(bytes.includes(b64), f.name).toBe(false);
  }
}
