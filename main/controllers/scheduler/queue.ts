/**
 * The scheduling queue (Kubernetes' PriorityQueue): pods waiting for a node, in three pools.
 * Active pods are tried in priority order (then oldest first); a pod that failed waits out
 * its backoff (1 s doubling to 10 s) before it is tried again; a pod that fits nowhere parks
 * as unschedulable until a cluster event that could make it fit (a node joining, a node's
 * allocatable, labels or taints changing, a pod leaving a node) moves it back — or 5 minutes
 * pass, in case an event was missed.
 */
import type { Pod } from '../../../client/api/types.js';
import type { Clock, TimerHandle } from '../../../client/util/clock.js';
import { KeyedHeap } from '../../../client/util/keyedheap.js';

export interface QueuedPod {
  pod: Pod;
  /** "namespace/name". */
  key: string;
  /** When it last entered the queue (orders pods of equal priority). */
  timestamp: number;
  /** Scheduling attempts so far. */
  attempts: number;
  /** The filters that rejected it last time: which events may help. Empty: any may. */
  unschedulablePlugins: Set<string>;
  backoffUntil: number;
}

/** Cluster changes that may let an unschedulable pod fit. */
export type ClusterEvent =
  | 'NodeAdd'
  | 'NodeAllocatableChange'
  | 'NodeLabelChange'
  | 'NodeTaintChange'
  | 'NodeSpecUnschedulableChange'
  | 'AssignedPodDelete'
  | 'UnschedulableTimeout';

/** Which filters' rejections each event can undo (Kubernetes' EventsToRegister). */
const EVENT_HELPS: Record<ClusterEvent, string[] | 'all'> = {
  NodeAdd: 'all',
  NodeAllocatableChange: ['NodeResourcesFit'],
  NodeLabelChange: ['NodeAffinity'],
  NodeTaintChange: ['TaintToleration', 'NodeUnschedulable'],
  NodeSpecUnschedulableChange: ['NodeUnschedulable'],
  AssignedPodDelete: ['NodeResourcesFit'],
  UnschedulableTimeout: 'all',
};

export interface SchedulingQueueOptions {
  clock: Clock;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** How long a pod may stay unschedulable before it is tried again regardless. */
  maxUnschedulableMs?: number;
}

export interface PendingCounts {
  active: number;
  backoff: number;
  unschedulable: number;
}

const priorityOf = (p: QueuedPod) => p.pod.spec?.priority ?? 0;

export class SchedulingQueue {
  private readonly clock: Clock;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxUnschedulableMs: number;
  private readonly active = new KeyedHeap<QueuedPod>(
    (p) => p.key,
    (a, b) => priorityOf(a) > priorityOf(b) || (priorityOf(a) === priorityOf(b) && a.timestamp < b.timestamp),
  );
  private readonly backoff = new KeyedHeap<QueuedPod>(
    (p) => p.key,
    (a, b) => a.backoffUntil < b.backoffUntil,
  );
  private readonly unschedulable = new Map<string, QueuedPod & { parkedAt: number }>();
  /** Pods handed out by pop() and not yet requeued or done, with whether they changed meanwhile. */
  private readonly inFlight = new Map<string, { queued: QueuedPod; updated: boolean; cycle: number }>();
  private waiters: Array<(p: QueuedPod | undefined) => void> = [];
  private backoffTimer: TimerHandle | undefined;
  private backoffTimerAt = Infinity;
  private flushTimer: TimerHandle | undefined;
  /** Counts pops; a move request during a pod's cycle sends it to backoff, not to the parking lot. */
  private schedulingCycle = 0;
  private moveRequestCycle = -1;
  private closed = false;

  constructor(options: SchedulingQueueOptions) {
    this.clock = options.clock;
    this.initialBackoffMs = options.initialBackoffMs ?? 1_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 10_000;
    this.maxUnschedulableMs = options.maxUnschedulableMs ?? 5 * 60_000;
    this.scheduleUnschedulableFlush();
  }

  /** A new pod waiting for a node. */
  add(pod: Pod): void {
    const key = keyOf(pod);
    if (
      this.inFlight.has(key) ||
      this.active.has(key) ||
      this.backoff.has(key) ||
      this.unschedulable.has(key)
    ) {
      this.update(pod);
      return;
    }
    this.pushActive({
      pod,
      key,
      timestamp: this.clock.now(),
      attempts: 0,
      unschedulablePlugins: new Set(),
      backoffUntil: 0,
    });
  }

  /** The pod changed: keep its place, but a parked pod is worth another try. */
  update(pod: Pod): void {
    const key = keyOf(pod);
    const flight = this.inFlight.get(key);
    if (flight) {
      flight.queued.pod = pod;
      flight.updated = true;
      return;
    }
    for (const heap of [this.active, this.backoff]) {
      const queued = heap.get(key);
      if (queued) {
        heap.push({ ...queued, pod });
        return;
      }
    }
    const parked = this.unschedulable.get(key);
    if (parked) {
      this.unschedulable.delete(key);
      this.requeue({ ...parked, pod });
      return;
    }
    this.add(pod);
  }

  /** The pod is gone, or no longer waits (bound by someone, deleted). */
  delete(key: string): void {
    this.active.delete(key);
    this.backoff.delete(key);
    this.unschedulable.delete(key);
    this.inFlight.delete(key);
  }

  /** The next pod to try; waits for one. Resolves undefined once closed. */
  pop(): Promise<QueuedPod | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const next = this.active.pop();
    if (next) return Promise.resolve(this.handOut(next));
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The cycle of the pod's last pop (compare with moves that happened while it was tried). */
  cycleOf(key: string): number {
    return this.inFlight.get(key)?.cycle ?? this.schedulingCycle;
  }

  /** The pod was bound (or given up on): it leaves the queue. */
  done(key: string): void {
    this.inFlight.delete(key);
  }

  /**
   * It fits nowhere. It parks as unschedulable — unless something changed while it was being
   * tried (the pod itself, or a move request), in which case it only backs off.
   */
  requeueUnschedulable(queued: QueuedPod, failedPlugins: Iterable<string>): void {
    const flight = this.inFlight.get(queued.key);
    if (!flight && !this.knows(queued.key)) return; // Deleted while in flight.
    this.inFlight.delete(queued.key);
    const next: QueuedPod = {
      ...(flight?.queued ?? queued),
      unschedulablePlugins: new Set(failedPlugins),
      backoffUntil: this.clock.now() + this.backoffFor(queued.attempts),
    };
    if (flight?.updated || this.moveRequestCycle >= (flight?.cycle ?? this.schedulingCycle)) {
      this.pushBackoff(next);
      return;
    }
    this.unschedulable.set(next.key, { ...next, parkedAt: this.clock.now() });
  }

  /** Something went wrong that is not the pod's fault (an API error): try again after backoff. */
  requeueAfterError(queued: QueuedPod): void {
    const flight = this.inFlight.get(queued.key);
    if (!flight && !this.knows(queued.key)) return;
    this.inFlight.delete(queued.key);
    this.pushBackoff({
      ...(flight?.queued ?? queued),
      backoffUntil: this.clock.now() + this.backoffFor(queued.attempts),
    });
  }

  /** A cluster event: unschedulable pods it may help go back (to backoff if still backing off). */
  onClusterEvent(event: ClusterEvent): void {
    this.moveRequestCycle = this.schedulingCycle;
    const helps = EVENT_HELPS[event];
    for (const [key, parked] of this.unschedulable) {
      const relevant =
        helps === 'all' ||
        parked.unschedulablePlugins.size === 0 ||
        helps.some((p) => parked.unschedulablePlugins.has(p));
      if (!relevant) continue;
      this.unschedulable.delete(key);
      const { parkedAt: _parkedAt, ...queued } = parked;
      this.requeue(queued);
    }
  }

  pending(): PendingCounts {
    return { active: this.active.size, backoff: this.backoff.size, unschedulable: this.unschedulable.size };
  }

  /** Whether a pod is waiting in one of the pools (not counting one being tried). */
  has(key: string): boolean {
    return this.active.has(key) || this.backoff.has(key) || this.unschedulable.has(key);
  }

  close(): void {
    this.closed = true;
    if (this.backoffTimer) this.clock.clearTimeout(this.backoffTimer);
    if (this.flushTimer) this.clock.clearTimeout(this.flushTimer);
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  private knows(key: string): boolean {
    return this.has(key) || this.inFlight.has(key);
  }

  private handOut(queued: QueuedPod): QueuedPod {
    this.schedulingCycle++;
    const out = { ...queued, attempts: queued.attempts + 1 };
    this.inFlight.set(out.key, { queued: out, updated: false, cycle: this.schedulingCycle });
    return out;
  }

  private pushActive(queued: QueuedPod): void {
    if (this.closed) return;
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.handOut(queued));
    else this.active.push(queued);
  }

  private pushBackoff(queued: QueuedPod): void {
    if (queued.backoffUntil <= this.clock.now()) {
      this.pushActive({ ...queued, timestamp: this.clock.now() });
      return;
    }
    this.backoff.push(queued);
    this.armBackoffTimer();
  }

  /** Back to active, or to backoff if its backoff has not run out. */
  private requeue(queued: QueuedPod): void {
    if (queued.backoffUntil > this.clock.now()) this.pushBackoff(queued);
    else this.pushActive({ ...queued, timestamp: this.clock.now() });
  }

  private backoffFor(attempts: number): number {
    const ms = this.initialBackoffMs * 2 ** Math.max(0, attempts - 1);
    return Math.min(ms, this.maxBackoffMs);
  }

  private armBackoffTimer(): void {
    const first = this.backoff.peek();
    if (!first || first.backoffUntil >= this.backoffTimerAt) return;
    if (this.backoffTimer) this.clock.clearTimeout(this.backoffTimer);
    this.backoffTimerAt = first.backoffUntil;
    this.backoffTimer = this.clock.setTimeout(
      () => this.flushBackoff(),
      first.backoffUntil - this.clock.now(),
    );
  }

  private flushBackoff(): void {
    this.backoffTimer = undefined;
    this.backoffTimerAt = Infinity;
    const now = this.clock.now();
    for (let first = this.backoff.peek(); first && first.backoffUntil <= now; first = this.backoff.peek()) {
      this.backoff.pop();
      this.pushActive({ ...first, timestamp: now });
    }
    this.armBackoffTimer();
  }

  /** Every 30 s, pods parked for longer than the limit get another try (a missed event). */
  private scheduleUnschedulableFlush(): void {
    if (this.closed) return;
    this.flushTimer = this.clock.setTimeout(() => {
      const now = this.clock.now();
      for (const [key, parked] of this.unschedulable) {
        if (now - parked.parkedAt < this.maxUnschedulableMs) continue;
        this.unschedulable.delete(key);
        const { parkedAt: _parkedAt, ...queued } = parked;
        this.requeue(queued);
      }
      this.scheduleUnschedulableFlush();
    }, 30_000);
  }
}

export function keyOf(pod: Pod): string {
  return `${pod.metadata?.namespace}/${pod.metadata?.name}`;
}
