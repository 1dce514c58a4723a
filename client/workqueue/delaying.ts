/**
 * A work queue that can add an item later, after client-go's util/workqueue/delaying_queue.go.
 * Requeueing after a failure goes through here so a failing item cannot hot-loop.
 */
import type { TimerHandle } from '../util/clock.js';
import { Queue, type QueueOptions } from './queue.js';

interface Waiting {
  readyAt: number;
  timer: TimerHandle;
}

export class DelayingQueue<T = string> extends Queue<T> {
  /** Items waiting for their delay to pass, at most one entry (and one timer) per item. */
  private readonly waiting = new Map<T, Waiting>();

  constructor(options: QueueOptions = {}) {
    super(options);
  }

  /**
   * Adds `item` once `ms` have passed on the queue's clock (at once if `ms <= 0`). If the item
   * is already waiting, it keeps whichever ready time is earlier. Ignored while shutting down.
   */
  addAfter(item: T, ms: number): void {
    if (this.shuttingDown()) return;
    this.metrics?.retry();
    if (!(ms > 0)) {
      this.add(item);
      return;
    }
    const readyAt = this.clock.now() + ms;
    const existing = this.waiting.get(item);
    if (existing) {
      if (existing.readyAt <= readyAt) return;
      this.clock.clearTimeout(existing.timer);
    }
    const timer = this.clock.setTimeout(() => {
      this.waiting.delete(item);
      this.add(item);
    }, ms);
    this.waiting.set(item, { readyAt, timer });
  }

  /** Items waiting for their delay (not yet in the queue proper). */
  waitingLen(): number {
    return this.waiting.size;
  }

  protected override shutdown(): void {
    for (const { timer } of this.waiting.values()) this.clock.clearTimeout(timer);
    this.waiting.clear();
    super.shutdown();
  }
}
