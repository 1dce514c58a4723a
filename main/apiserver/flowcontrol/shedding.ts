/**
 * Seats that follow the event loop. Priority levels bound how many requests run at once, not how
 * much of the one CPU core they take: a tool flooding creates through global-default's 64 seats
 * can keep the loop saturated on its own, and every lease renewal then waits through its
 * backed-up turns (on 2 cores at 5,000 nodes, a 10× flood took renewals to p99 1.5 s while
 * node-high never waited for a seat). So the levels marked `shedUnderLoad` give up seats while
 * the loop lags and take them back as it recovers — additive increase, multiplicative decrease,
 * as a TCP sender does with its window — and their requests wait in their queue (or are refused
 * with a retry hint) instead of taking the loop from the agents.
 *
 * Seats bound concurrency, not CPU: a create holds its seat for ~1.4 ms of the main thread (the
 * SQLite commit runs on its own thread), so even a few seats let a flood take most of a core
 * (measured: ~700 creates/s through the floor's seats, renewals p99 4.7 s). So while a level
 * sheds, its admissions are also spaced out to a rate that halves with each lagging sample (from
 * what it was admitting) and doubles with each quiet one, until its seats are all back.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Clock, TimerHandle } from '../../../client/util/clock.js';

/** Lag (p99 over a sample) above which shedding levels halve their seats: the loop delay p99 the server aims to stay under. */
export const SHED_ABOVE_MS = 50;
/** Lag below which they take back an eighth of their nominal seats per sample. */
export const RECOVER_BELOW_MS = 25;
/** How often the loop's delay is sampled and the seats adjusted. */
export const SAMPLE_MS = 500;

/**
 * The seats a shedding level has for the next sample, from the ones it has now, its nominal
 * seats and the loop's delay p99 over the last sample. Never below an eighth of the nominal
 * seats (at least 1): the level keeps moving.
 */
export function shedSeats(current: number, nominal: number, loopDelayP99Ms: number): number {
  const floor = Math.max(1, Math.ceil(nominal / 8));
  if (loopDelayP99Ms > SHED_ABOVE_MS) return Math.max(floor, Math.floor(current / 2));
  if (loopDelayP99Ms < RECOVER_BELOW_MS) return Math.min(nominal, current + floor);
  return current;
}

/** The slowest a shedding level is made to admit: it keeps moving. */
export const MIN_ADMISSIONS_PER_SEC = 10;

/**
 * The admissions per second a shedding level may make in the next sample (undefined: as many as
 * its seats allow), from its current rate, what it admitted per second in the last sample, the
 * loop's delay p99 over that sample, and whether its seats are all back.
 */
export function shedRate(
  current: number | undefined,
  admittedPerSec: number,
  loopDelayP99Ms: number,
  seatsRecovered: boolean,
): number | undefined {
  if (loopDelayP99Ms > SHED_ABOVE_MS)
    return Math.max(MIN_ADMISSIONS_PER_SEC, Math.min(current ?? Infinity, admittedPerSec) / 2);
  if (current === undefined || seatsRecovered) return undefined;
  return loopDelayP99Ms < RECOVER_BELOW_MS ? current * 2 : current;
}

/** Samples this thread's event-loop delay every SAMPLE_MS and reports its p99 (ms). */
export class LoopDelaySampler {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private timer: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly report: (p99Ms: number) => void,
  ) {}

  start(): void {
    this.histogram.enable();
    this.schedule();
  }

  stop(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.histogram.disable();
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(() => {
      const p99Ms = this.histogram.count ? this.histogram.percentile(99) / 1e6 : 0;
      this.histogram.reset();
      this.report(p99Ms);
      this.schedule();
    }, SAMPLE_MS);
  }
}
