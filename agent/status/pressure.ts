/**
 * Pressure signals (the kubelet's eviction manager, as far as node conditions go): each hard
 * threshold is met or not on each reading, and a condition stays True for the transition
 * period after its last threshold was met, so a machine hovering at the edge does not flap.
 */
import type { EvictionThresholds, Threshold } from '../config.js';
import type { MachineSample } from '../machine/types.js';

export type PressureType = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

export interface SignalReading {
  signal: keyof EvictionThresholds;
  observed: number;
  threshold: number;
}

function limit(t: Threshold, capacity: number): number {
  return t.percent !== undefined ? (t.percent / 100) * capacity : (t.value ?? 0);
}

/** The thresholds met by one reading, with what was observed against what. */
export function thresholdsMet(sample: MachineSample, thresholds: EvictionThresholds): SignalReading[] {
  const met: SignalReading[] = [];
  const check = (
    signal: keyof EvictionThresholds,
    observed: number | undefined,
    capacity: number | undefined,
  ) => {
    const t = thresholds[signal];
    if (!t || observed === undefined || capacity === undefined) return;
    const threshold = limit(t, capacity);
    if (observed < threshold) met.push({ signal, observed, threshold });
  };
  check('memory.available', sample.memoryAvailableBytes, sample.memoryTotalBytes);
  check('nodefs.available', sample.nodefsAvailableBytes, sample.nodefsCapacityBytes);
  check('nodefs.inodesFree', sample.nodefsInodesFree, sample.nodefsInodes);
  if (sample.processes !== undefined && sample.processLimit !== undefined) {
    check('pid.available', sample.processLimit - sample.processes, sample.processLimit);
  }
  return met;
}

const conditionOf: Record<keyof EvictionThresholds, PressureType> = {
  'memory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** Remembers when each condition's threshold was last met. */
export class PressureTracker {
  private readonly lastMet = new Map<PressureType, number>();
  private readonly lastReadings = new Map<PressureType, SignalReading>();

  constructor(
    private thresholds: EvictionThresholds,
    private readonly transitionMs: number,
  ) {}

  /** New thresholds (a configuration reload); conditions still clear only after the transition. */
  setThresholds(thresholds: EvictionThresholds): void {
    this.thresholds = thresholds;
  }

  /** Takes a reading at `now`; returns which conditions are under pressure. */
  observe(sample: MachineSample, now: number): Record<PressureType, boolean> {
    for (const r of thresholdsMet(sample, this.thresholds)) {
      this.lastMet.set(conditionOf[r.signal], now);
      this.lastReadings.set(conditionOf[r.signal], r);
    }
    const under = (c: PressureType) => {
      const at = this.lastMet.get(c);
      return at !== undefined && now - at < this.transitionMs;
    };
    return {
      MemoryPressure: under('MemoryPressure'),
      DiskPressure: under('DiskPressure'),
      PIDPressure: under('PIDPressure'),
    };
  }

  /** The reading that last put `c` under pressure (for messages). */
  lastReading(c: PressureType): SignalReading | undefined {
    return this.lastReadings.get(c);
  }
}
