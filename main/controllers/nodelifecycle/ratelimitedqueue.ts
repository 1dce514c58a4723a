/**
 * A set of node names worked through at a limited rate (Kubernetes' RateLimitedTimedQueue):
 * one per zone, so that a zone losing many nodes at once taints them one by one, at the
 * zone's current eviction rate, instead of all at once.
 */
import type { Clock } from '../../../client/util/clock.js';
import { BucketRateLimiter } from '../../../client/workqueue/ratelimiter.js';

export interface TimedValue {
  value: string;
  /** When it was queued. */
  addedAt: number;
  /** Not before this time (a failed attempt pushes it back). */
  processAt: number;
}

/** What became of one item: done, or try again after `retryAfterMs`. */
export type TryResult = { done: true } | { done: false; retryAfterMs: number };

export class RateLimitedTimedQueue {
  private readonly items = new Map<string, TimedValue>();
  private limiter: BucketRateLimiter | undefined;
  private currentQps = -1;

  constructor(
    private readonly clock: Clock,
    qps: number,
  ) {
    this.swapLimiter(qps);
  }

  get qps(): number {
    return this.currentQps;
  }

  get size(): number {
    return this.items.size;
  }

  /** Queues `value`; false if it is already queued. */
  add(value: string): boolean {
    if (this.items.has(value)) return false;
    const now = this.clock.now();
    this.items.set(value, { value, addedAt: now, processAt: now });
    return true;
  }

  remove(value: string): boolean {
    return this.items.delete(value);
  }

  has(value: string): boolean {
    return this.items.has(value);
  }

  /**
   * Changes the rate; 0 stops the queue. Like Kubernetes, a new rate starts with a full
   * bucket (of one), so the first item after a change goes at once.
   */
  swapLimiter(qps: number): void {
    if (qps === this.currentQps) return;
    this.currentQps = qps;
    this.limiter = qps > 0 ? new BucketRateLimiter(qps, 1, this.clock) : undefined;
  }

  /** Works the due items, oldest first, for as long as the rate allows. */
  async try(fn: (item: TimedValue) => Promise<TryResult>): Promise<void> {
    const due = [...this.items.values()].sort((a, b) => a.processAt - b.processAt);
    for (const item of due) {
      if (this.items.get(item.value) !== item) continue;
      if (item.processAt > this.clock.now()) break;
      if (!this.limiter?.tryAccept()) break;
      const result = await fn(item);
      // It may have been removed (the node recovered or went) while we worked on it.
      if (this.items.get(item.value) !== item) continue;
      if (result.done) this.items.delete(item.value);
      else item.processAt = this.clock.now() + result.retryAfterMs;
    }
  }
}
