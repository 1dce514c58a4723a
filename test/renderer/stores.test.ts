/**
 * The GUI's stores against a real control plane through the bridge (a BridgeSession per
 * connection; the transport hands JSON across in-process, standing in for IPC or the
 * WebSocket): they fill from a list, follow watch events, resume after the connection drops
 * — objects created, changed and deleted meanwhile all show — and list again when the
 * resourceVersion they held has been compacted away; a burst of events reaches the views as
 * a few batches; pods are found by node through an index.
 */
import { createPinia, setActivePinia } from 'pinia';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { computed } from 'vue';
import type { Pod } from '../../client/api/types.js';
import type { BridgeClient } from '../../renderer/src/bridge/client.js';
import type { Change } from '../../renderer/src/stores/informer.js';
import { Informer } from '../../renderer/src/stores/informer.js';
import { usePods } from '../../renderer/src/stores/kinds.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';
import { loopbackBridge, type LoopbackTransport } from './loopback.js';

let t: TestControlPlane;
let transport: LoopbackTransport;
let bridge: BridgeClient;

const pod = (name: string, labels: Record<string, string> = {}, nodeName?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'c', image: 'x' }], ...(nodeName ? { nodeName } : {}) },
});

async function start(options: Parameters<typeof startTestControlPlane>[0] = {}): Promise<void> {
  t = await startTestControlPlane({ controllers: false, ...options });
  ({ bridge, transport } = loopbackBridge(t));
}

afterEach(async () => {
  await t.close();
});

describe('informer store', () => {
  beforeEach(async () => {
    setActivePinia(createPinia());
    await start();
  });

  it('fills from a list, then follows adds, changes and deletes', async () => {
    const admin = t.cp.client();
    await admin.create(pod('a'));
    const store = usePods();
    store.start(bridge);
    await eventually(() => store.synced && store.items.length === 1, 'the list');
    expect(store.status).toBe('live');

    await admin.create(pod('b'));
    await admin.patch('Pod', 'a', { metadata: { labels: { tier: 'web' } } }, { namespace: 'default' });
    await admin.delete('Pod', 'b', { namespace: 'default' });
    await admin.create(pod('c'));
    await eventually(
      () =>
        store.items
          .map((p) => p.metadata?.name)
          .sort()
          .join() === 'a,c' && store.get('default/a')?.metadata?.labels?.tier === 'web',
      'the watch events',
    );
    store.stop();
  });

  it('shows reconnecting while cut off, and resumes with what changed meanwhile', async () => {
    const admin = t.cp.client();
    await admin.create(pod('stays'));
    await admin.create(pod('goes'));
    await admin.create(pod('changes'));
    const store = usePods();
    store.start(bridge);
    await eventually(() => store.items.length === 3, 'the list');

    transport.cut();
    await eventually(() => store.status === 'reconnecting', 'reconnecting to show');
    await admin.delete('Pod', 'goes', { namespace: 'default' });
    await admin.patch('Pod', 'changes', { metadata: { labels: { v: '2' } } }, { namespace: 'default' });
    await admin.create(pod('new'));
    transport.open();

    await eventually(
      () =>
        store.status === 'live' &&
        store.items
          .map((p) => p.metadata?.name)
          .sort()
          .join() === 'changes,new,stays' &&
        store.get('default/changes')?.metadata?.labels?.v === '2',
      'the store to catch up',
    );
    store.stop();
  });
});

describe('store batches and index', () => {
  beforeEach(async () => {
    setActivePinia(createPinia());
    await start();
  });

  it('delivers a burst of events as few batches, in order, moving version once per batch', async () => {
    const admin = t.cp.client();
    const store = usePods();
    store.start(bridge);
    await eventually(() => store.synced, 'the first list');
    const batches: Array<readonly Change<Pod>[]> = [];
    const unsubscribe = store.onBatch((changes) => batches.push(changes));
    const versionBefore = store.version;
    const names = computed(() => store.items.map((p) => p.metadata?.name).sort());

    await Promise.all(
      Array.from({ length: 40 }, (_, i) => admin.create(pod(`burst-${String(i).padStart(2, '0')}`))),
    );
    await eventually(() => store.size === 40, 'every pod in the store');

    const delivered = batches.flat();
    expect(delivered.map((c) => `${c.type} ${c.object.metadata?.name}`).sort()).toEqual(
      Array.from({ length: 40 }, (_, i) => `ADDED burst-${String(i).padStart(2, '0')}`),
    );
    expect(batches.length).toBeLessThan(40);
    expect(store.version - versionBefore).toBe(batches.length);
    expect(names.value).toHaveLength(40);

    await admin.delete('Pod', 'burst-00', { namespace: 'default' });
    await eventually(() => names.value.length === 39, 'a computed over items to follow the delete');
    expect(batches.flat().at(-1)).toMatchObject({
      type: 'DELETED',
      object: { metadata: { name: 'burst-00' } },
    });
    unsubscribe();
    store.stop();
  });

  it("finds a node's pods through its index as pods are bound, moved and deleted", async () => {
    const admin = t.cp.client();
    await admin.create(pod('a1', {}, 'node-a'));
    await admin.create(pod('a2', {}, 'node-a'));
    await admin.create(pod('loose'));
    const store = usePods();
    store.start(bridge);
    const on = (node: string) =>
      store
        .indexed(node)
        .map((p) => p.metadata?.name)
        .sort()
        .join();
    await eventually(() => on('node-a') === 'a1,a2', 'the listed pods by node');
    expect(on('node-b')).toBe('');

    await admin.bind('default', 'loose', 'node-b');
    // Bound to a node without an agent, a pod goes only when deleted without a grace period.
    await admin.delete('Pod', 'a1', { namespace: 'default', gracePeriodSeconds: 0 });
    await eventually(() => on('node-b') === 'loose' && on('node-a') === 'a2', 'the index to follow');
    store.stop();
  });
});

describe('informer relist', () => {
  it('lists again when its resourceVersion was compacted, delivering gap deletions as deletions', async () => {
    await start({ historyMs: 1 });
    const admin = t.cp.client();
    await admin.create(pod('old'));
    const informer = new Informer<Pod>(bridge, 'Pod', { retryMs: 50 });
    const deleted: string[] = [];
    informer.onChange((changes) => {
      for (const c of changes) if (c.type === 'DELETED') deleted.push(c.object.metadata!.name!);
    });
    informer.start();
    await eventually(() => informer.items.size === 1, 'the list');
    expect(informer.relists).toBe(1);

    transport.cut();
    await admin.delete('Pod', 'old', { namespace: 'default' });
    for (let i = 0; i < 20; i++) await admin.create(pod(`churn-${i}`));
    // The watch cache keeps 1 ms of history here: the informer's version is now too old.
    await new Promise((r) => setTimeout(r, 20));
    transport.open();

    await eventually(() => informer.items.size === 20 && informer.status === 'live', 'the relisted state');
    expect(deleted).toEqual(['old']);
    expect(informer.relists).toBe(2);
    informer.stop();
  });
});
