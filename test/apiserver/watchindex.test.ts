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

it('lists by an indexed field exactly what matching every object gives, in key order, through moves, deletes and pages', () => {
  let rv = 0;
  const cache = new WatchCache(podInfo, getField, { historyMs: 60_000, historyMax: 100_000, now: () => 0 });
  const names = Array.from({ length: 300 }, (_, i) => `p${String(i).padStart(3, '0')}`);
  const nodes = ['', 'n1', 'n2', 'n3'];
  const current = new Map<string, CachedObject>();
  // Start from a reset with some objects, then churn.
  cache.reset(
    names.slice(0, 100).map((n, i) => {
      const p = pod(n, ++rv, nodes[i % nodes.length] || undefined);
      current.set(p.key, p);
      return p;
    }),
    rv,
  );
  const resetRv = rv;
  let seed = 7;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const scan = (nodeName: string, namespace?: string) =>
    [...current.values()]
      .filter((p) => ((p.object as Pod).spec?.nodeName ?? '') === nodeName)
      .filter((p) => !namespace || p.object.metadata?.namespace === namespace)
      .map((p) => p.key)
      .sort();
  for (let step = 0; step < 2000; step++) {
    const name = names[random(names.length)];
    const key = `/pods/default/${name}`;
    const old = current.get(key);
    if (old && random(4) === 0) {
      const gone = pod(name, ++rv, (old.object as Pod).spec?.nodeName);
      cache.apply([{ type: 'DELETED', rv, cur: gone, prev: old, at: 0 }]);
      current.delete(key);
    } else {
      const next = pod(name, ++rv, nodes[random(nodes.length)] || undefined);
      cache.apply([{ type: old ? 'MODIFIED' : 'ADDED', rv, cur: next, prev: old, at: 0 }]);
      current.set(key, next);
    }
    if (step % 50 === 0) {
      // The unfiltered list keeps key order without being rebuilt.
      expect(cache.list({}).items.map((i) => i.key)).toEqual([...current.keys()].sort());
      for (const n of nodes) {
        const fields = parseFieldSelector(`spec.nodeName=${n}`);
        expect(
          cache.list({ fields }).items.map((i) => i.key),
          `node "${n}" at step ${step}`,
        ).toEqual(scan(n));
        expect(cache.list({ fields, namespace: 'other' }).items).toEqual([]);
      }
    }
  }
  // Pages over an indexed list: limit and afterKey walk it in order.
  const fields = parseFieldSelector('spec.nodeName=n2');
  const want = scan('n2');
  const got: string[] = [];
  let afterKey: string | undefined;
  for (;;) {
    const page = cache.list({ fields }, { afterKey, limit: 7 });
    got.push(...page.items.map((i) => i.key));
    if (!page.more) break;
    afterKey = page.items.at(-1)!.key;
  }
  expect(got).toEqual(want);
  // An index and a second requirement: the index narrows, the filter decides.
  const one = want[0].split('/').at(-1)!;
  expect(
    cache
      .list({ fields: parseFieldSelector(`spec.nodeName=n2,metadata.name=${one}`) })
      .items.map((i) => i.key),
  ).toEqual([want[0]]);
  expect(cache.list({ fields: parseFieldSelector(`metadata.name=${one}`) }).items.map((i) => i.key)).toEqual([
    want[0],
  ]);
  expect(cache.list({ fields: parseFieldSelector('spec.nodeName=nowhere') }).items).toEqual([]);

  // A watch resumed from the reset replays, for each node, what a selector saying the same
  // without an exact value (so not indexed) replays: the indexed replay skips nothing it needs.
  const replay = (selector: string) => {
    const r = recorder();
    cache.watch(
      { initialEvents: false, fromRevision: resetRv, bookmarks: false },
      { fields: parseFieldSelector(selector) },
      r.sink,
    );
    return r.seen;
  };
  let replayed = 0;
  for (const n of nodes) {
    const unindexed = nodes
      .filter((o) => o !== n)
      .map((o) => `spec.nodeName!=${o}`)
      .join(',');
    const indexed = replay(`spec.nodeName=${n}`);
    replayed += indexed.length;
    expect(indexed, `node "${n}"`).toEqual(replay(unindexed));
  }
  expect(replayed).toBeGreaterThan(1000);
});
