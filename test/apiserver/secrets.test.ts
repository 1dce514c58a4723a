/**
 * Secrets are secret: stringData is merged into data; values are encrypted at rest in both
 * stores (nothing in the SQLite files or in etcd in clear text or base64); a viewer sees names
 * and keys, never values, in get, list and watch; a node reads only the Secrets and ConfigMaps
 * of pods bound to it, one by name; a key missing from the key file shows on the object, not
 * as a failure of the whole cache; a rotated key file still reads what the old key wrote.
 */
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiError } from '../../client/api/errors.js';
import type { Pod, Secret } from '../../client/api/types.js';
import { ENCRYPTED_PREFIX, loadOrCreateKeys, ValueEncryption } from '../../main/storage/encryption.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';

const VALUE = 'hunter2-correct-horse';
const B64 = Buffer.from(VALUE).toString('base64');
const dirs: string[] = [];
let etcd: EtcdServer;

beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'kubelab-secrets-'));
  dirs.push(d);
  return d;
};

const secret = (name: string): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'default' },
  stringData: { password: VALUE },
});

function filesContain(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const f of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!f.isFile()) continue;
    const path = join(f.parentPath, f.name);
    const bytes = readFileSync(path);
    if (bytes.includes(needle)) hits.push(path);
  }
  return hits;
}

describe('Secrets at rest', () => {
  it('SQLite: data from stringData, readable through the API, in no store file in clear', async () => {
    const dataDir = tmp();
    const t = await startTestControlPlane({ dataDir, controllers: false });
    try {
      const c = t.client();
      const created = await c.create(secret('db'));
      expect(created.data).toEqual({ password: B64 });
      expect(created.stringData).toBeUndefined();
      expect(created.type).toBe('Opaque');
      expect((await c.get('Secret', 'db', { namespace: 'default' })).data?.password).toBe(B64);
      // Update it too, so the history holds two versions.
      await c.patch('Secret', 'db', { stringData: { other: VALUE } }, { namespace: 'default' });
    } finally {
      await t.close();
    }
    expect(readFileSync(join(dataDir, 'secrets-encryption.key'), 'utf8')).toMatch(/^key1:/);
    expect(filesContain(dataDir, VALUE)).toEqual([]);
    expect(filesContain(dataDir, B64)).toEqual([]);
  });

  it('etcd: stored with the aesgcm prefix, and a rotated key file reads what the old key wrote', async () => {
    const dataDir = tmp();
    const start = () =>
      startTestControlPlane({
        dataDir,
        store: 'etcd',
        etcdEndpoints: [etcd.endpoint],
        etcdPrefix: '/sec',
        controllers: false,
      });
    let t = await start();
    await t.client().create(secret('api'));
    await t.close();
    const raw = new Etcd3({ hosts: etcd.endpoint });
    const stored = await raw.get('/sec/registry/secrets/default/api').string();
    raw.close();
    expect(stored?.startsWith(`${ENCRYPTED_PREFIX}key1:`)).toBe(true);
    expect(stored).not.toContain(B64);

    // Rotation: a new first key; the old one stays to read what it wrote.
    const keyFile = join(dataDir, 'secrets-encryption.key');
    const old = readFileSync(keyFile, 'utf8');
    writeFileSync(keyFile, `key2:${randomBytes(32).toString('base64')}\n${old}`);
    t = await start();
    try {
      const c = t.client();
      expect((await c.get('Secret', 'api', { namespace: 'default' })).data?.password).toBe(B64);
      await c.create(secret('fresh'));
    } finally {
      await t.close();
    }
    const raw2 = new Etcd3({ hosts: etcd.endpoint });
    expect(
      (await raw2.get('/sec/registry/secrets/default/fresh').string())?.startsWith(
        `${ENCRYPTED_PREFIX}key2:`,
      ),
    ).toBe(true);
    raw2.close();

    // The old key removed: the Secret it wrote says so; the others still work.
    writeFileSync(keyFile, readFileSync(keyFile, 'utf8').split('\n')[0] + '\n');
    t = await start();
    try {
      const c = t.client();
      const lost = await c.get('Secret', 'api', { namespace: 'default' });
      expect(lost.data).toBeUndefined();
      expect(lost.metadata?.annotations?.['kubelab.io/encryption-error']).toBe(
        'encrypted with the key "key1", which the key file does not hold',
      );
      expect((await c.get('Secret', 'fresh', { namespace: 'default' })).data?.password).toBe(B64);
      expect((await c.list('Secret', { namespace: 'default' })).items).toHaveLength(2);
    } finally {
      await t.close();
    }
  });

  it('refuses a key file with a bad line, saying how to make a key', () => {
    const file = join(tmp(), 'keys');
    writeFileSync(file, 'key1:tooshort\n');
    expect(() => loadOrCreateKeys(file)).toThrow(/line 1: expected NAME:KEY .* openssl rand -base64 32/);
    appendFileSync(file, '');
  });

  it('a value moved to another key, or tampered with, does not decrypt', () => {
    const enc = new ValueEncryption([{ name: 'k', key: randomBytes(32) }]);
    const sealed = enc.encrypt('/registry/secrets/a/one', 'x');
    expect(enc.decrypt('/registry/secrets/a/one', sealed)).toBe('x');
    expect(() => enc.decrypt('/registry/secrets/a/two', sealed)).toThrow(/does not decrypt/);
    const flipped = sealed.slice(0, -3) + (sealed.at(-3) === 'A' ? 'B' : 'A') + sealed.slice(-2);
    expect(() => enc.decrypt('/registry/secrets/a/one', flipped)).toThrow(/does not decrypt/);
  });
});

describe('who reads Secrets', () => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ controllers: false });
    const c = t.client();
    await c.create(secret('db'));
    await c.create({ ...secret('unused'), metadata: { name: 'unused', namespace: 'default' } });
    await c.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'default' },
      data: { mode: 'fast' },
    });
    await c.create<Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'app', namespace: 'default' },
      spec: {
        nodeName: 'lab-1',
        containers: [
          {
            name: 'c',
            image: 'app:1',
            env: [{ name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }],
            envFrom: [{ configMapRef: { name: 'settings' } }],
          },
        ],
      },
    } as Pod);
  });
  afterAll(() => t.close());

  it('a viewer sees names and keys, never values, in get, list and watch', async () => {
    const viewer = t.client({ role: 'viewer' });
    const got = await viewer.get('Secret', 'db', { namespace: 'default' });
    expect(got.data).toEqual({ password: '' });
    expect(got.metadata?.annotations?.['kubelab.io/redacted']).toMatch(/hidden from the viewer role/);
    const listed = await viewer.list('Secret', { namespace: 'default' });
    expect(listed.items.map((s) => s.data)).toEqual([{ password: '' }, { password: '' }]);
    const watch = await viewer.watch('Secret', { namespace: 'default' });
    const seen: Secret[] = [];
    for await (const ev of watch) {
      seen.push(ev.object as Secret);
      if (seen.length === 2) break;
    }
    watch.stop();
    expect(JSON.stringify(seen)).not.toContain(B64);
    // The admin still reads the value.
    expect((await t.client().get('Secret', 'db', { namespace: 'default' })).data?.password).toBe(B64);
  });

  it('a node gets the Secrets and ConfigMaps its pods use, and nothing else', async () => {
    const token = t.cp.tokens.create({ name: 'node:lab-1', role: 'node', nodeName: 'lab-1' }).token;
    const other = t.cp.tokens.create({ name: 'node:lab-2', role: 'node', nodeName: 'lab-2' }).token;
    const node = t.client({ token });
    expect((await node.get('Secret', 'db', { namespace: 'default' })).data?.password).toBe(B64);
    expect((await node.get('ConfigMap', 'settings', { namespace: 'default' })).data).toEqual({
      mode: 'fast',
    });
    await expect(node.get('Secret', 'unused', { namespace: 'default' })).rejects.toSatisfy((e: unknown) =>
      isApiError(e, 'Forbidden'),
    );
    await expect(node.get('Secret', 'nonexistent', { namespace: 'default' })).rejects.toSatisfy(
      (e: unknown) => isApiError(e, 'Forbidden'),
    );
    await expect(node.list('Secret', { namespace: 'default' })).rejects.toThrow(
      /nodes may only get secrets by name, those the pods bound to them use/,
    );
    await expect(t.client({ token: other }).get('Secret', 'db', { namespace: 'default' })).rejects.toThrow(
      'node "lab-2" may not get secret default/db: no pod bound to it uses it',
    );
  });
});
