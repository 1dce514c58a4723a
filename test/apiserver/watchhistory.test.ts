/**
 * The watch history keeps superseded versions sharing what did not change with the next one,
 * without their wire encodings: a watch resuming from an old resourceVersion still sees every
 * version, filtered exactly as a live watch would have been, with the object as it was written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { kindInfo } from '../../client/api/kinds.js';
import { parseFieldSelector, parseLabelSelector } from '../../client/api/selectors.js';
import type { KubeObject, Pod } from '../../client/api/types.js';
import { Cacher } from '../../main/apiserver/cacher.js';
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

it('a new version shares what did not change with the one it replaces, and a replay sees every version as written', () => {
  const cache = new WatchCache(podInfo, getField, {
    historyMs: 60_000,
    historyMax: 1000,
    now: () => 0,
    selectableFields: SELECTABLE,
  });
  const key = '/registry/pods/default/p';
  let last: KubeObject | undefined;
  const version = (rv: number, app: string, node: string, note: string): CachedObject => {
    last = decodeStored(podJson('p', app, node, note), rv, last);
    return { key, object: last, rv };
  };
  const v1 = version(2, 'a', 'n1', 'v1');
  const v2 = version(3, 'b', 'n1', 'v2');
  const v3 = version(4, 'a', 'n2', 'v3');
  // Unchanged parts are the same objects; changed ones, and the paths to them, are new.
  expect((v2.object as Pod).spec).toBe((v1.object as Pod).spec);
  expect((v2.object as Pod).spec?.containers).toBe((v1.object as Pod).spec?.containers);
  expect(v2.object.metadata?.labels).not.toBe(v1.object.metadata?.labels);
  expect(v3.object.metadata?.labels).toEqual({ app: 'a' });
  expect((v3.object as Pod).spec).not.toBe((v2.object as Pod).spec);
  expect((v3.object as Pod).spec?.containers).toBe((v1.object as Pod).spec?.containers);
  // Each version still reads as written, frozen, with its own resourceVersion.
  expect(JSON.parse(JSON.stringify(v2.object))).toEqual({
    ...JSON.parse(podJson('p', 'b', 'n1', 'v2')),
    metadata: { ...JSON.parse(podJson('p', 'b', 'n1', 'v2')).metadata, resourceVersion: '3' },
  });
  expect(Object.isFrozen((v3.object as Pod).spec)).toBe(true);

  cache.reset([], 1);
  // A watcher's encodings are kept with the entry while it is current, dropped once superseded.
  v1.memo = { encoded: 'v1' };
  cache.apply([{ type: 'ADDED', rv: 2, cur: v1, at: 0 }]);
  expect(v1.memo).toBeDefined();
  cache.apply([{ type: 'MODIFIED', rv: 3, cur: v2, prev: v1, at: 0 }]);
  expect(v1.memo).toBeUndefined();
  cache.apply([{ type: 'MODIFIED', rv: 4, cur: v3, prev: v2, at: 0 }]);
  const gone = version(5, 'a', 'n2', 'deleted');
  cache.apply([{ type: 'DELETED', rv: 5, cur: gone, prev: v3, at: 0 }]);

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
    // The second version was decoded sharing with the first, written in the same batch.
    expect((entries[1].object as Pod).spec).toBe((entries[0].object as Pod).spec);
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
