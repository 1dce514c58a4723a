/**
 * The control plane's certificates and keys after a crash or a power loss: a serving
 * certificate or key left torn or mismatched is made again and the server starts, serving TLS
 * that clients holding the CA trust; a damaged CA stops the start with an error naming the file
 * and what to do, and is left as it was (agents that joined pinned it).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ControlPlane } from '../../main/controlplane.js';
import { silentLogger } from '../../main/logging.js';
import { startTestControlPlane } from '../support/controlplane.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A data folder a control plane has run in (and stopped): CA, serving pair, tokens. */
async function usedDataDir(): Promise<{ dataDir: string; caPem: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kubelab-pki-'));
  dirs.push(dataDir);
  const t = await startTestControlPlane({ dataDir, controllers: false });
  await t.close();
  return { dataDir, caPem: t.caPem };
}

const pki = (dataDir: string, file: string) => join(dataDir, 'pki', file);
const halfOf = (path: string) => readFileSync(path, 'utf8').slice(0, readFileSync(path, 'utf8').length / 2);

describe('a start after a crash', () => {
  const damages: Array<[string, (dataDir: string) => void]> = [
    ['server.crt cut short', (d) => writeFileSync(pki(d, 'server.crt'), halfOf(pki(d, 'server.crt')))],
    ['server.key cut short', (d) => writeFileSync(pki(d, 'server.key'), halfOf(pki(d, 'server.key')))],
    [
      'server.key not the certificate’s',
      (d) => writeFileSync(pki(d, 'server.key'), readFileSync(pki(d, 'ca.key'))),
    ],
  ];
  it.each(damages)(
    'with %s makes the serving pair again and serves TLS under the same CA',
    async (_, damage) => {
      const { dataDir, caPem } = await usedDataDir();
      damage(dataDir);
      const t = await startTestControlPlane({ dataDir, controllers: false });
      try {
        expect(t.caPem).toBe(caPem);
        expect((await t.client().list('Namespace')).items.length).toBeGreaterThan(0);
      } finally {
        await t.close();
      }
    },
  );

  const caDamages: Array<[string, string, (dataDir: string) => void]> = [
    ['ca.key cut short', 'pki/ca.key', (d) => writeFileSync(pki(d, 'ca.key'), halfOf(pki(d, 'ca.key')))],
    ['ca.key missing', 'pki/ca.key is missing', (d) => rmSync(pki(d, 'ca.key'))],
    [
      'ca.key not the CA’s',
      'pki/ca.key',
      (d) => writeFileSync(pki(d, 'ca.key'), readFileSync(pki(d, 'server.key'))),
    ],
    ['ca.crt empty', 'pki/ca.crt is empty or not a certificate', (d) => writeFileSync(pki(d, 'ca.crt'), '')],
  ];
  it.each(caDamages)(
    'with %s refuses to start, naming the file, and changes no CA file',
    async (_, named, damage) => {
      const { dataDir } = await usedDataDir();
      damage(dataDir);
      const before = ['ca.crt', 'ca.key'].map(
        (f) => existsSync(pki(dataDir, f)) && readFileSync(pki(dataDir, f), 'utf8'),
      );
      const started = ControlPlane.start({
        dataDir,
        listen: '127.0.0.1:0',
        logger: silentLogger(),
        controllers: false,
      });
      await expect(started).rejects.toThrow(named);
      await expect(started).rejects.toThrow(/restore pki\/ca\.crt and pki\/ca\.key from a backup/);
      const after = ['ca.crt', 'ca.key'].map(
        (f) => existsSync(pki(dataDir, f)) && readFileSync(pki(dataDir, f), 'utf8'),
      );
      expect(after).toEqual(before);
      // The store it opened before failing is closed again: fixing the CA is all a next start needs.
      expect(existsSync(join(dataDir, 'state.db.lock'))).toBe(false);
    },
  );
});
