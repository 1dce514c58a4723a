/**
 * The watch history keeps superseded versions retired (their JSON and what selectors read, not
 * the decoded object): a watch resuming from an old resourceVersion still sees every version,
 * filtered exactly as a live watch would have been, with the object as it was written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { kindInfo } from '../../client/api/kinds.js';
import { parseFieldSelector, parseLabelSelector } from '../../client/api/selectors.js';
import type { KubeObject, Pod } from '../../client/api/types.js';
import { Cacher } from '../../main/apiserver/cacher.js';
import { CacheEntry } from '../../main/apiserver/cacheentry.js';
import { decodeStored, encodeForStore } from '../../main/apiserver/codec.js';
import { WatchCache, type CachedObject, type WatchSink } from '../../main/apiserver/watchcache.js';
import { silentLogger } from '../../main/logging.js';
import { openSqliteStorage } from '../../main/storage/sqlite.js';
import { realClock } from '../../client/util/clock.js';
import { startTestApiServer } from '../support/apiserver.js';

const podInfo = kindInfo('Pod');
const SELECTABLE = ['metadata.name', 'metadata.namespace', 'spec.nodeName'];
const getField = (obj: KubeObject, field: string): string | undefined => {
  if (field === 'metadata.name') return obj.metadata?.name ?? '';
  if (field === 'metadata.namespace') return obj.metadata?.namespace ?? '';
  if (field === 'spec.nodeName') return (obj as Pod).spec?.nodeName;
  return undefined;
};

function podJson(name: string, app: string, nodeName: string, note: string): string {
  return encodeForStore({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app }, annotations: { note } },
    spec: { nodeName, containers: [{ name: 'c', command: ['x'] }] },
  } as Pod);
}

function recorder(): { sink: WatchSink; seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    sink: {
      event(type, entry) {
        seen.push(`${type} ${entry.object.metadata?.annotations?.note}`);
        return true;
      },
      bookmark: () => undefined,
      end: () => undefined,
    },
  };
}

it('retires a version once a newer one supersedes it, and replays it from what it kept', () => {
  const cache = new WatchCache(podInfo, getField, {
    historyMs: 60_000,
    historyMax: 1000,
    now: () => 0,
    selectableFields: SELECTABLE,
  });
  const key = '/registry/pods/default/p';
  const version = (rv: number, app: string, node: string, note: string) =>
    new CacheEntry(key, decodeStored(podJson('p', app, node, note), rv), rv);
  const v1 = version(2, 'a', 'n1', 'v1');
  const v2 = version(3, 'b', 'n1', 'v2');
  const v3 = version(4, 'a', 'n2', 'v3');
  cache.reset([], 1);
  cache.apply([{ type: 'ADDED', rv: 2, cur: v1, at: 0 }]);
  cache.apply([{ type: 'MODIFIED', rv: 3, cur: v2, prev: v1, at: 0 }]);
  expect(v1.selection).toEqual({ labels: { app: 'a' }, fields: ['p', 'default', 'n1'] });
  expect(v2.selection).toBeUndefined();
  cache.apply([{ type: 'MODIFIED', rv: 4, cur: v3, prev: v2, at: 0 }]);
  // The delete's last state is the version it removed, retired at once.
  const gone = version(5, 'a', 'n2', 'deleted');
  cache.apply([{ type: 'DELETED', rv: 5, cur: gone, prev: v3, at: 0 }]);
  expect([v2.selection, v3.selection, gone.selection].every((s) => s !== undefined)).toBe(true);

  // Retired, the versions read back as written, with their resourceVersions.
  expect(v1.object.metadata?.annotations?.note).toBe('v1');
  expect(v1.object.metadata?.resourceVersion).toBe('2');
  expect(Object.isFrozen(v1.object)).toBe(true);

  const byLabel = recorder();
  cache.watch(
    { initialEvents: false, fromRevision: 1, bookmarks: false },
    { labels: parseLabelSelector('app=a') },
    byLabel.sink,
  );
  expect(byLabel.seen).toEqual(['ADDED v1', 'DELETED v2', 'ADDED v3', 'DELETED deleted']);
  const byNode = recorder();
  cache.watch(
    { initialEvents: false, fromRevision: 1, bookmarks: false },
    { fields: parseFieldSelector('spec.nodeName=n1') },
    byNode.sink,
  );
  expect(byNode.seen).toEqual(['ADDED v1', 'MODIFIED v2', 'DELETED v3']);
  const otherNamespace = recorder();
  cache.watch(
    { initialEvents: false, fromRevision: 1, bookmarks: false },
    { namespace: 'kube-system' },
    otherNamespace.sink,
  );
  expect(otherNamespace.seen).toEqual([]);
});

it('a key written twice in one batch of the store is ADDED then MODIFIED to a watcher', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-wh-'));
  const storage = await openSqliteStorage({ path: join(dir, 'state.db'), compactIntervalMs: 0 });
  const cacher = new Cacher(storage, [{ info: podInfo, getField, selectableFields: SELECTABLE }], {
    clock: realClock,
    logger: silentLogger(),
  });
  try {
    await cacher.start();
    const seen: string[] = [];
    const entries: CachedObject[] = [];
    cacher.cache(podInfo).watch(
      { initialEvents: false, bookmarks: false },
      {},
      {
        event(type, entry) {
          seen.push(`${type} ${entry.object.metadata?.annotations?.note}`);
          entries.push(entry);
          return true;
        },
        bookmark: () => undefined,
        end: () => undefined,
      },
    );
    const key = '/registry/pods/default/twice';
    const rev = await storage.currentRevision();
    // Issued in one turn: the store commits them together and hands them out as one batch.
    const writes = [
      storage.create(key, podJson('twice', 'a', 'n1', 'first')),
      storage.update(key, podJson('twice', 'a', 'n1', 'second'), rev + 1),
    ];
    await Promise.all(writes);
    expect(await cacher.waitFor(rev + 2)).toBe(true);
    expect(seen).toEqual(['ADDED first', 'MODIFIED second']);
    // The first version, superseded within the batch, is retired too.
    expect(entries[0].selection).toBeDefined();
    expect(entries[1].selection).toBeUndefined();
  } finally {
    cacher.stop();
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it('a resumed watch through the apiserver sees superseded versions as they were written', async () => {
  const t = await startTestApiServer();
  try {
    const created = await t.admin.create<Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'r', labels: { app: 'a' }, annotations: { note: 'one' } },
      spec: { containers: [{ name: 'c', command: ['x'] }] },
    });
    let current = created;
    for (const note of ['two', 'three']) {
      current = await t.admin.update({
        ...current,
        metadata: { ...current.metadata, annotations: { note } },
      });
    }
    const w = await t.admin.watch('Pod', {
      resourceVersion: String(Number(created.metadata!.resourceVersion) - 1),
      labelSelector: 'app=a',
    });
    const notes: string[] = [];
    const rvs: string[] = [];
    for await (const ev of w) {
      if (ev.type === 'BOOKMARK') continue;
      notes.push(`${ev.type} ${ev.object.metadata?.annotations?.note}`);
      rvs.push(ev.object.metadata!.resourceVersion!);
      if (notes.length === 3) break;
    }
    w.stop();
    expect(notes).toEqual(['ADDED one', 'MODIFIED two', 'MODIFIED three']);
    expect(rvs[2]).toBe(current.metadata!.resourceVersion);
    expect(Number(rvs[0])).toBe(Number(created.metadata!.resourceVersion));
  } finally {
    await t.close();
  }
});
