/**
 * The loop every controller runs: informer handlers enqueue keys, workers take a key, call
 * `sync(key)`, forget the key on success and requeue it rate-limited on error. A key is never
 * synced by two workers at once (the workqueue guarantees it).
 */
import type { Clock } from '../../client/util/clock.js';
import { nextTurn } from '../../client/util/nextturn.js';
import { defaultControllerRateLimiter } from '../../client/workqueue/ratelimiter.js';
import { newRateLimitingQueue, type RateLimitingQueue } from '../../client/workqueue/ratelimiting.js';
import type { QueueMetricsProvider } from '../../client/workqueue/queue.js';
import type { Logger } from '../logging.js';
import type { Controller } from './types.js';

export interface KeyWorkerOptions {
  name: string;
  clock: Clock;
  logger: Logger;
  metrics?: QueueMetricsProvider;
}

export class KeyWorker {
  readonly queue: RateLimitingQueue<string>;
  private workers: Promise<void>[] = [];

  constructor(
    private readonly options: KeyWorkerOptions,
    private readonly sync: (key: string) => Promise<void>,
  ) {
    this.queue = newRateLimitingQueue<string>({
      name: options.name,
      clock: options.clock,
      metrics: options.metrics,
      rateLimiter: defaultControllerRateLimiter(options.clock),
    });
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  enqueueAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  run(workers: number): void {
    for (let i = 0; i < workers; i++) this.workers.push(this.work());
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    await Promise.all(this.workers);
  }

  /**
   * Resolves once no key is queued or in work for two turns of the event loop running (for
   * tests); keys waiting out a delay do not count.
   */
  async idle(): Promise<void> {
    for (let quiet = 0; quiet < 2;) {
      await nextTurn();
      quiet = this.queue.isIdle() ? quiet + 1 : 0;
    }
  }

  private async work(): Promise<void> {
    for (;;) {
      const next = await this.queue.get();
      if (next.shutdown) return;
      const key = next.item;
      try {
        await this.sync(key);
        this.queue.forget(key);
      } catch (err) {
        const retries = this.queue.numRequeues(key);
        this.options.logger.warn(
          { controller: this.options.name, key, retries, err: (err as Error).message },
          'sync failed; will retry',
        );
        this.queue.addRateLimited(key);
      } finally {
        this.queue.done(key);
      }
    }
  }
}

/** A controller whose work is one KeyWorker: running, stopping and idling are the worker's. */
export abstract class WorkerController implements Controller {
  protected abstract readonly worker: KeyWorker;

  run(workers: number): void {
    this.worker.run(workers);
  }

  async stop(): Promise<void> {
    await this.worker.stop();
  }

  /** Resolves once no key is queued or in work (for tests). */
  idle(): Promise<void> {
    return this.worker.idle();
  }
}
