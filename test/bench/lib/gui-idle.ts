/**
 * The idle period of bench:gui: the page left on one view while the cluster keeps changing
 * (hollow nodes heartbeat and post status; a trickle of pod changes), its JS heap read after a
 * forced full GC at the start and at every step; "flat" means no sustained growth of what is
 * still reachable after GC, judged by the least-squares slope of those readings.
 */
import {
  chromiumCpuByType,
  coresBetween,
  heapAfterGc,
  type GuiBrowser,
  type HeapReading,
} from './gui-browser.js';
import { MiB } from './proc.js';
import { log } from './run.js';
import { fmt, nowMs, sleep } from './stats.js';

export interface IdlePeriod {
  readings: HeapReading[];
  /** Cores used by each Chromium process type over the period (GCs included). */
  chromiumCores: Record<string, number>;
}

/** Reads the heap now and every `everyMs` until `durationMs` has passed; `check` runs every second. */
export async function idlePeriod(
  g: GuiBrowser,
  durationMs: number,
  everyMs: number,
  check: () => void,
  describe: () => string,
): Promise<IdlePeriod> {
  const t0 = nowMs();
  const cpu0 = await chromiumCpuByType(g);
  const readings = [await heapAfterGc(g, 0)];
  const show = (r: HeapReading) =>
    `heap after GC ${fmt(r.usedBytes / MiB, 1)} MiB, DOM nodes ${fmt(r.domNodes, 0)}, renderer RSS ${fmt(r.rendererRssBytes / MiB, 0)} MiB`;
  log(`idle: ${fmt(durationMs / 60_000, 1)} min; at 0 min: ${show(readings[0])}`);
  for (let step = 1; step * everyMs <= durationMs; step++) {
    while (nowMs() - t0 < step * everyMs) {
      check();
      await sleep(Math.min(1000, t0 + step * everyMs - nowMs()));
    }
    const r = await heapAfterGc(g, nowMs() - t0);
    readings.push(r);
    log(`idle: ${fmt(r.atMs / 60_000, 1)} min: ${show(r)}; ${describe()}`);
  }
  const cpu1 = await chromiumCpuByType(g);
  return { readings, chromiumCores: coresBetween(cpu0, cpu1, (nowMs() - t0) / 1000) };
}

/** Least-squares slope of the post-GC heap over time, MiB per minute (NaN with fewer than two readings). */
export function heapSlopeMiBPerMin(readings: HeapReading[]): number {
  const n = readings.length;
  if (n < 2) return NaN;
  const xs = readings.map((r) => r.atMs / 60_000);
  const ys = readings.map((r) => r.usedBytes / MiB);
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return num / den;
}
