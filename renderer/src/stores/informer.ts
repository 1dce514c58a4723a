/**
 * A live copy of one kind, as client-go's informer keeps it, for the GUI: list, then watch
 * from the list's resourceVersion; resume from the last seen resourceVersion when the watch or
 * the connection drops; list again when that version is too old (Expired), delivering objects
 * deleted during the gap as deletions. `status` says what the user should see: connecting,
 * live or reconnecting.
 */
import type { WatchEvent } from '../../../client/api/types.js';
import { watchEventsIn } from '../../../client/bridge/protocol.js';
import type { BridgeClient } from '../bridge/client.js';
import { BridgeRequestError } from '../bridge/client.js';

export interface ObjectLike {
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
}

export type InformerStatus = 'connecting' | 'live' | 'reconnecting';

export interface InformerOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** First wait before retrying a failed list or watch (doubles to 30 s). */
  retryMs?: number;
}

export type Change<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T };

export function objectKey(o: ObjectLike): string {
  const m = o.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name}` : (m.name ?? '');
}

export class Informer<T extends ObjectLike> {
  readonly items = new Map<string, T>();
  resourceVersion = '';
  status: InformerStatus = 'connecting';
  synced = false;
  lastError: string | undefined;
  relists = 0;
  private cancelWatch: (() => void) | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private retryMs: number;
  private stopped = true;
  private readonly listeners = new Set<(changes: Change<T>[]) => void>();
  private readonly statusListeners = new Set<() => void>();
  private unsubscribeState: (() => void) | undefined;

  /**
   * `keep` is what the informer holds of each object received (all of it by default): a
   * Secret's keys and sizes, say, and not its values.
   */
  constructor(
    private readonly bridge: BridgeClient,
    readonly kind: string,
    private readonly options: InformerOptions = {},
    private readonly keep: (received: ObjectLike) => T = (received) => received as T,
  ) {
    this.retryMs = options.retryMs ?? 1_000;
  }

  /** Changes in batches (one per list, one per watch event). */
  onChange(listener: (changes: Change<T>[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onStatus(listener: () => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribeState = this.bridge.onState((state) => {
      // Back online: resume at once instead of waiting out a retry timer.
      if (state === 'open' && this.status === 'reconnecting' && !this.cancelWatch) this.retryNow();
    });
    void this.relist();
  }

  stop(): void {
    this.stopped = true;
    this.cancelWatch?.();
    this.cancelWatch = undefined;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.unsubscribeState?.();
  }

  list(): T[] {
    return [...this.items.values()];
  }

  private setStatus(status: InformerStatus, error?: string): void {
    this.status = status;
    this.lastError = error;
    for (const l of this.statusListeners) l();
  }

  private emit(changes: Change<T>[]): void {
    if (!changes.length) return;
    for (const l of this.listeners) l(changes);
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    let result: { items: ObjectLike[]; resourceVersion: string };
    try {
      result = await this.bridge.request({
        op: 'list',
        kind: this.kind as never,
        options: {
          namespace: this.options.namespace,
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
        },
      });
    } catch (err) {
      this.retryLater(err);
      return;
    }
    if (this.stopped) return;
    this.relists++;
    const changes: Change<T>[] = [];
    const seen = new Set<string>();
    for (const received of result.items) {
      const obj = this.keep(received);
      const key = objectKey(obj);
      seen.add(key);
      const old = this.items.get(key);
      if (!old) changes.push({ type: 'ADDED', object: obj });
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        changes.push({ type: 'MODIFIED', object: obj });
      this.items.set(key, obj);
    }
    // Gone while we were not watching: deleted, with their last known state.
    for (const [key, obj] of this.items) {
      if (seen.has(key)) continue;
      this.items.delete(key);
      changes.push({ type: 'DELETED', object: obj });
    }
    this.resourceVersion = result.resourceVersion;
    this.synced = true;
    this.retryMs = this.options.retryMs ?? 1_000;
    this.emit(changes);
    this.watch();
    this.setStatus('live');
  }

  private watch(): void {
    if (this.stopped) return;
    this.cancelWatch = this.bridge.stream(
      {
        op: 'watch',
        kind: this.kind as never,
        options: {
          namespace: this.options.namespace,
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
          resourceVersion: this.resourceVersion,
          allowWatchBookmarks: true,
        },
      },
      {
        onMessage: (message) => {
          this.apply(watchEventsIn(message) as WatchEvent<ObjectLike>[]);
        },
        onEnd: (err) => {
          this.cancelWatch = undefined;
          if (this.stopped) return;
          if (!err) {
            this.watch(); // the server ended a long watch: carry on from where it was
          } else if (err.reason === 'Expired' || err.reason === 'Gone') {
            void this.relist();
          } else {
            this.retryLater(err);
          }
        },
      },
    );
  }

  /** Takes in events in order; the views hear of them once, together. */
  private apply(events: WatchEvent<ObjectLike>[]): void {
    const changes: Change<T>[] = [];
    for (const event of events) {
      const rv = event.object.metadata?.resourceVersion;
      if (rv) this.resourceVersion = rv;
      if (event.type === 'BOOKMARK') continue;
      const obj = this.keep(event.object);
      const key = objectKey(obj);
      if (event.type === 'DELETED') {
        this.items.delete(key);
        changes.push({ type: 'DELETED', object: obj });
        continue;
      }
      const type = this.items.has(key) ? 'MODIFIED' : 'ADDED';
      this.items.set(key, obj);
      changes.push({ type, object: obj });
    }
    this.emit(changes);
  }

  private retryLater(err: unknown): void {
    if (this.stopped) return;
    const message = err instanceof BridgeRequestError || err instanceof Error ? err.message : String(err);
    this.setStatus('reconnecting', message);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 30_000);
    this.retryTimer = setTimeout(() => this.retryNow(), wait);
  }

  private retryNow(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.stopped || this.cancelWatch) return;
    if (!this.synced || !this.resourceVersion) {
      void this.relist();
      return;
    }
    // Resume where we were, once the control plane answers again.
    this.bridge.request({ op: 'hello' }).then(
      () => {
        if (this.stopped || this.cancelWatch) return;
        this.watch();
        this.retryMs = this.options.retryMs ?? 1_000;
        this.setStatus('live');
      },
      (err: unknown) => this.retryLater(err),
    );
  }
}
