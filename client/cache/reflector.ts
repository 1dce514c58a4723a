/**
 * The reflector (client-go): lists a kind, then watches from the list's resourceVersion,
 * feeding every change into a store (the DeltaFIFO). It never gives up:
 * - a dropped stream resumes from the last resourceVersion seen, after a backoff
 *   (800 ms → 30 s, doubling, jittered, reset after 2 minutes of health);
 * - OUT_OF_RANGE (the resourceVersion was compacted) relists, and the store reconciles;
 * - each watch asks the server to end it after a random 5–10 minutes, then resumes;
 * - a watchdog ends a watch that has delivered neither an event nor a BOOKMARK for too long
 *   (a half-open connection that TCP would not notice for minutes).
 */
import { ApiError, isExpired } from '../api/errors.js';
import type { KindMap, KindName, ObjectLike } from '../api/types.js';
import type { Client, Watch } from '../client.js';
import { Backoff, between } from '../util/backoff.js';
import { realClock, type Clock, type TimerHandle } from '../util/clock.js';
import { Sleeper } from '../util/sleeper.js';

export interface ReflectorStore<T> {
  replace(list: T[]): void;
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
}

export interface ReflectorMetrics {
  listed(kind: string, durationMs: number, items: number): void;
  watchStarted(kind: string): void;
  relisted(kind: string): void;
  event(kind: string, type: string): void;
  watchFailed(kind: string, reason: string): void;
  resourceVersion(kind: string, rv: string): void;
}

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

export interface ReflectorOptions<K extends KindName> {
  client: Client;
  kind: K;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  store: ReflectorStore<KindMap[K]>;
  clock?: Clock;
  backoff?: { initialMs: number; maxMs: number; resetAfterMs: number; jitter: number };
  /** Server-side watch timeout, chosen at random in this range for each watch (seconds). */
  watchTimeoutSeconds?: [number, number];
  /** No event or BOOKMARK for this long ends the watch as dead (default 90 s; bookmarks come every 30 s). */
  watchdogMs?: number;
  metrics?: ReflectorMetrics;
  logger?: Logger;
  random?: () => number;
  /**
   * Whether a failed list or watch is already reported by its owner (an agent logs an outage of
   * the control plane once): then it is logged at debug, not as a warning at every retry.
   */
  reportedElsewhere?: (err: unknown) => boolean;
}

/** client-go's reflector backoff: 800 ms → 30 s, doubling, jittered, reset after 2 minutes of health. */
export const DEFAULT_BACKOFF = { initialMs: 800, maxMs: 30_000, resetAfterMs: 120_000, jitter: 1 };

const quietLogger: Logger = { info: () => undefined, warn: () => undefined };

export class Reflector<K extends KindName> {
  private readonly clock: Clock;
  private readonly backoff: Backoff;
  private stopped = false;
  private current: Watch<KindMap[K]> | undefined;
  private readonly sleeper: Sleeper;
  private lastRV = '';
  private running: Promise<void> | undefined;

  constructor(private readonly options: ReflectorOptions<K>) {
    this.clock = options.clock ?? realClock;
    this.sleeper = new Sleeper(this.clock);
    this.backoff = new Backoff(
      { ...(options.backoff ?? DEFAULT_BACKOFF), random: options.random },
      this.clock,
    );
  }

  /** The resourceVersion of the last list, event or bookmark. */
  get lastSyncResourceVersion(): string {
    return this.lastRV;
  }

  run(): Promise<void> {
    this.running ??= this.loop();
    return this.running;
  }

  stop(): void {
    this.stopped = true;
    this.current?.stop();
    this.sleeper.stop();
  }

  private get log(): Logger {
    return this.options.logger ?? quietLogger;
  }

  private async loop(): Promise<void> {
    let needList = true;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.list();
          needList = false;
        }
        await this.watch();
      } catch (err) {
        if (this.stopped) break;
        if (isExpired(err)) {
          // The resourceVersion is gone from history: only a fresh list can reconcile.
          this.options.metrics?.relisted(this.options.kind);
          this.log.info({ kind: this.options.kind, rv: this.lastRV }, 'watch expired; listing again');
          needList = true;
          continue;
        }
        const reason = err instanceof ApiError ? err.reason : 'Error';
        this.options.metrics?.watchFailed(this.options.kind, reason);
        const delay = this.backoff.next();
        const fields = { kind: this.options.kind, err: (err as Error).message, retryInMs: Math.round(delay) };
        const what = needList ? 'list failed' : 'watch ended';
        if (this.options.reportedElsewhere?.(err) && this.log.debug) this.log.debug(fields, what);
        else this.log.warn(fields, what);
        await this.sleeper.sleep(delay);
      }
    }
  }

  private async list(): Promise<void> {
    const { client, kind, namespace, labelSelector, fieldSelector } = this.options;
    const started = this.clock.now();
    const result = await client.list(kind, { namespace, labelSelector, fieldSelector });
    if (this.stopped) return;
    this.options.store.replace(result.items);
    this.setRV(result.resourceVersion);
    this.options.metrics?.listed(kind, this.clock.now() - started, result.items.length);
  }

  /** One watch from the last resourceVersion; returns when the server ends it normally. */
  private async watch(): Promise<void> {
    const { client, kind, namespace, labelSelector, fieldSelector, store } = this.options;
    const [minT, maxT] = this.options.watchTimeoutSeconds ?? [300, 600];
    const w = await client.watch(kind, {
      namespace,
      labelSelector,
      fieldSelector,
      resourceVersion: this.lastRV,
      allowWatchBookmarks: true,
      timeoutSeconds: Math.floor(between(minT, maxT, this.options.random)),
    });
    if (this.stopped) {
      w.stop();
      return;
    }
    this.current = w;
    this.options.metrics?.watchStarted(kind);
    const watchdogMs = this.options.watchdogMs ?? 90_000;
    let watchdog: TimerHandle | undefined;
    let dead = false;
    const arm = () => {
      if (watchdog) this.clock.clearTimeout(watchdog);
      watchdog = this.clock.setTimeout(() => {
        dead = true;
        w.stop();
      }, watchdogMs);
    };
    arm();
    try {
      for await (const ev of w) {
        arm();
        const obj = ev.object as KindMap[K] & ObjectLike;
        switch (ev.type) {
          case 'ADDED':
            store.add(obj);
            break;
          case 'MODIFIED':
            store.update(obj);
            break;
          case 'DELETED':
            store.delete(obj);
            break;
        }
        this.options.metrics?.event(kind, ev.type);
        const rv = obj.metadata?.resourceVersion;
        if (rv) this.setRV(rv);
      }
    } finally {
      if (watchdog) this.clock.clearTimeout(watchdog);
      this.current = undefined;
    }
    if (dead && !this.stopped) {
      // The connection went silent: dial again rather than wait for TCP to notice.
      client.reconnect();
      throw new ApiError(
        'Timeout',
        `no event or bookmark for ${Math.round(watchdogMs / 1000)} s: the connection looks dead; reconnecting`,
      );
    }
  }

  private setRV(rv: string): void {
    this.lastRV = rv;
    this.options.metrics?.resourceVersion(this.options.kind, rv);
  }
}
