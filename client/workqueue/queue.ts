/**
 * The work queue at the heart of every controller, after client-go's util/workqueue/queue.go.
 *
 * - An item is queued at most once: adding an item that is already waiting does nothing.
 * - An item is processed by at most one worker at a time: an item added while a worker holds it
 *   is marked dirty and queued again only when that worker calls `done(item)`.
 * - Otherwise items come out in the order they went in.
 *
 * Items are compared with SameValueZero (a `Set`), so in practice they are string keys.
 */
import { type Clock, realClock } from '../util/clock.js';

/** What `get()` resolves to: an item to work on, or word that the queue has shut down. */
export type GetResult<T> = { item: T; shutdown: false } | { item: undefined; shutdown: true };

/**
 * Hooks a queue calls as work moves through it; one instance per queue, already bound to the
 * queue's name (see `QueueMetricsProvider`). All durations are in seconds.
 */
export interface QueueMetrics {
  /** An item became dirty (a real add: not a duplicate, not while shutting down). */
  add(): void;
  /** The number of items waiting for a worker changed to `n`. */
  depth(n: number): void;
  /** A worker took an item that had waited `waitSeconds` since it was added. */
  get(waitSeconds: number): void;
  /** A worker finished an item it had held for `workSeconds`. */
  done(workSeconds: number): void;
  /** `addAfter`/`addRateLimited` was called (client-go's retries counter). */
  retry(): void;
}

/** What a metrics sink may ask a queue at any time, e.g. when it is scraped. */
export interface UnfinishedWork {
  /** Sum of how long every item now being processed has been held, in seconds. */
  unfinishedWorkSeconds(): number;
  /** How long the longest-held item now being processed has been held, in seconds. */
  longestRunningProcessorSeconds(): number;
}

/** Makes the metrics of one named queue; see `prometheusQueueMetrics` in metrics.ts. */
export interface QueueMetricsProvider {
  forQueue(name: string, work: UnfinishedWork): QueueMetrics;
}

export interface QueueOptions {
  /** Names the queue in metrics. A queue without a name reports no metrics (as in client-go). */
  name?: string;
  /** Time source for metrics (and, in DelayingQueue, for delays). Defaults to the real clock. */
  clock?: Clock;
  metrics?: QueueMetricsProvider;
}

type Waiter<T> = (result: GetResult<T>) => void;

export class Queue<T = string> implements UnfinishedWork {
  readonly name: string;
  protected readonly clock: Clock;
  protected readonly metrics: QueueMetrics | undefined;

  /** Order of work. Every element is in `dirty` and not in `processing`. */
  private queue: T[] = [];
  /** Index of the head of `queue` (shifting a large array is O(n); compacted now and then). */
  private head = 0;
  /** Everything that needs processing. */
  private readonly dirty = new Set<T>();
  /** Everything a worker holds now, with when the worker took it (clock ms). */
  private readonly processing = new Map<T, number>();
  /** When each dirty item was first added (clock ms), for the queue-duration metric. */
  private readonly addTimes = new Map<T, number>();
  /** Callers of `get()` waiting for an item, oldest first. */
  private waiters: Array<Waiter<T>> = [];
  /** Callers of `shutDownWithDrain()` waiting for in-flight work to finish. */
  private drainWaiters: Array<() => void> = [];
  private isShuttingDown = false;

  constructor(options: QueueOptions = {}) {
    this.name = options.name ?? '';
    this.clock = options.clock ?? realClock;
    this.metrics = this.name && options.metrics ? options.metrics.forQueue(this.name, this) : undefined;
  }

  /** Marks `item` as needing processing. Ignored once the queue is shutting down. */
  add(item: T): void {
    if (this.isShuttingDown || this.dirty.has(item)) return;
    this.dirty.add(item);
    if (!this.addTimes.has(item)) this.addTimes.set(item, this.clock.now());
    this.metrics?.add();
    this.metrics?.depth(this.dirty.size);
    // A worker holds it: `done()` will queue it again.
    if (this.processing.has(item)) return;
    this.queue.push(item);
    this.dispatch();
  }

  /** Items waiting for a worker (not counting dirty items a worker still holds). */
  len(): number {
    return this.queue.length - this.head;
  }

  /**
   * Waits for an item to process. Call `done(item)` when finished with it. Resolves with
   * `shutdown: true` once the queue is shutting down and has nothing left to hand out; the
   * worker should then stop. As in client-go, items queued before the shutdown are still
   * handed out.
   */
  get(): Promise<GetResult<T>> {
    if (this.len() > 0) return Promise.resolve(this.take());
    if (this.isShuttingDown) return Promise.resolve({ item: undefined, shutdown: true });
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Marks `item` as processed. If it was added again meanwhile, it is queued again now.
   * Calling it for an item no worker holds does nothing.
   */
  done(item: T): void {
    const started = this.processing.get(item);
    if (started === undefined) return;
    this.processing.delete(item);
    this.metrics?.done(this.secondsSince(started));
    if (this.dirty.has(item)) {
      this.queue.push(item);
      this.dispatch();
    }
    if (this.processing.size === 0) this.resolveDrainWaiters();
  }

  /** Ignores further adds and tells idle workers to stop (`get()` resolves `shutdown: true`). */
  shutDown(): void {
    this.shutdown();
    // Also ends a `shutDownWithDrain()` that is still waiting.
    this.resolveDrainWaiters();
  }

  /**
   * Ignores further adds, tells idle workers to stop, and resolves once every item a worker
   * holds has been `done()`. Workers must keep calling `done()`, or this never resolves;
   * `shutDown()` afterwards ends the wait at once.
   */
  shutDownWithDrain(): Promise<void> {
    this.shutdown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Nothing waiting and nothing in a worker's hands (delayed items not counted). */
  isIdle(): boolean {
    return this.dirty.size === 0 && this.processing.size === 0;
  }

  shuttingDown(): boolean {
    return this.isShuttingDown;
  }

  unfinishedWorkSeconds(): number {
    let total = 0;
    for (const started of this.processing.values()) total += this.secondsSince(started);
    return total;
  }

  longestRunningProcessorSeconds(): number {
    let oldest = 0;
    for (const started of this.processing.values()) oldest = Math.max(oldest, this.secondsSince(started));
    return oldest;
  }

  protected shutdown(): void {
    this.isShuttingDown = true;
    // `dispatch` never leaves an idle waiter beside a queued item, so every waiter gets `shutdown`.
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve({ item: undefined, shutdown: true });
  }

  /** Hands queued items to waiting getters, oldest first on both sides. */
  private dispatch(): void {
    while (this.waiters.length > 0 && this.len() > 0) {
      const resolve = this.waiters.shift()!;
      resolve(this.take());
    }
  }

  /** Moves the head of the queue to `processing`. The caller checked `len() > 0`. */
  private take(): GetResult<T> {
    const item = this.queue[this.head];
    this.queue[this.head] = undefined as T; // let it be collected
    this.head++;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    const now = this.clock.now();
    this.processing.set(item, now);
    this.dirty.delete(item);
    const added = this.addTimes.get(item);
    this.addTimes.delete(item);
    this.metrics?.depth(this.dirty.size);
    this.metrics?.get(added === undefined ? 0 : (now - added) / 1000);
    return { item, shutdown: false };
  }

  private resolveDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private secondsSince(ms: number): number {
    return Math.max(0, this.clock.now() - ms) / 1000;
  }
}
