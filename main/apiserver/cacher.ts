/**
 * Keeps one WatchCache per kind in step with the store through a single watch on the whole
 * keyspace: every cache learns every revision, so bookmarks and freshness checks use the
 * store's global revision. If the store's watch fails (compaction overtook us, or the backend
 * was unreachable for too long) the caches are rebuilt from a fresh list and every client
 * watch ends as expired, so clients relist; nothing is ever silently skipped.
 */
import { ApiError } from '../../client/api/errors.js';
import type { KindInfo } from '../../client/api/kinds.js';
import type { KubeObject } from '../../client/api/types.js';
import type { Clock } from '../../client/util/clock.js';
import type { Logger } from '../logging.js';
import type { Storage, StorageEvent, WatchHandle } from '../storage/types.js';
import { decodeStored, kindOfKey, REGISTRY_PREFIX } from './codec.js';
import { WatchCache, type CacheEvent, type CachedObject } from './watchcache.js';

export interface CacherOptions {
  clock: Clock;
  logger: Logger;
  historyMs?: number;
  historyMax?: number;
  /** BOOKMARK period (default 30 s): clients use bookmarks to tell a quiet watch from a dead one. */
  bookmarkMs?: number;
  /** How long a consistent read waits for the cache before reading the store (default 3 s). */
  freshnessTimeoutMs?: number;
}

type FieldGetter = (obj: KubeObject, field: string) => string | undefined;

/**
 * The watch-cache history window, as Kubernetes' (eventFreshDuration): long enough for a
 * watcher that lost its connection to resume from its last event or bookmark; older
 * resourceVersions get "too old" and the client lists again. Every event in the window holds
 * its object, so at 5,000 nodes renewing leases and posting metrics the window is what fills
 * the heap: 75 s of it, not 5 minutes.
 */
export const DEFAULT_HISTORY_MS = 75_000;
/** At most this many events per kind, whatever the window (Kubernetes: 100 × 1,024). */
export const DEFAULT_HISTORY_MAX = 100_000;
/**
 * How often each watcher that asked for them gets a BOOKMARK: well inside the history window,
 * so a watcher that resumes from its last bookmark finds it there, and often enough for the
 * informers' watchdog (90 s) to tell a quiet watch from a dead one.
 */
export const DEFAULT_BOOKMARK_MS = 30_000;
const BOOKMARK_SLICES = 10;

export class Cacher {
  private readonly caches = new Map<string, WatchCache>();
  private storeWatch: WatchHandle | undefined;
  private revision = 0;
  private waiters: Array<{ rv: number; resolve(ok: boolean): void }> = [];
  private bookmarkTimer: ReturnType<Clock['setTimeout']> | undefined;
  private bookmarkSlice = 0;
  private stopped = false;
  private ready: Promise<void> | undefined;

  constructor(
    private readonly storage: Storage,
    kinds: Array<{ info: KindInfo; getField: FieldGetter; selectableFields?: readonly string[] }>,
    private readonly options: CacherOptions,
  ) {
    for (const k of kinds) {
      this.caches.set(
        k.info.plural,
        new WatchCache(k.info, k.getField, {
          historyMs: options.historyMs ?? DEFAULT_HISTORY_MS,
          historyMax: options.historyMax ?? DEFAULT_HISTORY_MAX,
          now: () => options.clock.now(),
          selectableFields: k.selectableFields,
        }),
      );
    }
  }

  cache(info: KindInfo): WatchCache {
    const c = this.caches.get(info.plural);
    if (!c) throw new Error(`no watch cache for ${info.kind}`);
    return c;
  }

  get resourceVersion(): number {
    return this.revision;
  }

  /** Lists the store and starts watching it; resolves when every cache is filled. */
  start(): Promise<void> {
    this.ready ??= this.load();
    this.scheduleBookmark();
    return this.ready;
  }

  private async load(): Promise<void> {
    const revision = await this.storage.currentRevision();
    const byKind = new Map<string, CachedObject[]>();
    let startKey: string | undefined;
    // Paged, so a large store does not become one huge response (etcd) or one long stall.
    for (;;) {
      const page = await this.storage.list(REGISTRY_PREFIX, { revision, limit: 5000, startKey });
      for (const kv of page.items) {
        const plural = kindOfKey(kv.key);
        if (!plural || !this.caches.has(plural)) continue;
        const list = byKind.get(plural) ?? [];
        list.push({ key: kv.key, object: decodeStored(kv.value, kv.modRevision), rv: kv.modRevision });
        byKind.set(plural, list);
      }
      if (page.remaining === 0 || page.items.length === 0) break;
      startKey = page.items[page.items.length - 1].key + '\0';
    }
    for (const [plural, cache] of this.caches) cache.reset(byKind.get(plural) ?? [], revision);
    this.setRevision(revision);
    this.storeWatch?.cancel();
    this.storeWatch = this.storage.watch('', revision, {
      onEvents: (events) => this.onStoreEvents(events),
      onProgress: (rv) => this.setRevision(rv),
      onError: (err) => {
        if (this.stopped) return;
        this.options.logger.warn(
          { err: err.message, code: err.code },
          'store watch ended; rebuilding the watch caches',
        );
        this.ready = this.retryLoad();
      },
    });
  }

  private async retryLoad(): Promise<void> {
    let delay = 200;
    while (!this.stopped) {
      try {
        await this.load();
        return;
      } catch (err) {
        this.options.logger.error(
          { err: (err as Error).message },
          `cannot list the store; retrying in ${delay} ms`,
        );
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 10_000);
      }
    }
  }

  private onStoreEvents(events: StorageEvent[]): void {
    const now = this.options.clock.now();
    const perKind = new Map<WatchCache, CacheEvent[]>();
    // A key written twice in one batch: its second event follows the first, not the cache's
    // state before the batch (which the caches only reach in apply below).
    const inBatch = new Map<string, CachedObject | null>();
    let maxRv = this.revision;
    for (const e of events) {
      if (e.revision > maxRv) maxRv = e.revision;
      const plural = kindOfKey(e.key);
      const cache = plural ? this.caches.get(plural) : undefined;
      if (!cache) continue;
      const seen = inBatch.get(e.key);
      const prev = seen === undefined ? cache.get(e.key) : (seen ?? undefined);
      let object: KubeObject;
      try {
        // Sharing what did not change with the version it replaces (sharedversions.ts).
        object = decodeStored(e.value, e.revision, prev?.object);
      } catch (err) {
        this.options.logger.error(
          { key: e.key, err: (err as Error).message },
          'undecodable object in the store; skipped',
        );
        continue;
      }
      // The key string of the version it replaces: a history of thousands of versions shares one.
      const cur: CachedObject = { key: prev?.key ?? e.key, object, rv: e.revision };
      const type = e.type === 'delete' ? 'DELETED' : prev ? 'MODIFIED' : 'ADDED';
      let list = perKind.get(cache);
      if (!list) perKind.set(cache, (list = []));
      list.push({ type, rv: e.revision, cur, prev, at: now });
      inBatch.set(e.key, type === 'DELETED' ? null : cur);
    }
    for (const [cache, list] of perKind) cache.apply(list);
    this.setRevision(maxRv);
  }

  private setRevision(rv: number): void {
    if (rv <= this.revision) return;
    this.revision = rv;
    for (const cache of this.caches.values()) cache.advance(rv);
    if (this.waiters.length) {
      const still: typeof this.waiters = [];
      for (const w of this.waiters) {
        if (w.rv <= rv) w.resolve(true);
        else still.push(w);
      }
      this.waiters = still;
    }
  }

  /**
   * Waits until the caches reflect revision `rv` (a consistent read after a write, or a
   * client asking for at least a revision). Resolves false on timeout.
   */
  waitFor(rv: number, timeoutMs = this.options.freshnessTimeoutMs ?? 3000): Promise<boolean> {
    if (rv <= this.revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        rv,
        resolve: (ok: boolean) => {
          clearTimeout(timer);
          resolve(ok);
        },
      };
      // Real time, not the injectable clock: this bounds a network wait, not product logic.
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      timer.unref?.();
      this.waiters.push(waiter);
    });
  }

  /** Waits until the caches reflect the store's current revision. */
  async waitUntilFresh(): Promise<boolean> {
    await this.start();
    return this.waitFor(await this.storage.currentRevision());
  }

  /**
   * Every watcher that asked for bookmarks gets one per period, the watchers dealt into
   * BOOKMARK_SLICES slices that go out one after another: with thousands of agents watching
   * their Node and their pods, a period's bookmarks are a trickle, not one burst that holds
   * the event loop.
   */
  private scheduleBookmark(): void {
    if (this.stopped || this.bookmarkTimer) return;
    const period = this.options.bookmarkMs ?? DEFAULT_BOOKMARK_MS;
    this.bookmarkTimer = this.options.clock.setTimeout(() => {
      this.bookmarkTimer = undefined;
      const slice = this.bookmarkSlice;
      this.bookmarkSlice = (slice + 1) % BOOKMARK_SLICES;
      for (const cache of this.caches.values()) cache.bookmark(slice, BOOKMARK_SLICES);
      this.scheduleBookmark();
    }, period / BOOKMARK_SLICES);
  }

  stop(): void {
    this.stopped = true;
    this.storeWatch?.cancel();
    if (this.bookmarkTimer) this.options.clock.clearTimeout(this.bookmarkTimer);
    const err = new ApiError('Unavailable', 'the server is shutting down; watch again when it is back');
    for (const cache of this.caches.values()) cache.close(err);
    for (const w of this.waiters) w.resolve(false);
    this.waiters = [];
  }
}
