/**
 * Watchers filed by the exact field value they require (a node's agent watching its pods by
 * spec.nodeName, its Node by metadata.name) see exactly what an unindexed filter would show
 * them: objects entering their selection as ADDED, leaving it as DELETED.
 */
import { expect, it } from 'vitest';
import { kindInfo } from '../../client/api/kinds.js';
import { parseFieldSelector } from '../../client/api/selectors.js';
import type { KubeObject, Pod } from '../../client/api/types.js';
import {
  WatchCache,
  type CachedObject,
  type CacheEvent,
  type WatchSink,
} from '../../main/apiserver/watchcache.js';

const podInfo = kindInfo('Pod');
const getField = (obj: KubeObject, field: string): string | undefined => {
  if (field === 'metadata.name') return obj.metadata?.name;
  if (field === 'spec.nodeName') return (obj as Pod).spec?.nodeName;
  return undefined;
};

function pod(name: string, rv: number, nodeName?: string): CachedObject {
  const object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', resourceVersion: String(rv) },
    spec: { containers: [{ name: 'c', command: ['x'] }], ...(nodeName ? { nodeName } : {}) },
  } as Pod;
  return { key: `/pods/default/${name}`, object, rv };
}

function recorder(): { sink: WatchSink; seen: string[]; ended: boolean[] } {
  const seen: string[] = [];
  const ended: boolean[] = [];
  return {
    seen,
    ended,
    sink: {
      event(type, obj) {
        seen.push(`${type} ${obj.object.metadata?.name}@${(obj.object as Pod).spec?.nodeName ?? '-'}`);
        return true;
      },
      bookmark: () => undefined,
      end: () => ended.push(true),
    },
  };
}

function watchFields(cache: WatchCache, selector: string) {
  const r = recorder();
  const handle = cache.watch(
    { initialEvents: false, bookmarks: false },
    { fields: parseFieldSelector(selector) },
    r.sink,
  );
  return { ...r, handle };
}

it('delivers to the watchers of the node a pod is bound to, moves between nodes, and everyone else unfiltered', () => {
  let rv = 0;
  const cache = new WatchCache(podInfo, getField, { historyMs: 60_000, historyMax: 1000, now: () => 0 });
  cache.reset([], 0);
  const perNode = Array.from({ length: 200 }, (_, i) => watchFields(cache, `spec.nodeName=n${i}`));
  const unbound = watchFields(cache, 'spec.nodeName=');
  const notN1 = watchFields(cache, 'spec.nodeName!=n1');
  const byName = watchFields(cache, 'metadata.name=web');
  const both = watchFields(cache, 'metadata.name=web,spec.nodeName=n2');

  const events: CacheEvent[] = [];
  const step = (type: CacheEvent['type'], cur: CachedObject, prev?: CachedObject) => {
    const e: CacheEvent = { type, rv: cur.rv, cur, prev, at: 0 };
    events.push(e);
    cache.apply([e]);
  };
  const created = pod('web', ++rv);
  step('ADDED', created);
  const onN1 = pod('web', ++rv, 'n1');
  step('MODIFIED', onN1, created);
  const onN2 = pod('web', ++rv, 'n2');
  step('MODIFIED', onN2, onN1);
  const other = pod('db', ++rv, 'n2');
  step('ADDED', other);
  step('DELETED', pod('web', ++rv, 'n2'), onN2);

  expect(unbound.seen).toEqual(['ADDED web@-', 'DELETED web@n1']);
  expect(perNode[1].seen).toEqual(['ADDED web@n1', 'DELETED web@n2']);
  expect(perNode[2].seen).toEqual(['ADDED web@n2', 'ADDED db@n2', 'DELETED web@n2']);
  for (const [i, w] of perNode.entries()) if (i !== 1 && i !== 2) expect(w.seen, `n${i}`).toEqual([]);
  expect(notN1.seen).toEqual([
    'ADDED web@-',
    'DELETED web@n1',
    'ADDED web@n2',
    'ADDED db@n2',
    'DELETED web@n2',
  ]);
  expect(byName.seen).toEqual(['ADDED web@-', 'MODIFIED web@n1', 'MODIFIED web@n2', 'DELETED web@n2']);
  expect(both.seen).toEqual(['ADDED web@n2', 'DELETED web@n2']);

  // A stopped watcher hears nothing more; the others still do.
  perNode[2].handle.stop();
  step('MODIFIED', pod('db', ++rv, 'n2'), other);
  expect(perNode[2].seen).toHaveLength(3);
  expect(notN1.seen.at(-1)).toBe('MODIFIED db@n2');
  expect(cache.watcherCount).toBe(203);

  // A watch resumed from the start replays the window with the same filing.
  const late = recorder();
  cache.watch(
    { initialEvents: false, fromRevision: 0, bookmarks: false },
    { fields: parseFieldSelector('spec.nodeName=n1') },
    late.sink,
  );
  expect(late.seen).toEqual(['ADDED web@n1', 'DELETED web@n2']);

  // Closing ends filed and unfiled watchers alike.
  cache.close();
  expect(perNode[0].ended).toEqual([true]);
  expect(notN1.ended).toEqual([true]);
  expect(late.ended).toEqual([true]);
  expect(cache.watcherCount).toBe(0);
});
