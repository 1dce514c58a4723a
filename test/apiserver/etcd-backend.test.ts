/**
 * The apiserver on the etcd backend: the same behaviour as on SQLite, with a real etcd.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { forgedContinue } from '../support/forgedcontinue.js';

let etcd: EtcdServer;
const dirs: string[] = [];
beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', command: ['sleep', '1'] }] },
});

async function start(prefix: string): Promise<TestControlPlane> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kubelab-etcdcp-'));
  dirs.push(dataDir);
  return startTestControlPlane({
    dataDir,
    store: 'etcd',
    etcdEndpoints: [etcd.endpoint],
    etcdPrefix: prefix,
    // Raw API semantics: no scheduler writing to the pods under test.
    controllers: false,
  });
}

describe('apiserver on etcd', () => {
  it('creates, lists consistently, watches, and detects stale writes', async () => {
    const t = await start('/kubelab-a');
    const c = t.client();
    try {
      const created = await c.create(pod('a'));
      expect(created.metadata?.resourceVersion).toMatch(/^\d+$/);
      expect((await c.list('Pod')).items.map((p) => p.metadata?.name)).toEqual(['a']);
      const w = await c.watch('Pod', { resourceVersion: created.metadata!.resourceVersion });
      const patched = await c.patch('Pod', 'a', { metadata: { labels: { x: 'y' } } });
      const it = w[Symbol.asyncIterator]();
      const ev = (await it.next()).value;
      expect(ev.type).toBe('MODIFIED');
      expect(ev.object.metadata.resourceVersion).toBe(patched.metadata?.resourceVersion);
      w.stop();
      await expect(
        c.update({ ...created, metadata: { ...created.metadata, labels: { z: '1' } } }),
      ).rejects.toMatchObject({ reason: 'Conflict' });
    } finally {
      await t.close();
    }
  });

  it('pages over one revision and expires a continue token after compaction', async () => {
    const t = await start('/kubelab-b');
    const c = t.client();
    try {
      for (let i = 0; i < 5; i++) await c.create(pod(`p${i}`));
      const page1 = await c.list('Pod', { limit: 2 });
      await c.delete('Pod', 'p3');
      const page2 = await c.list('Pod', { limit: 2, continue: page1.continue });
      expect(page2.items.map((p) => p.metadata?.name)).toEqual(['p2', 'p3']);
      await t.cp.storage.compact(await t.cp.storage.currentRevision());
      await expect(c.list('Pod', { limit: 2, continue: page2.continue })).rejects.toMatchObject({
        reason: 'Expired',
        code: 11,
      });
    } finally {
      await t.close();
    }
  });

  it('answers a forged continue token and an Exact list at a future revision as the client’s error', async () => {
    const t = await start('/kubelab-d');
    const c = t.client();
    try {
      for (let i = 0; i < 3; i++) await c.create(pod(`p${i}`));
      const real = (await c.list('Pod', { limit: 1 })).continue!;
      const future = (await t.cp.storage.currentRevision()) + 1000;
      await expect(
        c.list('Pod', { limit: 1, continue: forgedContinue(real, { rv: future }) }),
      ).rejects.toMatchObject({ reason: 'BadRequest', code: 3 });
      await expect(
        c.list('Pod', { resourceVersion: String(future), resourceVersionMatch: 'Exact' }),
      ).rejects.toMatchObject({
        reason: 'BadRequest',
        code: 3,
        message: expect.stringContaining('too large resource version'),
      });
    } finally {
      await t.close();
    }
  });

  it('keeps its objects across a restart of the control plane', async () => {
    const first = await start('/kubelab-c');
    await first.client().create(pod('survivor'));
    await first.close();
    const second = await start('/kubelab-c');
    try {
      expect((await second.client().get('Pod', 'survivor')).metadata?.name).toBe('survivor');
      const namespaces = (await second.client().list('Namespace')).items.map((n) => n.metadata?.name);
      expect(namespaces).toEqual(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    } finally {
      await second.close();
    }
  });
});
