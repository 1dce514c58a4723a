/**
 * The live tables' rows: kept sorted and filtered change by change, they must always equal a
 * full filter-and-sort of the current objects — through adds, changes that move a row, changes
 * that do not, deletions, filter and order changes, and batches large enough to rebuild.
 */
import { describe, expect, it } from 'vitest';
import type { Change } from '../../renderer/src/stores/informer.js';
import { SortedRows, type SortOrder } from '../../renderer/src/table/sortedrows.js';
import { compareKeys, naturalKey, sortKey } from '../../renderer/src/table/sortkey.js';

interface Row {
  metadata: { name: string; namespace: string; uid: string };
  restarts: number;
  phase: string;
}

const row = (name: string, restarts = 0, phase = 'Running', namespace = 'default'): Row => ({
  metadata: { name, namespace, uid: `${namespace}/${name}/${restarts}/${phase}` },
  restarts,
  phase,
});

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The truth: filter and sort everything from scratch. */
function expected(objects: Map<string, Row>, order: SortOrder<Row>, accept: (r: Row) => boolean): string[] {
  const key = (r: Row) => `${r.metadata.namespace}/${r.metadata.name}`;
  return [...objects.values()]
    .filter(accept)
    .sort(
      (a, b) =>
        (order.descending ? -1 : 1) * compareKeys(sortKey(order.value(a)), sortKey(order.value(b))) ||
        (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0),
    )
    .map(key);
}

const names = (rows: SortedRows<Row>) => rows.all().map((r) => `${r.metadata.namespace}/${r.metadata.name}`);

describe('sort keys', () => {
  it('sorts text naturally and without regard to case, numbers as numbers, numbers before text', () => {
    const sorted = ['node-10', 'Node-9', 'node-1', 'node-2b', 'node-2a'].sort((a, b) =>
      compareKeys(naturalKey(a), naturalKey(b)),
    );
    expect(sorted).toEqual(['node-1', 'node-2a', 'node-2b', 'Node-9', 'node-10']);
    expect([10, 9, 100].map(sortKey).sort(compareKeys)).toEqual([9, 10, 100]);
    expect(compareKeys(sortKey(3), sortKey('a'))).toBe(-1);
    expect(sortKey(undefined)).toBe('');
  });
});

describe('SortedRows', () => {
  const byName: SortOrder<Row> = { value: (r) => r.metadata.name, descending: false };
  const byRestarts: SortOrder<Row> = { value: (r) => r.restarts, descending: true };

  it('builds from the source, sorted, with ties broken by namespace/name', () => {
    const objects = [row('b', 1), row('a', 1, 'Running', 'zeta'), row('a', 1), row('c', 5)];
    const rows = new SortedRows<Row>(() => objects, byRestarts);
    expect(names(rows)).toEqual(['default/c', 'default/a', 'default/b', 'zeta/a']);
    expect(rows.indexOfKey('default/b')).toBe(2);
    expect(rows.indexOfKey('default/missing')).toBe(-1);
  });

  it('follows adds, moves, in-place changes and deletes one by one', () => {
    const objects = new Map<string, Row>();
    const put = (r: Row): Change<Row> => {
      const type = objects.has(`default/${r.metadata.name}`) ? 'MODIFIED' : 'ADDED';
      objects.set(`default/${r.metadata.name}`, r);
      return { type, object: r };
    };
    const rows = new SortedRows<Row>(
      () => objects.values(),
      byRestarts,
      (r) => r.phase !== 'Failed',
    );
    rows.apply([put(row('a', 1)), put(row('b', 2)), put(row('c', 3))]);
    expect(names(rows)).toEqual(['default/c', 'default/b', 'default/a']);

    const stillSecond = row('b', 2, 'Pending');
    rows.apply([put(stillSecond)]);
    expect(rows.at(1)).toBe(stillSecond);

    rows.apply([put(row('a', 9))]);
    expect(names(rows)).toEqual(['default/a', 'default/c', 'default/b']);

    rows.apply([put(row('c', 3, 'Failed'))]);
    expect(names(rows)).toEqual(['default/a', 'default/b']);
    rows.apply([put(row('c', 4, 'Running'))]);
    expect(names(rows)).toEqual(['default/a', 'default/c', 'default/b']);

    const gone = objects.get('default/a')!;
    objects.delete('default/a');
    rows.apply([{ type: 'DELETED', object: gone }]);
    expect(names(rows)).toEqual(['default/c', 'default/b']);
    expect(rows.length).toBe(2);
  });

  it('re-sorts a row handed again unchanged, whose sort value comes from elsewhere', () => {
    // A node's heartbeat comes from its Lease: the node object stays, its sort value moves.
    const heartbeats = new Map([
      ['a', 30],
      ['b', 20],
      ['c', 10],
    ]);
    const objects = [row('a'), row('b'), row('c')];
    const byHeartbeat: SortOrder<Row> = { value: (r) => heartbeats.get(r.metadata.name), descending: false };
    const rows = new SortedRows<Row>(() => objects, byHeartbeat);
    expect(names(rows)).toEqual(['default/c', 'default/b', 'default/a']);

    heartbeats.set('c', 40);
    rows.apply([{ type: 'MODIFIED', object: objects[2] }]);
    expect(names(rows)).toEqual(['default/b', 'default/a', 'default/c']);

    // A batch large enough to rebuild reads them all afresh too.
    heartbeats.set('a', 0);
    const many = Array.from({ length: 300 }, () => ({ type: 'MODIFIED' as const, object: objects[0] }));
    rows.apply(many);
    expect(names(rows)).toEqual(['default/a', 'default/b', 'default/c']);
  });

  it('matches a full sort after thousands of random changes, small batches and large', () => {
    const next = random(7);
    const objects = new Map<string, Row>();
    let order: SortOrder<Row> = byRestarts;
    let accept = (r: Row) => r.phase !== 'Failed';
    const rows = new SortedRows<Row>(() => objects.values(), order, accept);
    const phases = ['Running', 'Pending', 'Failed', 'Succeeded'];
    for (let round = 0; round < 60; round++) {
      // Mostly small batches (one by one); now and then one big enough to rebuild.
      const size = round % 15 === 14 ? 600 : 1 + Math.floor(next() * 20);
      const batch: Change<Row>[] = [];
      for (let i = 0; i < size; i++) {
        const name = `pod-${Math.floor(next() * 400)}`;
        const key = `default/${name}`;
        if (objects.has(key) && next() < 0.25) {
          batch.push({ type: 'DELETED', object: objects.get(key)! });
          objects.delete(key);
          continue;
        }
        const r = row(name, Math.floor(next() * 6), phases[Math.floor(next() * phases.length)]);
        batch.push({ type: objects.has(key) ? 'MODIFIED' : 'ADDED', object: r });
        objects.set(key, r);
      }
      rows.apply(batch);
      expect(names(rows)).toEqual(expected(objects, order, accept));
      if (round === 20) {
        order = byName;
        rows.setOrder(order);
      }
      if (round === 40) {
        accept = (r: Row) => r.phase === 'Running';
        rows.setFilter(accept);
      }
      expect(names(rows)).toEqual(expected(objects, order, accept));
    }
  });
});
