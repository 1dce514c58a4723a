/**
 * How long a failed item waits before its next try, after client-go's
 * util/workqueue/default_rate_limiters.go. All durations are milliseconds.
 */
import { type Clock, realClock } from '../util/clock.js';

export interface RateLimiter<T = string> {
  /** How long `item` should wait before its next try; counts a failure for it. */
  when(item: T): number;
  /** Stops tracking `item` (it succeeded, or was given up on). */
  forget(item: T): void;
  /** How many failures `item` has had since it was last forgotten. */
  numRequeues(item: T): number;
}

/** `baseMs * 2^failures` per item, capped at `maxMs`. */
export class ItemExponentialFailureRateLimiter<T = string> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}

  when(item: T): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    // 2 ** exp becomes Infinity for huge counts, never wraps round.
    const backoff = this.baseMs * 2 ** exp;
    return Number.isFinite(backoff) && backoff <= this.maxMs ? backoff : this.maxMs;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** `fastMs` for the first `maxFastAttempts` failures of an item, `slowMs` after that. */
export class ItemFastSlowRateLimiter<T = string> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    private readonly fastMs: number,
    private readonly slowMs: number,
    private readonly maxFastAttempts: number,
  ) {}

  when(item: T): number {
    const n = (this.failures.get(item) ?? 0) + 1;
    this.failures.set(item, n);
    return n <= this.maxFastAttempts ? this.fastMs : this.slowMs;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/**
 * An overall token bucket shared by all items: `burst` tokens, refilled at `qps` per second.
 * Each `when()` reserves a token and returns how long until it is available, like
 * golang.org/x/time/rate's `Reserve().Delay()`. It tracks no items.
 */
export class BucketRateLimiter<T = string> implements RateLimiter<T> {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps = 10,
    private readonly burst = 100,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0)) throw new RangeError(`BucketRateLimiter: qps must be > 0, got ${qps}`);
    if (!(burst >= 1) && qps !== Infinity) {
      throw new RangeError(`BucketRateLimiter: burst must be >= 1, got ${burst}`);
    }
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_item: T): number {
    if (this.qps === Infinity) return 0;
    this.refill();
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    // Whole nanoseconds, so float noise cannot turn 100 ms into 99.99999999999999.
    return Math.round((-this.tokens * 1_000_000_000) / this.qps) / 1_000_000;
  }

  /** Takes a token if one is there now (flowcontrol's TryAccept); never reserves one. */
  tryAccept(): boolean {
    if (this.qps === Infinity) return true;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }

  private refill(): void {
    const now = this.clock.now();
    // A clock that stepped back refills nothing (x/time/rate does the same).
    const elapsed = Math.max(0, now - this.last);
    // Rounded to nanotokens, so ten refills of 0.1 make a whole token.
    const tokens = Math.round((this.tokens + (elapsed * this.qps) / 1000) * 1e9) / 1e9;
    this.tokens = Math.min(this.burst, tokens);
    this.last = now;
  }
}

/** Asks every limiter and waits for the longest answer. */
export class MaxOfRateLimiter<T = string> implements RateLimiter<T> {
  private readonly limiters: ReadonlyArray<RateLimiter<T>>;

  constructor(...limiters: Array<RateLimiter<T>>) {
    this.limiters = limiters;
  }

  when(item: T): number {
    // Every limiter must see the failure (the bucket reserves a token), so no short-circuit.
    let ms = 0;
    for (const limiter of this.limiters) ms = Math.max(ms, limiter.when(item));
    return ms;
  }

  forget(item: T): void {
    for (const limiter of this.limiters) limiter.forget(item);
  }

  numRequeues(item: T): number {
    let n = 0;
    for (const limiter of this.limiters) n = Math.max(n, limiter.numRequeues(item));
    return n;
  }
}

/** Caps another limiter's answer at `maxMs`. */
export class WithMaxWaitRateLimiter<T = string> implements RateLimiter<T> {
  constructor(
    private readonly limiter: RateLimiter<T>,
    private readonly maxMs: number,
  ) {}

  when(item: T): number {
    return Math.min(this.limiter.when(item), this.maxMs);
  }

  forget(item: T): void {
    this.limiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }
}

/**
 * client-go's DefaultControllerRateLimiter: per item 5 ms doubling to 1000 s, and overall
 * 10 retries per second with bursts of 100.
 */
export function defaultControllerRateLimiter<T = string>(clock: Clock = realClock): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(5, 1_000_000),
    new BucketRateLimiter<T>(10, 100, clock),
  );
}
