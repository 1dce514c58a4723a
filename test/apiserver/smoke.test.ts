import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer();
});
afterEach(async () => t.close());

it('creates, gets, lists and watches a pod', async () => {
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: { containers: [{ name: 'c', command: ['sleep', '100'] }] },
  };
  const created = await t.admin.create(pod);
  expect(created.metadata?.uid).toBeTruthy();
  expect(created.metadata?.namespace).toBe('default');
  expect(created.status?.phase).toBe('Pending');
  const got = await t.admin.get('Pod', 'web');
  expect(got).toEqual(created);
  const list = await t.admin.list('Pod', { labelSelector: 'app=web' });
  expect(list.items.map((p) => p.metadata?.name)).toEqual(['web']);
  const w = await t.admin.watch('Pod', { resourceVersion: created.metadata!.resourceVersion });
  await t.admin.patch('Pod', 'web', { metadata: { labels: { tier: 'x' } } });
  const it = w[Symbol.asyncIterator]();
  const ev = await it.next();
  expect(ev.value.type).toBe('MODIFIED');
  expect(ev.value.object.metadata.labels).toEqual({ app: 'web', tier: 'x' });
  w.stop();
  const ns = await t.admin.list('Namespace');
  expect(ns.items.map((n) => n.metadata?.name).sort()).toEqual([
    'default',
    'kube-node-lease',
    'kube-public',
    'kube-system',
  ]);
});
