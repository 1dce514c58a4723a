/**
 * A node's usage over the last minutes, for its charts: samples from NodeMetrics objects (an
 * agent writes one every 10 s; the control plane keeps 15 minutes), in time order, without
 * repeats, older ones dropped as new ones arrive so a page left open stays the same size.
 */
import type { NodeMetrics } from '../../../client/api/types.js';
import { quantityValue } from '../util/quantities.js';

export interface UsageSample {
  /** Milliseconds since the epoch. */
  at: number;
  cpuCores?: number;
  memoryBytes?: number;
  diskBytes?: number;
}

export type UsageField = Exclude<keyof UsageSample, 'at'>;

export function usageSample(metrics: NodeMetrics): UsageSample | undefined {
  const at = Date.parse(metrics.timestamp ?? '');
  if (Number.isNaN(at)) return undefined;
  const usage = metrics.usage ?? {};
  return {
    at,
    cpuCores: quantityValue(usage.cpu),
    memoryBytes: quantityValue(usage.memory),
    diskBytes: quantityValue(usage['ephemeral-storage']),
  };
}

export const DEFAULT_WINDOW_MS = 15 * 60_000;

export class RollingWindow {
  private samples: UsageSample[] = [];

  constructor(
    readonly windowMs = DEFAULT_WINDOW_MS,
    /** A bound whatever the sample rate. */
    readonly maxSamples = 2_000,
  ) {}

  get size(): number {
    return this.samples.length;
  }

  latest(): UsageSample | undefined {
    return this.samples[this.samples.length - 1];
  }

  /** Adds a sample in time order; false when it was already there or is too old to show. */
  add(sample: UsageSample): boolean {
    const newest = this.latest()?.at ?? -Infinity;
    if (sample.at < Math.max(newest, sample.at) - this.windowMs) return false;
    let at = this.samples.length;
    while (at > 0 && this.samples[at - 1].at > sample.at) at--;
    if (this.samples[at - 1]?.at === sample.at) return false;
    this.samples.splice(at, 0, sample);
    const cutoff = this.latest()!.at - this.windowMs;
    let drop = 0;
    while (drop < this.samples.length && this.samples[drop].at < cutoff) drop++;
    drop = Math.max(drop, this.samples.length - this.maxSamples);
    if (drop > 0) this.samples.splice(0, drop);
    return true;
  }

  /**
   * Adds every sample (each as `add` does; undefined ones are skipped): the history the control
   * plane kept, or a batch of watch events. True when any of them was new.
   */
  addAll(samples: Iterable<UsageSample | undefined>): boolean {
    let added = false;
    for (const sample of samples) if (sample && this.add(sample)) added = true;
    return added;
  }

  /** One field over time, as a chart wants it: times in seconds, values (null where absent). */
  series(field: UsageField): [number[], Array<number | null>] {
    return [this.samples.map((s) => s.at / 1000), this.samples.map((s) => s[field] ?? null)];
  }
}
