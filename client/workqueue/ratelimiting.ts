/**
 * A delaying queue that asks a rate limiter how long to wait, after client-go's
 * util/workqueue/rate_limiting_queue.go. The usual controller loop:
 *
 *   const { item, shutdown } = await queue.get();
 *   if (shutdown) return;
 *   try { await sync(item); queue.forget(item); } catch { queue.addRateLimited(item); }
 *   finally { queue.done(item); }
 */
import { DelayingQueue } from './delaying.js';
import type { QueueOptions } from './queue.js';
import { defaultControllerRateLimiter, type RateLimiter } from './ratelimiter.js';

export interface RateLimitingQueueOptions<T> extends QueueOptions {
  /** Defaults to `defaultControllerRateLimiter(clock)`. */
  rateLimiter?: RateLimiter<T>;
}

export class RateLimitingQueue<T = string> extends DelayingQueue<T> {
  readonly rateLimiter: RateLimiter<T>;

  constructor(options: RateLimitingQueueOptions<T> = {}) {
    super(options);
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<T>(this.clock);
  }

  /** Adds `item` after the delay the rate limiter gives it (which counts a failure). */
  addRateLimited(item: T): void {
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /**
   * Stops the rate limiter tracking `item` (it succeeded, or was given up on). The worker must
   * still call `done(item)`.
   */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  /** How many times `item` was requeued since it was last forgotten. */
  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }
}

export function newRateLimitingQueue<T = string>(
  options: RateLimitingQueueOptions<T> = {},
): RateLimitingQueue<T> {
  return new RateLimitingQueue<T>(options);
}
