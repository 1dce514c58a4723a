/**
 * Pieces of the informer benchmark: Pods that look like a controller's (labels, an owner, a
 * node), three event handlers doing a controller's kind of work, a tracker of when each write
 * has reached every handler, a client whose watches can be held back (to build a backlog), and
 * a reading of the reflector's Prometheus metrics.
 */
import type { Registry } from 'prom-client';
import type { KindMap, KindName, Pod } from '../../../client/api/types.js';
import type { EventHandler } from '../../../client/cache/informer.js';
import { WatchQueue, type Client, type Watch, type WatchOptions } from '../../../client/client.js';
import { benchPod, SEQ_ANNOTATION } from './systems.js';
import { nowMs, percentileSorted, sleep, sortedCopy } from './stats.js';

/** Owners (DaemonSet-like) and nodes the Pods are spread over. */
const OWNERS = 20;
const NODES = 50;

function ownerUid(i: number): string {
  return `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
}

/** A ~1 KiB Pod (see systems.ts' padding) with labels, a controller owner and a node. */
export function informerPod(name: string, namespace: string, i: number): Pod {
  const pod = benchPod(name, namespace);
  const owner = i % OWNERS;
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      labels: { app: `app-${owner}`, tier: i % 2 ? 'backend' : 'frontend' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          name: `ds-${owner}`,
          uid: ownerUid(owner),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { ...pod.spec, nodeName: `node-${i % NODES}` },
  };
}

/** The same Pod, carrying write number `seq` (what the handlers report back). */
export function withSeq(pod: Pod, seq: number): Pod {
  const meta = pod.metadata ?? {};
  return {
    ...pod,
    metadata: { ...meta, annotations: { ...meta.annotations, [SEQ_ANNOTATION]: String(seq) } },
  };
}

/**
 * When each write (by sequence number) was sent and when its event had been handled by every
 * handler: lag = all handlers done − write call.
 */
export class DeliveryTracker {
  private readonly sentAt: Float64Array;
  private readonly doneAt: Float64Array;
  private readonly ackAt: Float64Array;
  private readonly handledBy: Uint8Array;
  private next = 0;
  private waiter: { until: number; wake: () => void } | undefined;
  /** Every seq below this one has been handled by every handler. */
  private doneBelow = 0;

  constructor(
    readonly capacity: number,
    private readonly handlers: number,
  ) {
    this.sentAt = new Float64Array(capacity);
    this.doneAt = new Float64Array(capacity);
    this.ackAt = new Float64Array(capacity);
    this.handledBy = new Uint8Array(capacity);
  }

  /** The next sequence number (writes are numbered in the order they are issued). */
  take(): number {
    if (this.next >= this.capacity) throw new Error(`more than ${this.capacity} writes; raise the capacity`);
    return this.next++;
  }

  get issued(): number {
    return this.next;
  }

  sent(seq: number, at = nowMs()): void {
    this.sentAt[seq] = at;
  }

  /** The write call returned. */
  acked(seq: number, at = nowMs()): void {
    this.ackAt[seq] = at;
  }

  /** Called by each handler once it has dealt with `pod`. */
  handled(pod: Pod): void {
    const s = pod.metadata?.annotations?.[SEQ_ANNOTATION];
    if (s === undefined) return;
    const seq = Number(s);
    if (++this.handledBy[seq] !== this.handlers) return;
    this.doneAt[seq] = nowMs();
    while (this.doneBelow < this.next && this.handledBy[this.doneBelow] >= this.handlers) this.doneBelow++;
    if (this.waiter && this.doneBelow >= this.waiter.until) this.waiter.wake();
  }

  /** Waits until every write below `until` has been handled (false on timeout). */
  async waitAll(until: number, timeoutMs: number): Promise<boolean> {
    if (this.doneBelow >= until) return true;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        new Promise<boolean>((resolve) => (this.waiter = { until, wake: () => resolve(true) })),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
    } finally {
      clearTimeout(timer);
      this.waiter = undefined;
    }
  }

  /** Lags and rates of writes [from, to); `startMs` is when delivery could start (default: first write). */
  window(from: number, to: number, startMs?: number): DeliveryWindow {
    const lags: number[] = [];
    const writes: number[] = [];
    let firstSent = Infinity;
    let lastDone = 0;
    let firstDone = Infinity;
    let missing = 0;
    for (let seq = from; seq < to; seq++) {
      firstSent = Math.min(firstSent, this.sentAt[seq]);
      writes.push(this.ackAt[seq] - this.sentAt[seq]);
      if (this.handledBy[seq] < this.handlers) {
        missing++;
        continue;
      }
      lastDone = Math.max(lastDone, this.doneAt[seq]);
      firstDone = Math.min(firstDone, this.doneAt[seq]);
      lags.push(this.doneAt[seq] - this.sentAt[seq]);
    }
    const sorted = sortedCopy(lags);
    const sortedWrites = sortedCopy(writes);
    const start = startMs ?? firstSent;
    return {
      events: lags.length,
      missing,
      seconds: (lastDone - start) / 1000,
      firstMs: firstDone - start,
      perSec: lags.length / ((lastDone - start) / 1000),
      p50Ms: percentileSorted(sorted, 50),
      p99Ms: percentileSorted(sorted, 99),
      maxMs: sorted.length ? sorted[sorted.length - 1] : NaN,
      writeP50Ms: percentileSorted(sortedWrites, 50),
      writeP99Ms: percentileSorted(sortedWrites, 99),
    };
  }
}

export interface DeliveryWindow {
  /** Events handled by all three handlers. */
  events: number;
  missing: number;
  /** First write (or the start given) → last event handled by all three. */
  seconds: number;
  /** Start → first event handled by all three. */
  firstMs: number;
  perSec: number;
  /** Lag, write call → all three handlers done. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The write calls' own latency (call → answer). */
  writeP50Ms: number;
  writeP99Ms: number;
}

function keyOf(pod: Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/**
 * Three handlers doing what controllers' handlers do: (1) keep an index of Pods by owner
 * (reads owner references), (2) keep counts of Pods per app label and node and the last
 * resourceVersion per Pod (reads labels, spec), (3) asynchronously "enqueue" the owner's key
 * in a deduplicating queue, like a controller's handler feeding its workqueue.
 */
export function controllerLikeHandlers(done: (pod: Pod) => void): Array<EventHandler<Pod>> {
  // (1) pods by owner uid
  const byOwner = new Map<string, Set<string>>();
  const ownerOf = new Map<string, string>();
  const index = (pod: Pod) => {
    const key = keyOf(pod);
    const ref = pod.metadata?.ownerReferences?.find((r) => r.controller);
    const uid = ref?.uid ?? '';
    const prev = ownerOf.get(key);
    if (prev !== uid) {
      if (prev !== undefined) byOwner.get(prev)?.delete(key);
      let set = byOwner.get(uid);
      if (!set) byOwner.set(uid, (set = new Set()));
      set.add(key);
      ownerOf.set(key, uid);
    }
  };
  const unindex = (pod: Pod) => {
    const key = keyOf(pod);
    const prev = ownerOf.get(key);
    if (prev !== undefined) byOwner.get(prev)?.delete(key);
    ownerOf.delete(key);
  };

  // (2) counts per app and node, last resourceVersion per pod
  const perApp = new Map<string, number>();
  const perNode = new Map<string, number>();
  const lastRv = new Map<string, string>();
  const bump = (m: Map<string, number>, k: string | undefined, by: number) => {
    if (k !== undefined) m.set(k, (m.get(k) ?? 0) + by);
  };
  const count = (pod: Pod, by: number) => {
    bump(perApp, pod.metadata?.labels?.app, by);
    bump(perNode, pod.spec?.nodeName, by);
  };

  // (3) an async, deduplicating "workqueue" of owner keys
  const queued = new Set<string>();
  const enqueue = async (pod: Pod) => {
    const ref = pod.metadata?.ownerReferences?.find((r) => r.controller);
    if (!ref) return;
    await Promise.resolve();
    queued.add(`${pod.metadata?.namespace}/${ref.name}`);
    if (queued.size > 1000) queued.clear();
  };

  return [
    {
      onAdd: (pod) => (index(pod), done(pod)),
      onUpdate: (_old, pod) => (index(pod), done(pod)),
      onDelete: (pod) => (unindex(pod), done(pod)),
    },
    {
      onAdd: (pod) => {
        count(pod, 1);
        lastRv.set(keyOf(pod), pod.metadata?.resourceVersion ?? '');
        done(pod);
      },
      onUpdate: (old, pod) => {
        if (
          old.metadata?.labels?.app !== pod.metadata?.labels?.app ||
          old.spec?.nodeName !== pod.spec?.nodeName
        ) {
          count(old, -1);
          count(pod, 1);
        }
        lastRv.set(keyOf(pod), pod.metadata?.resourceVersion ?? '');
        done(pod);
      },
      onDelete: (pod) => {
        count(pod, -1);
        lastRv.delete(keyOf(pod));
        done(pod);
      },
    },
    {
      onAdd: async (pod) => (await enqueue(pod), done(pod)),
      onUpdate: async (_old, pod) => (await enqueue(pod), done(pod)),
      onDelete: async (pod) => (await enqueue(pod), done(pod)),
    },
  ];
}

/**
 * A client whose watches can be held: `hold()` ends the informer's current watch and keeps
 * the next one from starting until `release()`; the reflector then watches from the last
 * resourceVersion it saw and receives everything written meanwhile as fast as it can take it.
 */
export class WatchGate {
  readonly client: Client;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  private current: Watch<unknown> | undefined;
  private blocked = false;
  private onBlocked: (() => void) | undefined;
  /** When the held watch was let through (for timing the backlog's delivery). */
  releasedAt = 0;

  constructor(inner: Client) {
    const watch = async <K extends KindName>(kind: K, options?: WatchOptions): Promise<Watch<KindMap[K]>> => {
      while (this.gate) {
        this.blocked = true;
        this.onBlocked?.();
        await this.gate;
      }
      this.blocked = false;
      const w = await inner.watch(kind, options);
      this.current = w as Watch<unknown>;
      return w;
    };
    this.client = new Proxy(inner, {
      get(target, prop) {
        if (prop === 'watch') return watch;
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** Ends the current watch and resolves once the reflector is waiting to watch again. */
  async hold(timeoutMs = 10_000): Promise<void> {
    if (this.gate) return;
    this.gate = new Promise((resolve) => (this.open = resolve));
    const waiting = new Promise<void>((resolve) => (this.onBlocked = resolve));
    this.current?.stop();
    if (!this.blocked) {
      const ok = await Promise.race([waiting.then(() => true), sleep(timeoutMs).then(() => false)]);
      if (!ok) throw new Error(`the informer did not come back to watch within ${timeoutMs} ms`);
    }
    this.onBlocked = undefined;
  }

  release(): void {
    const open = this.open;
    this.gate = undefined;
    this.open = undefined;
    this.releasedAt = nowMs();
    open?.();
  }
}

/**
 * A client with no server behind it, for the informer alone: List answers `items`, and the
 * watch is a queue that the benchmark fills with prepared events (no transport, no decoding).
 */
export class ReplayClient {
  readonly client: Client;
  private queue: WatchQueue<Pod> | undefined;
  private onWatch: (() => void) | undefined;

  constructor(items: Pod[], resourceVersion: string) {
    const watch = async (): Promise<Watch<Pod>> => {
      const q = new WatchQueue<Pod>();
      q.attach({ stop: () => undefined });
      this.queue = q;
      this.onWatch?.();
      return q;
    };
    this.client = {
      list: async () => ({ items, resourceVersion }),
      watch,
      reconnect: () => undefined,
      close: () => this.queue?.stop(),
    } as unknown as Client;
  }

  /** Resolves once the informer is watching. */
  watching(): Promise<void> {
    if (this.queue) return Promise.resolve();
    return new Promise((resolve) => (this.onWatch = resolve));
  }

  /** Delivers `pods` as MODIFIED events, all at once. */
  push(pods: Pod[]): void {
    for (const p of pods) this.queue!.event('MODIFIED', p);
  }
}

export interface ReflectorFigures {
  lists: number;
  lastListSeconds: number;
  listItems: number;
  watches: number;
  relists: number;
  failures: number;
  events: number;
}

/** The informer_* metrics of client/cache/metrics.ts, summed over labels. */
export async function reflectorFigures(registry: Registry): Promise<ReflectorFigures> {
  const sum = async (name: string, suffix = '') => {
    const metric = registry.getSingleMetric(name);
    if (!metric) return NaN;
    const { values } = await metric.get();
    return values
      .filter((v) => !suffix || (v as { metricName?: string }).metricName === name + suffix)
      .reduce((a, v) => a + v.value, 0);
  };
  const listSum = await sum('informer_list_duration_seconds', '_sum');
  const lists = await sum('informer_lists_total');
  return {
    lists,
    lastListSeconds: lists ? listSum / lists : NaN,
    listItems: await sum('informer_list_items'),
    watches: await sum('informer_watches_total'),
    relists: await sum('informer_relists_total'),
    failures: await sum('informer_watch_failures_total'),
    events: await sum('informer_watch_events_total'),
  };
}
