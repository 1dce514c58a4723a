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
 * The same holds between the agents' own levels: a fleet of 10,000 starting 100,000 pods sends
 * pod status and metrics in `system` faster than one loop can take them beside the heartbeats,
 * and with both levels' seats full, every renewal waited behind that work until the leases
 * expired. So `system` (and `workload-high`, the in-process controllers) yields to `node-high`: it gives up seats while a heartbeat waited or ran
 * long in the last sample (or was refused), and takes them back once they are quick again.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Clock, TimerHandle } from '../../../client/util/clock.js';

/** Lag (p99 over a sample) above which shedding levels halve their seats: the loop delay p99 the server aims to stay under. */
export const SHED_ABOVE_MS = 50;
/** Lag below which they take back an eighth of their nominal seats per sample. */
export const RECOVER_BELOW_MS = 25;
/** How often the loop's delay is sampled and the seats adjusted. */
export const SAMPLE_MS = 500;

/** The slowest heartbeat (wait and run, in the server) above which `system` halves its seats. */
export const YIELD_ABOVE_MS = 1_000;
/** The slowest heartbeat below which it takes seats back. */
export const RECLAIM_BELOW_MS = 250;

/** When a level sheds: above `shedAboveMs` of its signal, and takes seats back below `recoverBelowMs`. */
export interface ShedBounds {
  shedAboveMs: number;
  recoverBelowMs: number;
}

export const LOOP_DELAY_BOUNDS: ShedBounds = { shedAboveMs: SHED_ABOVE_MS, recoverBelowMs: RECOVER_BELOW_MS };
export const HEARTBEAT_BOUNDS: ShedBounds = { shedAboveMs: YIELD_ABOVE_MS, recoverBelowMs: RECLAIM_BELOW_MS };

/**
 * The seats a shedding level has for the next sample, from the ones it has now, its nominal
 * seats and its signal over the last sample (ms: the loop's delay p99, or the slowest request of
 * the level it yields to). Never below an eighth of the nominal seats (at least 1): the level
 * keeps moving.
 */
export function shedSeats(
  current: number,
  nominal: number,
  signalMs: number,
  bounds: ShedBounds = LOOP_DELAY_BOUNDS,
): number {
  const floor = Math.max(1, Math.ceil(nominal / 8));
  if (signalMs > bounds.shedAboveMs) return Math.max(floor, Math.floor(current / 2));
  if (signalMs < bounds.recoverBelowMs) return Math.min(nominal, current + floor);
  return current;
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
