/**
 * etcd's history is compacted as kube-apiserver compacts it: every 5 minutes, to the revision
 * of the previous round, with replicas taking turns on compact_rev_key. A real etcd per test,
 * so compact_rev_key starts unset; time is a FakeClock.
 */
import { Etcd3 } from 'etcd3';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../client/util/clock.js';
import { startEtcd, type EtcdServer } from '../../test/support/etcd.js';
import { expectEveryEventSince, HistoryWriter } from '../../test/support/history.js';
import { openEtcdStorage, type EtcdStorage } from './etcd.js';
import { EtcdCompactor, HISTORY_CHECK_MS, type CompactionBackend } from './etcdcompactor.js';
import type { HistoryBound } from './retention.js';
import { isStorageError } from './types.js';

const INTERVAL = 5 * 60_000;

let etcd: EtcdServer;
beforeEach(async () => {
  etcd = await startEtcd();
});
afterEach(async () => {
  await etcd?.stop();
});

function captureLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return {
    logger,
    lines,
    compactions: () => lines.filter((l) => String(l.msg).startsWith("compacted etcd's history")),
    failures: () => lines.filter((l) => Number(l.level) >= 40),
  };
}

function open(
  clock: FakeClock,
  logger: pino.Logger,
  compactionIntervalMs?: number,
  historyBound?: HistoryBound,
): Promise<EtcdStorage> {
  return openEtcdStorage({
    endpoints: [etcd.endpoint],
    prefix: '/kubelab',
    clock,
    logger,
    compactionIntervalMs,
    historyBound,
  });
}

/** One compaction interval passes; waits until each store's round has ended. */
async function interval(clock: FakeClock, ...stores: EtcdStorage[]): Promise<void> {
  clock.advance(INTERVAL);
  await Promise.all(stores.map((s) => s.compaction?.idle()));
}

async function compactedError(p: Promise<unknown>): Promise<boolean> {
  try {
    await p;
    return false;
  } catch (err) {
    return isStorageError(err, 'Compacted');
  }
}

describe('etcd compaction', () => {
  it('takes its first turn at start, then compacts every 5 minutes to the revision seen the round before, logs it, and stops on close', async () => {
    const clock = new FakeClock();
    const log = captureLogger();
    const s = await open(clock, log.logger);
    try {
      // The first turn is taken at start and only notes where history starts.
      await s.compaction?.idle();
      const noted = await s.currentRevision();
      expect(await s.compactedRevision()).toBe(0);
      const a = await s.create('/k', 'one');
      const b = await s.update('/k', 'two', a.modRevision);
      clock.advance(INTERVAL - 1);
      await s.compaction?.idle();
      expect(log.lines).toEqual([]);
      clock.advance(1);
      await s.compaction?.idle();
      expect(await s.compactedRevision()).toBe(noted);
      expect((await s.list('/', { revision: a.modRevision })).items[0].value).toBe('one');
      expect(log.compactions()).toEqual([expect.objectContaining({ revision: noted, level: 30 })]);

      // The next round compacts to what the previous round saw: a, b and the round's own write.
      const seen = await s.currentRevision();
      await interval(clock, s);
      expect(await s.compactedRevision()).toBe(seen);
      expect(await compactedError(s.list('/', { revision: a.modRevision }))).toBe(true);
      expect((await s.list('/', { revision: seen })).items[0].value).toBe('two');
      expect((await s.list('/')).items[0]).toMatchObject({ value: 'two', modRevision: b.modRevision });
      expect(log.compactions().map((l) => l.revision)).toEqual([noted, seen]);
      expect(log.failures()).toEqual([]);

      const registry = new Registry();
      s.registerMetrics(registry);
      const text = await registry.metrics();
      expect(text).toContain('kubelab_etcd_compactions_total{result="succeeded"} 2');
      expect(text).toContain(`kubelab_etcd_compacted_revision ${seen}`);
    } finally {
      await s.close();
    }
    expect(clock.pendingTimers()).toBe(0);
  });

  it('under heavy writing takes a turn early that keeps the last 75 s, and counts the next round from it', async () => {
    const clock = new FakeClock();
    const log = captureLogger();
    const s = await open(clock, log.logger, INTERVAL, { maxRevisions: 300, minRetentionMs: 75_000 });
    const seen: Array<{ at: number; rev: number }> = [];
    const asOf = (cutoff: number) => Math.max(0, ...seen.filter((x) => x.at <= cutoff).map((x) => x.rev));
    let rev = (await s.create('/k', '0')).modRevision;
    const write = async (n: number) => {
      for (let i = 0; i < n; i++) rev = (await s.update('/k', String(i), rev)).modRevision;
    };
    try {
      await s.compaction?.idle();
      // Light writing: no early turn, however many checks pass.
      for (let t = 0; t < 8; t++) {
        await write(10);
        clock.advance(HISTORY_CHECK_MS);
        await s.compaction?.idle();
        seen.push({ at: clock.now(), rev: await s.currentRevision() });
      }
      expect(log.compactions()).toEqual([]);
      // Heavy: 100 revisions every 15 s pass the bound of 300.
      for (let t = 0; t < 12; t++) {
        await write(100);
        clock.advance(HISTORY_CHECK_MS);
        await s.compaction?.idle();
        const compacted = await s.compactedRevision();
        expect(compacted).toBeLessThanOrEqual(asOf(clock.now() - 75_000));
        seen.push({ at: clock.now(), rev: await s.currentRevision() });
      }
      const early = log.compactions();
      expect(early.length).toBeGreaterThanOrEqual(2);
      expect(early.every((l) => /early/.test(String(l.msg)))).toBe(true);
      // History stays near the bound: at most the bound plus what one check lets in.
      expect(rev - (await s.compactedRevision())).toBeLessThanOrEqual(300 + 2 * 100 + 10);
      expect(log.failures()).toEqual([]);
      // Quiet again: no compaction, early or regular, ever takes the last 75 s away.
      for (let t = 0; t < 30; t++) {
        clock.advance(HISTORY_CHECK_MS);
        await s.compaction?.idle();
        expect(await s.compactedRevision()).toBeLessThanOrEqual(asOf(clock.now() - 75_000));
        seen.push({ at: clock.now(), rev: await s.currentRevision() });
      }
    } finally {
      await s.close();
    }
    expect(clock.pendingTimers()).toBe(0);
  });

  it('after a restart under heavy writing, goes on trimming at the first check, from the samples the last turn recorded', async () => {
    const clock = new FakeClock();
    const log = captureLogger();
    const bound = { maxRevisions: 300, minRetentionMs: 75_000 };
    let s = await open(clock, log.logger, INTERVAL, bound);
    const w = new HistoryWriter(s);
    // The revision the compactor notes at a check: a turn it takes moves etcd's revision on.
    const check = async () => {
      const noted = await s.currentRevision();
      clock.advance(HISTORY_CHECK_MS);
      w.note(clock.now(), noted);
      await s.compaction?.idle();
    };
    try {
      await s.compaction?.idle();
      // 100 revisions every 15 s: the last 75 s hold 500, more than the bound of 300.
      for (let t = 0; t < 10; t++) {
        await w.write(100);
        await check();
      }
      expect(log.compactions().length).toBeGreaterThanOrEqual(2);
      await s.close();
      // Back 20 s later, still writing. The last turn alone is not 75 s old at the first check;
      // the samples recorded with it are.
      clock.advance(20_000);
      s = await open(clock, log.logger, INTERVAL, bound);
      w.store = s;
      await s.compaction?.idle();
      const before = log.compactions().length;
      await w.write(100);
      await check();
      expect(log.compactions()).toHaveLength(before + 1);
      const expected = Math.min(w.revision - 300, w.asOf(clock.now() - 75_000));
      expect(expected).toBeGreaterThan(0);
      expect(await s.compactedRevision()).toBe(expected);
    } finally {
      await s.close();
    }
  });

  it('trims history to the bound when the last 75 s hold fewer revisions, whatever the 5 minutes hold', async () => {
    const clock = new FakeClock();
    const log = captureLogger();
    const s = await open(clock, log.logger, INTERVAL, { maxRevisions: 300, minRetentionMs: 75_000 });
    const w = new HistoryWriter(s);
    try {
      await s.compaction?.idle();
      // 40 revisions every 15 s: 200 in the last 75 s, 800 in 5 minutes.
      for (let t = 0; t < 20; t++) {
        await w.write(40);
        clock.advance(HISTORY_CHECK_MS);
        await s.compaction?.idle();
        const kept = w.revision - (await s.compactedRevision());
        if (t >= 10) {
          // Trimmed at every check to the newest 300: never more, and never much fewer.
          expect(kept).toBeLessThanOrEqual(300);
          expect(kept).toBeGreaterThanOrEqual(300 - 40);
        }
      }
      // Said once at info; the turns after it within the interval are debug lines.
      const early = log.compactions();
      expect(early.length).toBeGreaterThanOrEqual(5);
      expect(early.filter((l) => Number(l.level) === 30)).toHaveLength(1);
      await expectEveryEventSince(s, '/k', await s.compactedRevision(), w.revision);
    } finally {
      await s.close();
    }
  });

  it('replicas take turns: one compaction per round, and another takes over when that one stops', async () => {
    const clock = new FakeClock();
    const logs = [captureLogger(), captureLogger()];
    const stores = [await open(clock, logs[0].logger), await open(clock, logs[1].logger)];
    // The first opens and takes the first turn; the second finds that turn and follows it.
    await Promise.all(stores.map((s) => s.compaction?.idle()));
    const counts = () => logs.map((l) => l.compactions().length);
    const closed = new Set<EtcdStorage>();
    try {
      let kv = await stores[0].create('/k', '0');
      let lastWinner = -1;
      for (let round = 1; round <= 4; round++) {
        kv = await stores[round % 2].update('/k', String(round), kv.modRevision);
        const before = counts();
        await interval(clock, ...stores);
        const after = counts();
        const compacted = [after[0] - before[0], after[1] - before[1]];
        // The first turn (at start) compacted nothing; every round compacts once.
        expect(compacted[0] + compacted[1]).toBe(1);
        lastWinner = compacted[0] === 1 ? 0 : 1;
      }
      expect(logs.flatMap((l) => l.failures())).toEqual([]);

      // The replica that compacted last goes away: the other compacts at its next round.
      const survivor = stores[1 - lastWinner];
      await stores[lastWinner].close();
      closed.add(stores[lastWinner]);
      const beforeTakeover = await survivor.currentRevision();
      const before = logs[1 - lastWinner].compactions().length;
      await interval(clock, survivor);
      expect(logs[1 - lastWinner].compactions()).toHaveLength(before + 1);
      expect(await survivor.compactedRevision()).toBe(beforeTakeover);
    } finally {
      for (const s of stores) if (!closed.has(s)) await s.close();
    }
  });

  it('logs a failed round and compacts at the next one', async () => {
    // Fault injection through the compactor's seam: etcd refuses once, then answers.
    const clock = new FakeClock();
    const log = captureLogger();
    const s = await open(clock, log.logger, 0);
    let failNext: 'claim' | 'compact' | undefined;
    const backend: CompactionBackend = {
      claimCompaction: (v, r, at) =>
        failNext === 'claim'
          ? Promise.reject(new Error('injected: etcd unreachable'))
          : s.claimCompaction(v, r, at),
      readCompactionMark: () => s.readCompactionMark(),
      compact: (r) =>
        failNext === 'compact' ? Promise.reject(new Error('injected: etcd unreachable')) : s.compact(r),
      currentRevision: () => s.currentRevision(),
      compactedRevision: () => s.compactedRevision(),
    };
    const compactor = new EtcdCompactor(backend, { intervalMs: INTERVAL, clock, logger: log.logger });
    const round = async () => {
      clock.advance(INTERVAL);
      await compactor.idle();
    };
    try {
      await s.create('/k', 'one');
      compactor.start();
      await compactor.idle(); // takes the first turn at start
      failNext = 'compact';
      await round(); // its turn, but the compaction fails
      expect(log.failures()).toHaveLength(1);
      expect(log.failures()[0].err).toMatch(/injected/);
      failNext = 'claim';
      await round(); // cannot even take a turn
      expect(log.failures()).toHaveLength(2);
      failNext = undefined;
      const seen = await s.currentRevision();
      await round(); // the turn is taken again, compacting to the revision seen last time
      expect(log.compactions()).toHaveLength(1);
      expect(await s.compactedRevision()).toBeGreaterThan(0);
      expect(await s.compactedRevision()).toBeLessThanOrEqual(seen);
      await round();
      expect(await s.compactedRevision()).toBe(seen + 1);
      expect(log.failures()).toHaveLength(2);
    } finally {
      compactor.stop();
      await s.close();
    }
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keeps its schedule across restarts: a control plane restarted every 3 minutes compacts every 5', async () => {
    const clock = new FakeClock();
    const log = captureLogger();
    let s = await open(clock, log.logger);
    await s.compaction?.idle();
    // (time, revision) every minute: what 5 minutes of history means.
    const seen = [{ at: clock.now(), rev: await s.currentRevision() }];
    const compactedAt: number[] = [];
    try {
      let kv = await s.create('/k', '0');
      // 40 minutes of restarts every 3: counting from start would never reach a round.
      for (let minute = 1; minute <= 40; minute++) {
        kv = await s.update('/k', String(minute), kv.modRevision);
        clock.advance(60_000);
        await s.compaction?.idle();
        if (minute % 3 === 0) {
          await s.close();
          s = await open(clock, log.logger);
          await s.compaction?.idle();
        }
        const compacted = await s.compactedRevision();
        if (compacted > 0 && compacted !== compactedAt.at(-1)) compactedAt.push(compacted);
        // Never closer than one interval: history younger than 5 minutes stays.
        const fiveMinutesAgo = Math.max(
          0,
          ...seen.filter((x) => x.at <= clock.now() - INTERVAL).map((x) => x.rev),
        );
        expect(compacted).toBeLessThanOrEqual(fiveMinutesAgo);
        seen.push({ at: clock.now(), rev: await s.currentRevision() });
      }
      // A turn every 5 minutes, the first one at start: 40 minutes hold 8 compactions.
      expect(log.compactions().length).toBeGreaterThanOrEqual(7);
      expect(compactedAt.length).toBeGreaterThanOrEqual(7);
      expect(log.failures()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it("takes an overdue turn at start, and starts afresh after a turn without a time (a kube-apiserver's)", async () => {
    const clock = new FakeClock();
    const log = captureLogger();
    let s = await open(clock, log.logger);
    try {
      await s.compaction?.idle(); // the first turn, noting a revision
      const noted = (await s.readCompactionMark())?.revision;
      expect(noted).toBeGreaterThan(0);
      await s.create('/k', 'one');
      await s.close();
      // The app stays closed overnight: at the next start the turn is taken at once.
      clock.advance(10 * 60 * 60_000);
      s = await open(clock, log.logger);
      await s.compaction?.idle();
      expect(await s.compactedRevision()).toBe(noted);
      expect(log.compactions()).toEqual([expect.objectContaining({ revision: noted })]);
      await s.close();

      // A kube-apiserver on the same etcd takes a turn: compact_rev_key moves, the time does not.
      const apiserver = new Etcd3({ hosts: etcd.endpoint });
      try {
        await apiserver.put('compact_rev_key').value(String(noted));
      } finally {
        apiserver.close();
      }
      s = await open(clock, log.logger);
      expect(await s.readCompactionMark()).toBeUndefined();
      // The turn without a time is not followed: the first round learns whose turn it is...
      await s.compaction?.idle();
      expect(log.compactions()).toHaveLength(1);
      // ...and the next compacts, one interval later.
      const learnt = await s.currentRevision();
      await interval(clock, s);
      expect(log.compactions()).toHaveLength(2);
      expect(await s.compactedRevision()).toBe(learnt);
      expect(log.failures()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
