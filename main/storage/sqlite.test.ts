import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { storageConformance } from '../../test/storage/conformance.js';
import { expectEveryEventSince, HistoryWriter } from '../../test/support/history.js';
import { openSqliteStorage, type SqliteStorage } from './sqlite.js';
import { isStorageError } from './types.js';

function tempDb(): { path: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-sqlite-'));
  return { dir, path: join(dir, 'state.db') };
}

/** A logger whose lines the test reads. */
function captureLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

storageConformance('sqlite', async () => {
  const { dir, path } = tempDb();
  let storage = await openSqliteStorage({ path, compactIntervalMs: 0 });
  return {
    get storage() {
      return storage;
    },
    async restart() {
      await storage.close();
      storage = await openSqliteStorage({ path, compactIntervalMs: 0 });
      return storage;
    },
    async cleanup() {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('sqlite storage', () => {
  it('groups concurrent writes into few transactions and acknowledges each after commit', async () => {
    const { dir, path } = tempDb();
    const s = await openSqliteStorage({ path, compactIntervalMs: 0 });
    try {
      const before = (await s.stats()).rows;
      const results = await Promise.all(Array.from({ length: 500 }, (_, i) => s.create(`/g/${i}`, 'x')));
      expect(new Set(results.map((r) => r.modRevision)).size).toBe(500);
      expect((await s.stats()).rows - before).toBe(500);
      // Another connection (after close) sees every acknowledged write.
      await s.close();
      const again = await openSqliteStorage({ path, compactIntervalMs: 0 });
      expect((await again.list('/g/')).items).toHaveLength(500);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('commits the writes of firstInLine keys ahead of those queued before them, at most half a batch while others wait', async () => {
    const { dir, path } = tempDb();
    const s = await openSqliteStorage({
      path,
      compactIntervalMs: 0,
      maxBatch: 4,
      firstInLine: (key) => key.startsWith('/registry/leases/kube-node-lease/'),
    });
    try {
      // One tick's writes: six pod writes queued first, then three renewals.
      const pods = Array.from({ length: 6 }, (_, i) => s.create(`/registry/pods/default/p${i}`, 'x'));
      const leases = Array.from({ length: 3 }, (_, i) =>
        s.create(`/registry/leases/kube-node-lease/n${i}`, 'x'),
      );
      const podRevs = (await Promise.all(pods)).map((kv) => kv.modRevision);
      const leaseRevs = (await Promise.all(leases)).map((kv) => kv.modRevision);
      const first = Math.min(...podRevs, ...leaseRevs);
      // First batch (4): two renewals (half of it), then the two oldest pod writes; the next
      // batch starts with the last renewal.
      expect(leaseRevs).toEqual([first, first + 1, first + 4]);
      expect(podRevs).toEqual([first + 2, first + 3, first + 5, first + 6, first + 7, first + 8]);
      // Every write is there, in the order the revisions say.
      const { items } = await s.list('/registry/');
      expect(items).toHaveLength(9);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('acknowledges a large batch a chunk per turn of the event loop, with watchers and the revision in step', async () => {
    const { dir, path } = tempDb();
    const s = await openSqliteStorage({ path, compactIntervalMs: 0 });
    try {
      const start = await s.currentRevision();
      let acked = 0;
      let watched = 0;
      // What a timer, a lease renewal or the GUI would see between turns: acknowledged writes,
      // delivered events and the store's revision.
      const turns: Array<{ acked: number; watched: number; revision: number }> = [];
      const handle = s.watch('/burst/', start, {
        onEvents: (events) => void (watched += events.length),
        onError: () => undefined,
      });
      let polling = true;
      const poll = () => {
        if (!polling) return;
        void s
          .currentRevision()
          .then((revision) => turns.push({ acked, watched, revision: revision - start }));
        setImmediate(poll);
      };
      setImmediate(poll);
      await Promise.all(
        Array.from({ length: 1000 }, (_, i) => s.create(`/burst/${i}`, 'x').then(() => acked++)),
      );
      polling = false;
      handle.cancel();
      const between = turns.filter((t) => t.acked > 0 && t.acked < 1000);
      expect(between.length).toBeGreaterThan(3);
      for (const t of between) {
        // Never acknowledged before its watchers saw it, nor reported as the revision before then.
        expect(t.watched).toBeGreaterThanOrEqual(t.acked);
        expect(t.revision).toBeLessThanOrEqual(t.watched);
      }
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the file bounded under lease-style churn when history is compacted on the timer', async () => {
    const { dir, path } = tempDb();
    let clock = 0;
    const s = await openSqliteStorage({ path, compactIntervalMs: 0, retentionMs: 1000, now: () => clock });
    const compactNow = (s as unknown as { compactOnTimer(): void }).compactOnTimer.bind(s);
    try {
      const revs = new Map<string, number>();
      for (let i = 0; i < 100; i++)
        revs.set(`/leases/n${i}`, (await s.create(`/leases/n${i}`, 'x'.repeat(300))).modRevision);
      const renewAll = async () => {
        await Promise.all(
          [...revs].map(async ([k, rev]) =>
            revs.set(k, (await s.update(k, 'y'.repeat(300), rev)).modRevision),
          ),
        );
      };
      let sizeAfterFirstRounds = 0;
      for (let round = 0; round < 60; round++) {
        await renewAll();
        clock += 500;
        compactNow();
        await new Promise((r) => setTimeout(r, 0));
        await (s as unknown as { compacting: Promise<void> }).compacting;
        if (round === 10) sizeAfterFirstRounds = (await s.stats()).pageCount;
      }
      const stats = await s.stats();
      // Only the rows within the retention window survive: ~2-3 rounds of 100 keys.
      expect(stats.rows).toBeLessThan(500);
      expect(stats.pageCount).toBeLessThanOrEqual(sizeAfterFirstRounds + 10);
      expect(statSync(path + '-wal', { throwIfNoEntry: false })?.size ?? 0).toBeLessThan(8 * 1024 * 1024);
      expect(await s.compactedRevision()).toBeGreaterThan(0);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives freed pages back once they are a quarter of the file, and keeps fewer for the next writes', async () => {
    const { dir, path } = tempDb();
    const s = await openSqliteStorage({ path, compactIntervalMs: 0 });
    const value = 'x'.repeat(1000);
    try {
      const revs = new Map<string, number>();
      for (let i = 0; i < 2000; i++) revs.set(`/k/${i}`, (await s.create(`/k/${i}`, value)).modRevision);
      // Churn on a tenth of the keys: the pages it frees are reused, the file does not move.
      await s.compact(await s.currentRevision());
      const settled = (await s.stats()).pageCount;
      for (let round = 0; round < 5; round++) {
        for (let i = 0; i < 200; i++)
          revs.set(`/k/${i}`, (await s.update(`/k/${i}`, value, revs.get(`/k/${i}`)!)).modRevision);
        await s.compact(await s.currentRevision());
        const { pageCount, freelist } = await s.stats();
        expect(pageCount).toBeLessThanOrEqual(settled * 1.15);
        // Kept for the next round's writes rather than given back and taken again.
        expect(freelist).toBeGreaterThan(0);
        expect(freelist * 4).toBeLessThanOrEqual(pageCount);
      }
      // Most keys deleted: the file gives the space back.
      for (let i = 0; i < 1800; i++) await s.delete(`/k/${i}`);
      await s.compact(await s.currentRevision());
      const after = await s.stats();
      expect(after.pageCount).toBeLessThan(settled / 2);
      expect(after.freelist * 4).toBeLessThanOrEqual(after.pageCount);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps compacting when it is closed and reopened more often than its retention (a desktop app)', async () => {
    const { dir, path } = tempDb();
    const minute = 60_000;
    let clock = 1_000_000;
    // The timer's own ticks (every minute) are driven by hand; the real one never fires in time.
    const open = () =>
      openSqliteStorage({ path, compactIntervalMs: minute, retentionMs: 5 * minute, now: () => clock });
    const tick = async (s: SqliteStorage) => {
      await (s as unknown as { compactOnTimer(): Promise<void> }).compactOnTimer();
    };
    let s = await open();
    const seen = [{ at: clock, rev: await s.currentRevision() }];
    const compactedAt: number[] = [];
    try {
      let rev = (await s.create('/k', '0')).modRevision;
      // 40 minutes, restarted every 3: a window counted from each start would never end.
      for (let m = 1; m <= 40; m++) {
        rev = (await s.update('/k', String(m), rev)).modRevision;
        clock += minute;
        if (m % 3 === 0) {
          await s.close();
          s = await open();
          await (s as unknown as { compacting: Promise<void> }).compacting;
        } else {
          await tick(s);
        }
        const compacted = await s.compactedRevision();
        if (compacted > 0 && compacted !== compactedAt.at(-1)) compactedAt.push(compacted);
        // History younger than the retention stays.
        const fiveMinutesAgo = Math.max(
          0,
          ...seen.filter((x) => x.at <= clock - 5 * minute).map((x) => x.rev),
        );
        expect(compacted).toBeLessThanOrEqual(fiveMinutesAgo);
        seen.push({ at: clock, rev: await s.currentRevision() });
      }
      // Compacted every few minutes all along, up to history about 5 minutes old.
      expect(compactedAt.length).toBeGreaterThanOrEqual(6);
      expect(compactedAt.at(-1)).toBeGreaterThanOrEqual(seen.at(-8)!.rev);
      // History kept: the last 5 minutes of the key, not all 40.
      expect((await s.stats()).rows).toBeLessThanOrEqual(8);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** A store on a file with a bound of 300 revisions, compacted when the test ticks. */
  async function boundedStore(path: string, now: () => number) {
    const s = await openSqliteStorage({
      path,
      compactIntervalMs: 0,
      retentionMs: 5 * 60_000,
      historyBound: { maxRevisions: 300, minRetentionMs: 75_000 },
      now,
    });
    return { s, tick: () => (s as unknown as { compactOnTimer(): Promise<void> }).compactOnTimer() };
  }

  it('keeps 5 minutes of history while writing is light, and the last 75 s once those hold more than the bound', async () => {
    const { dir, path } = tempDb();
    let clock = 1_000_000;
    const { s, tick } = await boundedStore(path, () => clock);
    const w = new HistoryWriter(s);
    const step = async (n: number) => {
      await w.write(n);
      clock += 30_000;
      w.note(clock, w.revision);
      await tick();
    };
    try {
      // Light: 20 writes a tick (30 s) stay under the bound, so 5 minutes are kept.
      for (let t = 0; t < 14; t++) await step(20);
      expect(await s.compactedRevision()).toBe(w.asOf(clock - 5 * 60_000));
      // Heavy: 150 writes a tick, 375 in 75 s, pass the bound of 300; the last 75 s stay.
      for (let t = 0; t < 6; t++) {
        await step(150);
        const compacted = await s.compactedRevision();
        expect(compacted).toBeLessThanOrEqual(w.asOf(clock - 75_000));
        expect(w.revision - compacted).toBeLessThanOrEqual(300 + 150);
      }
      expect(await s.compactedRevision()).toBe(w.asOf(clock - 75_000));
      // A watcher that resumes within the 75 s still gets every event.
      const from = w.asOf(clock - 75_000);
      expect((await s.list('/', { revision: from })).items).toHaveLength(1);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('under heavy writing trims history to the bound at every tick, and after a restart goes on at the first tick', async () => {
    const { dir, path } = tempDb();
    let clock = 1_000_000;
    let { s, tick } = await boundedStore(path, () => clock);
    const w = new HistoryWriter(s);
    const step = async (n: number) => {
      await w.write(n);
      clock += 15_000;
      w.note(clock, w.revision);
      await tick();
    };
    try {
      // 40 writes every 15 s: 200 in the last 75 s, 800 in 5 minutes; the newest 300 stay.
      for (let t = 0; t < 20; t++) {
        await step(40);
        if (t >= 10) {
          const kept = w.revision - (await s.compactedRevision());
          expect(kept).toBeLessThanOrEqual(300);
          expect(kept).toBeGreaterThanOrEqual(300 - 40);
        }
      }
      // 100 every 15 s: the last 75 s hold 500, and all of them stay.
      for (let t = 0; t < 8; t++) await step(100);
      expect(await s.compactedRevision()).toBe(w.asOf(clock - 75_000));
      await s.close();
      // Back 20 s later, still writing: the samples kept in the file say at once which
      // revision is 75 s old, so the first tick trims.
      clock += 20_000;
      ({ s, tick } = await boundedStore(path, () => clock));
      w.store = s;
      const reopened = await s.compactedRevision();
      await step(100);
      expect(await s.compactedRevision()).toBe(w.asOf(clock - 75_000));
      expect(await s.compactedRevision()).toBeGreaterThan(reopened);
      await expectEveryEventSince(s, '/k', await s.compactedRevision(), w.revision);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a second server on the same file with an actionable message', async () => {
    const { dir, path } = tempDb();
    const s = await openSqliteStorage({ path, compactIntervalMs: 0 });
    await s.create('/a', 'b');
    try {
      await expect(openSqliteStorage({ path, compactIntervalMs: 0 })).rejects.toThrow(
        /in use by another kubelab server/,
      );
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails a watcher whose replay is overtaken by compaction instead of skipping events', async () => {
    const { dir, path } = tempDb();
    const s: SqliteStorage = await openSqliteStorage({ path, compactIntervalMs: 0 });
    try {
      let rev = (await s.create('/o/k', '0')).modRevision;
      const from = rev;
      for (let i = 0; i < 5000; i++) rev = (await s.update('/o/k', String(i), rev)).modRevision;
      const errors: unknown[] = [];
      let seen = 0;
      s.watch('/o/', from, { onEvents: (e) => (seen += e.length), onError: (e) => errors.push(e) });
      await s.compact(rev);
      await new Promise((r) => setTimeout(r, 50));
      expect(errors).toHaveLength(1);
      expect(isStorageError(errors[0], 'Compacted')).toBe(true);
      expect(seen).toBeLessThan(5000);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resumes a compaction that failed (an injected SQLite error) on the next tick, and logs the failure', async () => {
    const { dir, path } = tempDb();
    let clock = 0;
    const { logger, lines } = captureLogger();
    const s = await openSqliteStorage({
      path,
      compactIntervalMs: 0,
      retentionMs: 1000,
      now: () => clock,
      logger,
    });
    // What the timer does every interval; settles when the round has ended, failed or not.
    const tick = async () => {
      await (s as unknown as { compactOnTimer(): Promise<void> | void }).compactOnTimer();
      await (s as unknown as { compacting: Promise<void> }).compacting.catch(() => undefined);
    };
    // A real SQLite error inside compaction, as a full disk would give: another connection
    // adds a trigger that makes every row deletion fail (writes, which only insert, go on).
    const fault = new Database(path);
    const arm = () =>
      fault.exec(
        "CREATE TRIGGER injected_fault BEFORE DELETE ON kv_log BEGIN SELECT RAISE(ABORT, 'injected: database or disk is full'); END",
      );
    const disarm = () => fault.exec('DROP TRIGGER injected_fault');
    const revs = new Map<string, number>();
    const churn = async () => {
      for (let round = 0; round < 10; round++) {
        await Promise.all(
          Array.from({ length: 50 }, async (_, i) => {
            const key = `/leases/n${i}`;
            const rev = revs.get(key);
            const kv =
              rev === undefined ? await s.create(key, `r${round}`) : await s.update(key, `r${round}`, rev);
            revs.set(key, kv.modRevision);
          }),
        );
      }
    };
    const failures = () => lines.filter((l) => l.level === 40 && String(l.msg).includes('compacting'));
    try {
      await churn();
      expect((await s.stats()).rows).toBe(500);
      await tick(); // the first sample: nothing is old enough yet
      arm();
      clock += 2000;
      await tick(); // everything written is now older than the retention: this round fails
      expect(failures()).toHaveLength(1);
      expect(failures()[0].err).toMatch(/injected/);
      expect((await s.stats()).rows).toBe(500);

      disarm();
      clock += 500;
      await tick(); // nothing new is due, but the failed round's work is left: resumed
      expect((await s.stats()).rows).toBe(50);

      // Again, with newer writes arriving before the retry: the failed range is not skipped.
      arm();
      await churn();
      clock += 2000;
      await tick();
      clock += 2000;
      await tick();
      expect(failures()).toHaveLength(2);
      disarm();
      await churn();
      clock += 2000;
      await tick();
      clock += 2000;
      await tick();
      expect(failures()).toHaveLength(2);
      expect((await s.stats()).rows).toBe(50);
      expect(await s.compactedRevision()).toBe(await s.currentRevision());
      const listed = await s.list('/leases/');
      expect(listed.items).toHaveLength(50);
      expect(listed.items.every((kv) => kv.value === 'r9')).toBe(true);
    } finally {
      fault.close();
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never reads a write ahead of the revision it reports, while a commit is not taken in yet', async () => {
    const { dir, path } = tempDb();
    const s = await openSqliteStorage({ path, compactIntervalMs: 0 });
    const spy = new Database(path);
    const committed = spy.prepare('SELECT MAX(rev) AS r FROM kv_log').pluck();
    try {
      const first = await s.create('/r/k', 'v1');
      const events: number[] = [];
      s.watch('/r/', first.modRevision, {
        onEvents: (e) => events.push(...e.map((x) => x.revision)),
        onError: () => undefined,
      });
      const writing = s.update('/r/k', 'v2', first.modRevision);
      // The group commit hands the batch to the write thread on this turn.
      await new Promise((r) => setImmediate(r));
      // Hold this thread (as a long GC pause or a busy GUI turn would) until the write thread
      // has committed: its answer then waits in the queue, not yet taken in by the store.
      const deadline = Date.now() + 10_000;
      while ((committed.get() as number) <= first.modRevision) {
        if (Date.now() > deadline) throw new Error('the write thread did not commit within 10 s');
      }
      const got = await s.get('/r/k');
      const revision = await s.currentRevision();
      const listed = await s.list('/r/');
      expect(got?.modRevision).toBeLessThanOrEqual(revision);
      expect(events.every((rev) => rev <= revision)).toBe(true);
      // A GET then a consistent LIST never goes back in time.
      expect(listed.items[0].modRevision).toBeGreaterThanOrEqual(got!.modRevision);
      expect(listed.items[0].value).toBe(got?.value);
      // Once taken in, the write is visible everywhere at once.
      const written = await writing;
      expect(await s.get('/r/k')).toEqual(written);
      expect(await s.currentRevision()).toBe(written.modRevision);
    } finally {
      spy.close();
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
