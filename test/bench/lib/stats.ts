/** Small statistics and formatting helpers for the benchmarks. */
import { performance } from 'node:perf_hooks';

/** Wall-clock milliseconds comparable across processes on one machine (sub-ms resolution). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Nearest-rank percentile (p in 0..100) of an ascending-sorted array. */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function sortedCopy(values: ArrayLike<number>): Float64Array {
  return Float64Array.from(values as ArrayLike<number>).sort();
}

export function median(values: number[]): number {
  return percentileSorted(sortedCopy(values), 50);
}

export function min(values: number[]): number {
  return values.length ? Math.min(...values) : NaN;
}

/** Formats a number with a sensible precision for a table cell. */
export function fmt(value: number, digits?: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const d = digits ?? (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
  return value.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
