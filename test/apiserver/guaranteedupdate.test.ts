/**
 * Updates and patches built on the watch cache's copy of an object, when that copy is behind
 * the store: two replicas on one etcd, the second one's watch held so that its cache has not
 * seen what was just written through the first (on etcd it always learns a write a moment
 * after the write is acknowledged; holding the watch makes that moment as long as the test
 * needs). Whatever fails on the cache's copy must be tried again on the store's, as
 * Kubernetes' GuaranteedUpdate does, and only a failure on the store's copy is the answer.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Node } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { openEtcdStorage } from '../../main/storage/etcd.js';
import type { Storage, WatchCallbacks } from '../../main/storage/types.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';

/** A store whose watch can be held: what it would deliver waits, in order, until released. */
function holdableWatch(inner: Storage): { storage: Storage; hold(): void; release(): void } {
  let held: Array<() => void> | undefined;
  const later = (deliver: () => void) => (held ? held.push(deliver) : deliver());
  const storage: Storage = {
    backend: inner.backend,
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    create: (key, value) => inner.create(key, value),
    update: (key, value, rev) => inner.update(key, value, rev),
    delete: (key, rev) => inner.delete(key, rev),
    watch: (prefix, from, callbacks: WatchCallbacks) =>
      inner.watch(prefix, from, {
        onEvents: (events) => later(() => callbacks.onEvents(events)),
        // Progress is held too: a cache must not claim a revision whose events it lacks.
        ...(callbacks.onProgress
          ? { onProgress: (rv: number) => later(() => callbacks.onProgress?.(rv)) }
          : {}),
        onError: (err) => later(() => callbacks.onError(err)),
      }),
    currentRevision: () => inner.currentRevision(),
    compactedRevision: () => inner.compactedRevision(),
    compact: (rev) => inner.compact(rev),
    close: () => inner.close(),
  };
  return {
    storage,
    hold() {
      held ??= [];
    },
    release() {
      const pending = held ?? [];
      held = undefined;
      for (const deliver of pending) deliver();
    },
  };
}

let etcd: EtcdServer;
beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd?.stop();
});

let prefixes = 0;
const open: TestApiServer[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

/** Two replicas on one etcd; the second one's cache can be held behind the store. */
async function replicas(): Promise<{ first: Client; second: Client; hold(): void; release(): void }> {
  const prefix = `/guaranteed-update-${++prefixes}`;
  const a = await startTestApiServer({
    storage: await openEtcdStorage({ endpoints: [etcd.endpoint], prefix }),
  });
  open.push(a);
  const held = holdableWatch(await openEtcdStorage({ endpoints: [etcd.endpoint], prefix }));
  const b = await startTestApiServer({ storage: held.storage });
  open.push(b);
  return { first: a.admin, second: b.admin, hold: held.hold, release: held.release };
}

/** Creates a node through `first` and waits until `second`'s cache has it. */
async function nodeSeenByBoth(first: Client, second: Client, labels: Record<string, string>): Promise<Node> {
  const created = await first.create<Node>({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'lab-1', labels },
  });
  // A read at a resourceVersion waits for the cache to reach it, then answers from the cache.
  await second.get('Node', 'lab-1', { resourceVersion: created.metadata!.resourceVersion });
  return created;
}

describe('an update built on a cache that is behind the store', () => {
  it('accepts a JSON patch whose test and remove hold in the store, not yet in the cache', async () => {
    const { first, second, hold, release } = await replicas();
    await nodeSeenByBoth(first, second, { 'kubernetes.io/os': 'linux' });
    hold();
    await first.patch('Node', 'lab-1', { metadata: { labels: { 'beta.kubernetes.io/os': 'linux' } } });

    // As the node lifecycle controller does: change the copied label only while it still has
    // the copied value.
    const guarded = await second.patch(
      'Node',
      'lab-1',
      [
        { op: 'test', path: '/metadata/labels/beta.kubernetes.io~1os', value: 'linux' },
        { op: 'add', path: '/metadata/labels/tier', value: 'edge' },
      ],
      { type: 'json' },
    );
    expect(guarded.metadata?.labels).toEqual({
      'kubernetes.io/os': 'linux',
      'beta.kubernetes.io/os': 'linux',
      tier: 'edge',
    });
    // A field this replica itself added a moment ago is not in its cache either.
    const removed = await second.patch(
      'Node',
      'lab-1',
      [
        { op: 'remove', path: '/metadata/labels/tier' },
        { op: 'remove', path: '/metadata/labels/beta.kubernetes.io~1os' },
      ],
      { type: 'json' },
    );
    expect(removed.metadata?.labels).toEqual({ 'kubernetes.io/os': 'linux' });
    // A dry run answers from the store as well.
    await first.patch('Node', 'lab-1', { metadata: { labels: { zone: 'attic' } } });
    const tried = await second.patch('Node', 'lab-1', [{ op: 'remove', path: '/metadata/labels/zone' }], {
      type: 'json',
      dryRun: true,
    });
    expect(tried.metadata?.labels).toEqual({ 'kubernetes.io/os': 'linux' });
    release();
    expect((await first.get('Node', 'lab-1')).metadata?.labels).toEqual({
      'kubernetes.io/os': 'linux',
      zone: 'attic',
    });
  });

  it('writes a patch that restores a value the other replica just changed, instead of finding nothing to change', async () => {
    const { first, second, hold, release } = await replicas();
    await nodeSeenByBoth(first, second, { mode: 'auto' });
    hold();
    const changed = await first.patch('Node', 'lab-1', { metadata: { labels: { mode: 'manual' } } });
    // The cache still says "auto": compared with it, the patch changes nothing.
    const restored = await second.patch('Node', 'lab-1', { metadata: { labels: { mode: 'auto' } } });
    expect(restored.metadata?.labels).toEqual({ mode: 'auto' });
    expect(Number(restored.metadata?.resourceVersion)).toBeGreaterThan(
      Number(changed.metadata?.resourceVersion),
    );
    release();
    expect((await first.get('Node', 'lab-1')).metadata?.labels).toEqual({ mode: 'auto' });
  });

  it('refuses what fails on the store’s copy, even when the cache’s copy would pass', async () => {
    const { first, second, hold, release } = await replicas();
    await nodeSeenByBoth(first, second, { mode: 'auto' });
    hold();
    // Nothing written since the cache saw it: the cache's answer stands.
    await expect(
      second.patch('Node', 'lab-1', [{ op: 'test', path: '/metadata/labels/mode', value: 'manual' }], {
        type: 'json',
      }),
    ).rejects.toMatchObject({ reason: 'BadRequest' });
    // Written meanwhile, and still not what the test expects.
    const changed = await first.patch('Node', 'lab-1', { metadata: { labels: { mode: 'manual' } } });
    await expect(
      second.patch('Node', 'lab-1', [{ op: 'test', path: '/metadata/labels/mode', value: 'auto' }], {
        type: 'json',
      }),
    ).rejects.toMatchObject({ reason: 'BadRequest' });
    // A pinned update from before the other replica's write is a conflict, one from after it is not.
    const stale: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'lab-1', resourceVersion: '1' } };
    await expect(second.update(stale)).rejects.toMatchObject({ reason: 'Conflict' });
    const pinned = await second.update<Node>({
      ...changed,
      metadata: { ...changed.metadata, labels: { mode: 'pinned' } },
    });
    expect(pinned.metadata?.labels).toEqual({ mode: 'pinned' });
    release();
  });
});
