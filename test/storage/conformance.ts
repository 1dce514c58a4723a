/**
 * One conformance suite for every Storage backend. Each backend's test file calls
 * `storageConformance` with a factory; the same expectations hold for sqlite and etcd.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  isStorageError,
  type Storage,
  type StorageError,
  type StorageEvent,
} from '../../main/storage/types.js';
import { eventually } from '../support/wait.js';

export interface StorageHarness {
  storage: Storage;
  /** Closes the storage and opens it again on the same data. */
  restart(): Promise<Storage>;
  cleanup(): Promise<void>;
}

export type HarnessFactory = () => Promise<StorageHarness>;

function collect(storage: Storage, prefix: string, from: number) {
  const events: StorageEvent[] = [];
  const errors: StorageError[] = [];
  const handle = storage.watch(prefix, from, {
    onEvents: (batch) => events.push(...batch),
    onError: (err) => errors.push(err),
  });
  return { events, errors, handle };
}

async function expectCode(p: Promise<unknown>, code: string): Promise<StorageError> {
  try {
    await p;
  } catch (err) {
    expect(isStorageError(err), String(err)).toBe(true);
    expect((err as StorageError).code).toBe(code);
    return err as StorageError;
  }
  throw new Error(`expected a ${code} error`);
}

export function storageConformance(name: string, factory: HarnessFactory): void {
  describe(`storage conformance: ${name}`, () => {
    let h: StorageHarness;
    let s: Storage;
    beforeEach(async () => {
      h = await factory();
      s = h.storage;
    });
    afterEach(async () => {
      await h.cleanup();
    });

    it('creates and gets a key; revisions strictly increase', async () => {
      const a = await s.create('/r/a', 'one');
      const b = await s.create('/r/b', 'two');
      expect(a.createRevision).toBe(a.modRevision);
      expect(b.modRevision).toBeGreaterThan(a.modRevision);
      expect(await s.get('/r/a')).toEqual({
        key: '/r/a',
        value: 'one',
        createRevision: a.modRevision,
        modRevision: a.modRevision,
      });
      expect(await s.get('/r/missing')).toBeUndefined();
      expect(await s.currentRevision()).toBeGreaterThanOrEqual(b.modRevision);
    });

    it('refuses to create an existing key', async () => {
      await s.create('/r/a', 'one');
      await expectCode(s.create('/r/a', 'again'), 'KeyExists');
      expect((await s.get('/r/a'))?.value).toBe('one');
    });

    it('lets exactly one of many concurrent creates of a key win', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => s.create('/r/race', `v${i}`)),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results)
        if (r.status === 'rejected') expect(isStorageError(r.reason, 'KeyExists')).toBe(true);
    });

    it('updates with compare-and-swap on the modRevision', async () => {
      const a = await s.create('/r/a', 'one');
      const a2 = await s.update('/r/a', 'two', a.modRevision);
      expect(a2.modRevision).toBeGreaterThan(a.modRevision);
      expect(a2.createRevision).toBe(a.createRevision);
      const conflict = await expectCode(s.update('/r/a', 'three', a.modRevision), 'Conflict');
      expect(conflict.details.current?.value).toBe('two');
      expect(conflict.details.current?.modRevision).toBe(a2.modRevision);
      expect((await s.get('/r/a'))?.value).toBe('two');
      await expectCode(s.update('/r/none', 'x', a.modRevision), 'NotFound');
    });

    it('deletes with an expected revision', async () => {
      const a = await s.create('/r/a', 'one');
      const a2 = await s.update('/r/a', 'two', a.modRevision);
      await expectCode(s.delete('/r/a', a.modRevision), 'Conflict');
      expect((await s.get('/r/a'))?.value).toBe('two');
      const gone = await s.delete('/r/a', a2.modRevision);
      expect(gone.value).toBe('two');
      expect(gone.modRevision).toBeGreaterThan(a2.modRevision);
      expect(await s.get('/r/a')).toBeUndefined();
      await expectCode(s.delete('/r/a'), 'NotFound');
      const again = await s.create('/r/a', 'reborn');
      expect(again.createRevision).toBeGreaterThan(gone.modRevision);
    });

    it('lists by prefix, sorted, now and at a past revision, with pages', async () => {
      await s.create('/r/pods/b', 'b1');
      const a = await s.create('/r/pods/a', 'a1');
      await s.create('/r/podsx/z', 'not under the prefix');
      await s.create('/r/nodes/n', 'n1');
      const past = await s.currentRevision();
      await s.update('/r/pods/a', 'a2', a.modRevision);
      await s.delete('/r/pods/b');
      await s.create('/r/pods/c', 'c1');

      const now = await s.list('/r/pods/');
      expect(now.items.map((kv) => [kv.key, kv.value])).toEqual([
        ['/r/pods/a', 'a2'],
        ['/r/pods/c', 'c1'],
      ]);
      expect(now.revision).toBe(await s.currentRevision());

      const then = await s.list('/r/pods/', { revision: past });
      expect(then.revision).toBe(past);
      expect(then.items.map((kv) => [kv.key, kv.value])).toEqual([
        ['/r/pods/a', 'a1'],
        ['/r/pods/b', 'b1'],
      ]);
      expect(then.items[0].modRevision).toBe(a.modRevision);

      const page1 = await s.list('/r/', { revision: past, limit: 2 });
      expect(page1.items.map((kv) => kv.key)).toEqual(['/r/nodes/n', '/r/pods/a']);
      expect(page1.remaining).toBe(2);
      const page2 = await s.list('/r/', { revision: past, limit: 2, startKey: page1.items[1].key + '\0' });
      expect(page2.items.map((kv) => kv.key)).toEqual(['/r/pods/b', '/r/podsx/z']);
      expect(page2.remaining).toBe(0);
    });

    it('watches from a revision (exclusive), delivering every later event in order', async () => {
      const a = await s.create('/w/a', 'a1');
      const from = a.modRevision;
      const a2 = await s.update('/w/a', 'a2', a.modRevision);
      const b = await s.create('/w/b', 'b1');
      await s.create('/other/x', 'outside the prefix');
      const del = await s.delete('/w/a');

      const w = collect(s, '/w/', from);
      await eventually(() => w.events.length >= 3, 'replayed events');
      const live = await s.create('/w/c', 'c1');
      const live2 = await s.update('/w/c', 'c2', live.modRevision);
      await eventually(() => w.events.length >= 5, 'live events');
      await new Promise((r) => setTimeout(r, 50));
      w.handle.cancel();

      expect(w.errors).toEqual([]);
      expect(w.events.map((e) => [e.type, e.key, e.value, e.revision])).toEqual([
        ['put', '/w/a', 'a2', a2.modRevision],
        ['put', '/w/b', 'b1', b.modRevision],
        ['delete', '/w/a', 'a2', del.modRevision],
        ['put', '/w/c', 'c1', live.modRevision],
        ['put', '/w/c', 'c2', live2.modRevision],
      ]);
      expect(w.events[0].prevValue).toBe('a1');
      expect(w.events[4].prevValue).toBe('c1');
      expect(w.events[3].createRevision).toBe(live.modRevision);
    });

    it('delivers concurrent writes to a live watch with no gap and no duplicate', async () => {
      const start = await s.currentRevision();
      const w = collect(s, '/c/', start);
      const writes = await Promise.all(Array.from({ length: 50 }, (_, i) => s.create(`/c/k${i}`, `v${i}`)));
      await eventually(() => w.events.length >= 50, '50 events');
      await new Promise((r) => setTimeout(r, 50));
      w.handle.cancel();
      expect(w.events.map((e) => e.revision)).toEqual(
        writes.map((kv) => kv.modRevision).sort((x, y) => x - y),
      );
    });

    it('stops delivering after cancel', async () => {
      const w = collect(s, '/x/', await s.currentRevision());
      await s.create('/x/1', 'one');
      await eventually(() => w.events.length === 1, 'first event');
      w.handle.cancel();
      await s.create('/x/2', 'two');
      await new Promise((r) => setTimeout(r, 100));
      expect(w.events).toHaveLength(1);
    });

    it('compacts history: older revisions are out of range, newer ones still served', async () => {
      const a = await s.create('/k/a', 'a1');
      const a2 = await s.update('/k/a', 'a2', a.modRevision);
      await s.create('/k/b', 'b1');
      const compactAt = await s.currentRevision();
      await s.update('/k/a', 'a3', a2.modRevision);
      await s.compact(compactAt);
      expect(await s.compactedRevision()).toBeGreaterThanOrEqual(compactAt);

      const err = await expectCode(s.list('/k/', { revision: a.modRevision }), 'Compacted');
      expect(err.message).toMatch(/compacted/i);
      const atCompact = await s.list('/k/', { revision: compactAt });
      expect(atCompact.items.map((kv) => kv.value)).toEqual(['a2', 'b1']);

      const old = collect(s, '/k/', a.modRevision);
      await eventually(() => old.errors.length === 1, 'a compaction error');
      expect(old.errors[0].code).toBe('Compacted');
      expect(old.events).toEqual([]);

      const fresh = collect(s, '/k/', compactAt);
      await eventually(() => fresh.events.length === 1, 'the event after the compaction point');
      fresh.handle.cancel();
      expect(fresh.events[0].value).toBe('a3');
      expect((await s.get('/k/a'))?.value).toBe('a3');
    });

    it('keeps data and revisions across a restart', async () => {
      const a = await s.create('/p/a', 'a1');
      const b = await s.create('/p/b', 'b1');
      await s.delete('/p/b');
      const before = await s.currentRevision();
      s = await h.restart();
      expect(await s.get('/p/a')).toEqual(a);
      expect(await s.get('/p/b')).toBeUndefined();
      expect(await s.currentRevision()).toBe(before);
      const c = await s.create('/p/c', 'c1');
      expect(c.modRevision).toBeGreaterThan(before);
      expect((await s.list('/p/', { revision: b.modRevision })).items.map((kv) => kv.key)).toEqual([
        '/p/a',
        '/p/b',
      ]);
    });
  });
}
