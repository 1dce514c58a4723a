/**
 * Exponential backoff with jitter (client-go's wait.Backoff): each failure doubles the delay
 * up to a cap; a run of good health (`resetAfterMs` since the last failure) starts it over.
 */
import type { Clock } from './clock.js';

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor?: number;
  /** Up to this fraction is added at random (1.0: the delay may double). */
  jitter?: number;
  /** After this long without a failure, the next delay is the initial one again. */
  resetAfterMs?: number;
  random?: () => number;
}

export class Backoff {
  private current: number;
  private lastFailure = -Infinity;

  constructor(
    private readonly options: BackoffOptions,
    private readonly clock: Clock,
  ) {
    this.current = options.initialMs;
  }

  /** The delay before the next attempt after a failure now. */
  next(): number {
    const now = this.clock.now();
    if (this.options.resetAfterMs !== undefined && now - this.lastFailure >= this.options.resetAfterMs) {
      this.current = this.options.initialMs;
    }
    this.lastFailure = now;
    const base = this.current;
    this.current = Math.min(this.current * (this.options.factor ?? 2), this.options.maxMs);
    return jittered(base, this.options.jitter ?? 0, this.options.random);
  }

  reset(): void {
    this.current = this.options.initialMs;
    this.lastFailure = -Infinity;
  }
}

/** `ms` plus up to `fraction` of it at random. */
export function jittered(ms: number, fraction: number, random: () => number = Math.random): number {
  return fraction > 0 ? ms + random() * fraction * ms : ms;
}

/** A uniformly random duration in [minMs, maxMs). */
export function between(minMs: number, maxMs: number, random: () => number = Math.random): number {
  return minMs + random() * (maxMs - minMs);
}
