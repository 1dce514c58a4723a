import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kindInfo } from '../api/kinds.js';
import type { Pod } from '../api/types.js';
import { startTestApiServer, type TestApiServer } from '../../test/support/apiserver.js';
import { SharedInformerFactory } from './factory.js';
import { NODE_NAME_INDEX, nodeNameIndexFunc } from './keys.js';

let t: TestApiServer;
let factory: SharedInformerFactory;
beforeEach(async () => {
  t = await startTestApiServer();
  factory = new SharedInformerFactory(t.admin, { clock: t.clock });
});
afterEach(async () => {
  factory.shutdown();
  await t.close();
});

const pod = (name: string, nodeName?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', command: ['x'] }], ...(nodeName ? { nodeName } : {}) },
});

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('SharedIndexInformer', () => {
  it('lists, then follows every change into its cache and to its handlers', async () => {
    await t.admin.create(pod('a', 'pi-1'));
    const informer = factory.informerFor('Pod');
    informer.addIndexers({ [NODE_NAME_INDEX]: nodeNameIndexFunc });
    const seen: string[] = [];
    const reg = informer.addEventHandler({
      onAdd: (p, initial) => void seen.push(`add ${p.metadata?.name} ${initial}`),
      onUpdate: (o, n) =>
        void seen.push(`update ${n.metadata?.name} ${o.metadata?.labels?.v ?? '-'}→${n.metadata?.labels?.v}`),
      onDelete: (p, unknown) => void seen.push(`delete ${p.metadata?.name} ${unknown}`),
    });
    factory.start();
    expect(await factory.waitForCacheSync(5000)).toBe(true);
    expect(reg.hasSynced()).toBe(true);
    await t.admin.create(pod('b', 'pi-2'));
    await t.admin.patch('Pod', 'a', { metadata: { labels: { v: '2' } } });
    await t.admin.delete('Pod', 'b', { gracePeriodSeconds: 0 });
    await until(() => seen.length === 4, 'four notifications');
    expect(seen).toEqual(['add a true', 'add b false', 'update a -→2', 'delete b false']);
    expect(informer.list().map((p) => p.metadata?.name)).toEqual(['a']);
    expect(informer.indexer.byIndex(NODE_NAME_INDEX, 'pi-1').map((p) => p.metadata?.name)).toEqual(['a']);
    expect(informer.get('a', 'default')?.metadata?.labels).toEqual({ v: '2' });
  });

  it('is shared: one informer per kind and scope', () => {
    expect(factory.informerFor('Pod')).toBe(factory.informerFor('Pod'));
    expect(factory.informerFor('Pod', { namespace: 'x' })).not.toBe(factory.informerFor('Pod'));
  });

  it('a blocked handler does not delay the others', async () => {
    const informer = factory.informerFor('Pod');
    const fast: string[] = [];
    const stuck = informer.addEventHandler({ onAdd: () => new Promise<void>(() => undefined) });
    informer.addEventHandler({ onAdd: (p) => void fast.push(p.metadata!.name!) });
    factory.start();
    await factory.waitForCacheSync(5000);
    for (let i = 0; i < 20; i++) await t.admin.create(pod(`p${i}`));
    await until(() => fast.length === 20, 'the fast handler');
    expect(stuck.pending()).toBe(19);
    expect(informer.list()).toHaveLength(20);
  });

  it('a handler that throws does not stop the informer', async () => {
    const informer = factory.informerFor('Pod');
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (p) => {
        seen.push(p.metadata!.name!);
        throw new Error('boom');
      },
    });
    factory.start();
    await factory.waitForCacheSync(5000);
    await t.admin.create(pod('a'));
    await t.admin.create(pod('b'));
    await until(() => seen.length === 2, 'both adds');
  });

  it('a handler added late first gets what is already cached', async () => {
    await t.admin.create(pod('a'));
    const informer = factory.informerFor('Pod');
    factory.start();
    await factory.waitForCacheSync(5000);
    const seen: string[] = [];
    const reg = informer.addEventHandler({
      onAdd: (p, initial) => void seen.push(`${p.metadata?.name} ${initial}`),
    });
    await until(() => seen.length === 1, 'the late handler');
    expect(seen).toEqual(['a true']);
    await until(() => reg.hasSynced(), 'the late handler to sync');
  });

  it('resyncs only the handlers that ask for it, at their period', async () => {
    await t.admin.create(pod('a'));
    await t.admin.create(pod('b'));
    const informer = factory.informerFor('Pod');
    const resynced: string[] = [];
    const plain: string[] = [];
    informer.addEventHandler(
      { onUpdate: (o, n) => void resynced.push(`${n.metadata?.name} ${o === n}`) },
      30_000,
    );
    informer.addEventHandler({ onUpdate: (_o, n) => void plain.push(n.metadata!.name!) });
    factory.start();
    await factory.waitForCacheSync(5000);
    t.clock.advance(29_000);
    await new Promise((r) => setTimeout(r, 20));
    expect(resynced).toEqual([]);
    t.clock.advance(2_000);
    await until(() => resynced.length === 2, 'a resync');
    expect(resynced.sort()).toEqual(['a true', 'b true']);
    expect(plain).toEqual([]);
  });

  it('a relist that finds objects unchanged does not replay them as updates', async () => {
    await t.admin.create(pod('a'));
    const informer = factory.informerFor('Pod');
    const updates: string[] = [];
    informer.addEventHandler({ onUpdate: (_o, n) => void updates.push(n.metadata!.name!) });
    factory.start();
    await factory.waitForCacheSync(5000);
    const before = informer.lastSyncResourceVersion;
    // The server rebuilds its watch cache (as after a store failure): every watch ends as
    // expired and the reflector lists again.
    const cache = t.api.cacher.cache(kindInfo('Pod'));
    const current = cache.list({}).items;
    cache.reset(current, cache.resourceVersion);
    await t.admin.create(pod('b'));
    await until(() => informer.list().length === 2, 'the informer to list again and see b');
    expect(updates).toEqual([]);
    expect(Number(informer.lastSyncResourceVersion)).toBeGreaterThan(Number(before));
  });
});
