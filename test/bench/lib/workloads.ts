/** The three measurements, independent of what is measured: writes, watch latency, lists. */
import { nowMs, percentileSorted, sleep, sortedCopy } from './stats.js';

export interface ThroughputResult {
  ops: number;
  concurrency: number;
  seconds: number;
  perSec: number;
  /** Per-operation latency, ms. */
  p50Ms: number;
  p99Ms: number;
}

/** Runs `n` operations with `concurrency` writers, each starting the next as soon as its last ends. */
export async function throughput(
  n: number,
  concurrency: number,
  op: (i: number) => Promise<unknown>,
): Promise<ThroughputResult> {
  const latencies = new Float64Array(n);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      const t = nowMs();
      await op(i);
      latencies[i] = nowMs() - t;
    }
  };
  const t0 = nowMs();
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  const seconds = (nowMs() - t0) / 1000;
  const sorted = sortedCopy(latencies);
  return {
    ops: n,
    concurrency,
    seconds,
    perSec: n / seconds,
    p50Ms: percentileSorted(sorted, 50),
    p99Ms: percentileSorted(sorted, 99),
  };
}

export interface RunningWatchers {
  stop(): Promise<void>;
}

/** What a system must offer for the watch-latency measurement. */
export interface WatchHarness {
  /**
   * Starts `count` watchers and resolves once all are established. Each received object is
   * reported as `onEvent(seq, sentMs)` from the code that consumes the watch, as it arrives.
   */
  startWatchers(count: number, onEvent: (seq: number, sentMs: number) => void): Promise<RunningWatchers>;
  /** Writes object `seq`, carrying `sentMs` (taken just before the call). */
  write(seq: number, sentMs: number): Promise<unknown>;
}

export interface WatchLatencyResult {
  watchers: number;
  objects: number;
  ratePerSec: number;
  samples: number;
  missing: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** How far behind schedule the writer fell at worst (ms): the pacing was not steady if large. */
  writerLagMs: number;
  /** Events consumed per second, first measured write to last event (watchers × rate if keeping up). */
  deliveredPerSec: number;
}

/**
 * Writes `warmup` objects at a steady rate and waits until every watcher has them all (JIT,
 * connections and caches warm, no backlog), then writes `objects` more at the same rate while
 * `watchers` watchers receive them; latency = receive time − send time, for every (watcher,
 * measured object).
 */
export async function watchLatency(
  harness: WatchHarness,
  options: {
    watchers: number;
    objects: number;
    ratePerSec: number;
    warmup: number;
    drainMs?: number;
    /**
     * Called as the measured writes begin and once their last event is in (or the drain gave
     * up): for costs of the delivery alone, without starting the watchers and the warm-up.
     */
    window?: { start(): void; end(): void };
  },
): Promise<WatchLatencyResult> {
  const { watchers, objects, ratePerSec, warmup } = options;
  const drainMs = options.drainMs ?? 20_000;
  const expected = watchers * objects;
  const latencies = new Float64Array(expected);
  let warmReceived = 0;
  let received = 0;
  let firstSent = Infinity;
  let lastReceived = 0;
  let wake: (() => void) | undefined;
  const running = await harness.startWatchers(watchers, (seq, sent) => {
    if (seq < warmup) {
      if (++warmReceived === watchers * warmup) wake?.();
      return;
    }
    const now = nowMs();
    lastReceived = now;
    if (sent < firstSent) firstSent = sent;
    if (received < expected) latencies[received] = now - sent;
    if (++received === expected) wake?.();
  });
  const until = async (cond: () => boolean) => {
    if (cond()) return;
    await Promise.race([new Promise<void>((r) => (wake = r)), sleep(drainMs)]);
    wake = undefined;
  };

  let writerLag = 0;
  const writeSteadily = async (from: number, to: number, measured: boolean) => {
    const interval = 1000 / ratePerSec;
    const inflight = new Set<Promise<unknown>>();
    let failure: unknown;
    const t0 = nowMs();
    for (let seq = from; seq < to; seq++) {
      const due = t0 + (seq - from) * interval;
      const wait = due - nowMs();
      if (wait >= 1) await sleep(wait);
      const sent = nowMs();
      if (measured) writerLag = Math.max(writerLag, sent - due);
      const p: Promise<unknown> = harness.write(seq, sent).then(
        () => inflight.delete(p),
        (err) => {
          failure ??= err;
          inflight.delete(p);
        },
      );
      inflight.add(p);
      if (failure) throw failure;
    }
    await Promise.all(inflight);
    if (failure) throw failure;
  };

  try {
    await writeSteadily(0, warmup, false);
    await until(() => warmReceived >= watchers * warmup);
    await sleep(200);
    options.window?.start();
    await writeSteadily(warmup, warmup + objects, true);
    await until(() => received >= expected);
    options.window?.end();
    const sorted = sortedCopy(latencies.subarray(0, Math.min(received, expected)));
    return {
      watchers,
      objects,
      ratePerSec,
      samples: sorted.length,
      missing: expected - Math.min(received, expected),
      p50Ms: percentileSorted(sorted, 50),
      p99Ms: percentileSorted(sorted, 99),
      maxMs: sorted.length ? sorted[sorted.length - 1] : NaN,
      writerLagMs: writerLag,
      deliveredPerSec: sorted.length / ((lastReceived - firstSent) / 1000),
    };
  } finally {
    await running.stop();
  }
}

/** Times `fn` `reps` times after `warmup` untimed calls; returns the times in ms. */
export async function timeRepeated(fn: () => Promise<void>, reps: number, warmup = 2): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = nowMs();
    await fn();
    times.push(nowMs() - t);
  }
  return times;
}

/** Runs `n` operations with `concurrency` in flight, untimed (setup). */
export async function fill(
  n: number,
  concurrency: number,
  op: (i: number) => Promise<unknown>,
): Promise<void> {
  await throughput(n, concurrency, op);
}
