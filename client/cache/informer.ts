/**
 * SharedIndexInformer (client-go): one reflector and one local store per kind, shared by every
 * handler. Changes flow reflector → DeltaFIFO → the indexer, then to each handler through its
 * own unbounded buffer, so a slow handler delays only itself. A relist that finds an object
 * unchanged (same resourceVersion) is not replayed as an update; handlers that ask for a
 * periodic resync get every object again at their period.
 */
import type { KindMap, KindName, ObjectLike } from '../api/types.js';
import type { Client } from '../client.js';
import { realClock, type Clock, type TimerHandle } from '../util/clock.js';
import { DeletedFinalStateUnknown, DeltaFIFO, FifoClosedError, type Delta } from './deltafifo.js';
import { Indexer } from './indexer.js';
import { metaNamespaceKey, namespaceIndexFunc, NAMESPACE_INDEX, type IndexFunc } from './keys.js';
import {
  Reflector,
  type Logger,
  type ReflectorMetrics,
  type ReflectorOptions,
  type ReflectorStore,
} from './reflector.js';

export interface EventHandler<T> {
  onAdd?(obj: T, isInInitialList: boolean): void | Promise<void>;
  onUpdate?(oldObj: T, newObj: T): void | Promise<void>;
  /** `finalStateUnknown`: the deletion was inferred from a relist; `obj` is the last state seen. */
  onDelete?(obj: T, finalStateUnknown: boolean): void | Promise<void>;
}

export interface HandlerRegistration {
  /** The handler has been given every object of the informer's first list. */
  hasSynced(): boolean;
  /** Notifications waiting in this handler's buffer. */
  pending(): number;
  remove(): void;
}

type Notification<T> =
  | { type: 'add'; obj: T; initial: boolean }
  | { type: 'update'; old: T; obj: T }
  | { type: 'delete'; obj: T; finalStateUnknown: boolean };

class Listener<T> {
  /** Notifications not yet handled, from `head` on (those before it are handled and let go). */
  private buffer: Array<Notification<T> | undefined> = [];
  private head = 0;
  private running = false;
  private initialPending = 0;
  removed = false;
  nextResyncAt: number;

  constructor(
    private readonly handler: EventHandler<T>,
    readonly resyncMs: number,
    now: number,
    private readonly logger: Logger,
    private readonly kind: string,
    private readonly informerSynced: () => boolean,
  ) {
    this.nextResyncAt = now + resyncMs;
  }

  add(n: Notification<T>): void {
    if (this.removed) return;
    if (n.type === 'add' && n.initial) this.initialPending++;
    this.buffer.push(n);
    if (!this.running) void this.run();
  }

  hasSynced(): boolean {
    return this.informerSynced() && this.initialPending === 0;
  }

  pending(): number {
    return this.buffer.length - this.head;
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.head < this.buffer.length && !this.removed) {
        const n = this.buffer[this.head]!;
        // A handled notification must not keep its objects (old versions, deleted ones) alive.
        this.buffer[this.head++] = undefined;
        if (this.head === this.buffer.length) {
          this.buffer = [];
          this.head = 0;
        } else if (this.head > 1024 && this.head * 2 > this.buffer.length) {
          this.buffer = this.buffer.slice(this.head);
          this.head = 0;
        }
        try {
          switch (n.type) {
            case 'add':
              await this.handler.onAdd?.(n.obj, n.initial);
              break;
            case 'update':
              await this.handler.onUpdate?.(n.old, n.obj);
              break;
            case 'delete':
              await this.handler.onDelete?.(n.obj, n.finalStateUnknown);
              break;
          }
        } catch (err) {
          // A failing handler must not stop the informer or the other handlers.
          this.logger.warn({ kind: this.kind, err: (err as Error).message }, 'event handler failed');
        } finally {
          if (n.type === 'add' && n.initial) this.initialPending--;
        }
      }
    } finally {
      this.running = false;
    }
  }
}

export interface InformerOptions<K extends KindName> {
  client: Client;
  kind: K;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  indexers?: Record<string, IndexFunc<KindMap[K]>>;
  clock?: Clock;
  /** How often resync periods are checked (default 1 s). */
  resyncCheckMs?: number;
  metrics?: ReflectorMetrics;
  logger?: Logger;
  reflector?: Partial<
    Pick<
      ReflectorOptions<K>,
      'backoff' | 'watchTimeoutSeconds' | 'watchdogMs' | 'random' | 'reportedElsewhere'
    >
  >;
}

const quietLogger: Logger = { info: () => undefined, warn: () => undefined };

export class SharedIndexInformer<K extends KindName> {
  readonly indexer: Indexer<KindMap[K]>;
  private readonly fifo: DeltaFIFO<KindMap[K] & ObjectLike>;
  private readonly reflector: Reflector<K>;
  private readonly listeners = new Set<Listener<KindMap[K]>>();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private started = false;
  private stopped = false;
  private processing = false;
  private resyncTimer: TimerHandle | undefined;
  private syncWaiters: Array<() => void> = [];

  constructor(private readonly options: InformerOptions<K>) {
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? quietLogger;
    this.indexer = new Indexer<KindMap[K]>({
      [NAMESPACE_INDEX]: namespaceIndexFunc,
      ...(options.indexers ?? {}),
    } as Record<string, IndexFunc<KindMap[K]>>);
    this.fifo = new DeltaFIFO<KindMap[K] & ObjectLike>({
      keys: () => this.indexer.keys(),
      get: (k) => this.indexer.get(k) as (KindMap[K] & ObjectLike) | undefined,
    });
    this.reflector = new Reflector<K>({
      client: options.client,
      kind: options.kind,
      namespace: options.namespace,
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      store: {
        replace: (list) => {
          this.fifo.replace(list as Array<KindMap[K] & ObjectLike>);
          // An empty first list syncs the informer without anything to pop.
          queueMicrotask(() => this.checkSynced());
        },
        add: (obj) => this.fifo.add(obj as KindMap[K] & ObjectLike),
        update: (obj) => this.fifo.update(obj as KindMap[K] & ObjectLike),
        delete: (obj) => this.fifo.delete(obj as KindMap[K] & ObjectLike),
      } satisfies ReflectorStore<KindMap[K]>,
      clock: this.clock,
      metrics: options.metrics,
      logger: this.logger,
      ...options.reflector,
    });
  }

  get kind(): K {
    return this.options.kind;
  }

  /**
   * Registers a handler. Objects already in the cache are delivered to it as adds first.
   * `resyncMs` > 0: every object is delivered again as an update (old === new) at that period.
   */
  addEventHandler(handler: EventHandler<KindMap[K]>, resyncMs = 0): HandlerRegistration {
    const listener = new Listener(handler, resyncMs, this.clock.now(), this.logger, this.options.kind, () =>
      this.hasSynced(),
    );
    this.listeners.add(listener);
    if (this.started) {
      for (const obj of this.indexer.list()) listener.add({ type: 'add', obj, initial: true });
    }
    this.scheduleResync();
    return {
      hasSynced: () => listener.hasSynced(),
      pending: () => listener.pending(),
      remove: () => {
        listener.removed = true;
        this.listeners.delete(listener);
      },
    };
  }

  addIndexers(indexers: Record<string, IndexFunc<KindMap[K]>>): void {
    this.indexer.addIndexers(indexers);
  }

  /** Starts listing and watching; returns at once. */
  run(): void {
    if (this.started) return;
    this.started = true;
    void this.reflector.run();
    void this.processLoop();
    this.scheduleResync();
  }

  stop(): void {
    this.stopped = true;
    this.reflector.stop();
    this.fifo.close();
    if (this.resyncTimer) this.clock.clearTimeout(this.resyncTimer);
  }

  hasSynced(): boolean {
    return this.fifo.hasSynced() && !this.processing;
  }

  /** Resolves once the first list has been fully processed into the cache. */
  whenSynced(): Promise<void> {
    if (this.hasSynced()) return Promise.resolve();
    return new Promise((resolve) => {
      this.syncWaiters.push(resolve);
      this.checkSynced();
    });
  }

  get lastSyncResourceVersion(): string {
    return this.reflector.lastSyncResourceVersion;
  }

  /** Cached objects, optionally in one namespace. Shared and frozen: copy before changing. */
  list(namespace?: string): KindMap[K][] {
    return namespace ? this.indexer.byIndex(NAMESPACE_INDEX, namespace) : this.indexer.list();
  }

  get(name: string, namespace?: string): KindMap[K] | undefined {
    return this.indexer.get(namespace ? `${namespace}/${name}` : name);
  }

  private async processLoop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.fifo.pop((deltas, initial) => {
          this.processing = true;
          try {
            this.handleDeltas(deltas, initial);
          } finally {
            this.processing = false;
          }
        });
      } catch (err) {
        if (err instanceof FifoClosedError) return;
        this.logger.warn(
          { kind: this.options.kind, err: (err as Error).message },
          'processing a change failed',
        );
      }
      this.checkSynced();
    }
  }

  /** Wakes whoever waits for the first list (also called when that list was empty). */
  private checkSynced(): void {
    if (!this.syncWaiters.length || !this.hasSynced()) return;
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters) w();
  }

  private handleDeltas(deltas: Delta<KindMap[K] & ObjectLike>[], initial: boolean): void {
    for (const d of deltas) {
      if (d.type === 'Deleted') {
        const tombstone = d.object instanceof DeletedFinalStateUnknown;
        const obj = tombstone
          ? (d.object as DeletedFinalStateUnknown<KindMap[K]>).obj
          : (d.object as KindMap[K]);
        const key = tombstone
          ? (d.object as DeletedFinalStateUnknown<KindMap[K]>).key
          : metaNamespaceKey(obj as ObjectLike);
        this.indexer.delete(key);
        this.distribute({ type: 'delete', obj, finalStateUnknown: tombstone });
        continue;
      }
      const obj = d.object as KindMap[K] & ObjectLike;
      const key = metaNamespaceKey(obj);
      const old = this.indexer.get(key) as (KindMap[K] & ObjectLike) | undefined;
      this.indexer.set(key, obj);
      if (old === undefined) this.distribute({ type: 'add', obj, initial });
      else if (d.type !== 'Replaced' || old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) {
        // A relist that finds an object unchanged is not news to anyone.
        this.distribute({ type: 'update', old, obj });
      }
    }
  }

  private distribute(n: Notification<KindMap[K]>): void {
    for (const l of this.listeners) l.add(n);
  }

  /**
   * Every resync check, hands each handler that is due the whole cache as updates
   * (old === new), behind whatever is already in its buffer.
   */
  private scheduleResync(): void {
    if (!this.started || this.stopped || this.resyncTimer) return;
    if (![...this.listeners].some((l) => l.resyncMs > 0)) return;
    this.resyncTimer = this.clock.setTimeout(() => {
      this.resyncTimer = undefined;
      const now = this.clock.now();
      if (this.hasSynced()) {
        for (const l of this.listeners) {
          if (l.resyncMs <= 0 || now < l.nextResyncAt) continue;
          l.nextResyncAt = now + l.resyncMs;
          for (const obj of this.indexer.list()) l.add({ type: 'update', old: obj, obj });
        }
      }
      this.scheduleResync();
    }, this.options.resyncCheckMs ?? 1000);
  }
}
