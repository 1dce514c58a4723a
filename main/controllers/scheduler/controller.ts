/**
 * The scheduler (Kubernetes' default-scheduler), run as a controller: pods without a node
 * wait in the scheduling queue; one loop takes them in priority order, decides on a node from
 * the cache (filters, then scores), assumes the pod there so the next decision counts it, and
 * binds in the background. A pod that fits nowhere gets a FailedScheduling event and a
 * PodScheduled=False condition saying why, and waits for a change in the cluster.
 */
import pLimit from 'p-limit';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { isConflict, isNotFound } from '../../../client/api/errors.js';
import { isPodTerminal } from '../../../client/api/pods.js';
import type { Node, Pod, PodCondition } from '../../../client/api/types.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import type { EventRecorder } from '../../../client/events/recorder.js';
import { rfc3339 } from '../../../client/util/clock.js';
import { deepEqual } from '../../../client/util/objects.js';
import { nextTurn } from '../../../client/util/nextturn.js';
import { metric } from '../metrics.js';
import type { Controller, ControllerContext, ControllerDefinition } from '../types.js';
import { SchedulingAlgorithm } from './algorithm.js';
import { SchedulerCache } from './cache.js';
import { DEFAULT_FILTERS, DEFAULT_SCORES } from './framework/plugins/index.js';
import { podInfo } from './framework/resources.js';
import { keyOf, SchedulingQueue, type ClusterEvent, type QueuedPod } from './queue.js';

export const SCHEDULER_NAME = 'default-scheduler';

const responsibleFor = (pod: Pod) => (pod.spec?.schedulerName || SCHEDULER_NAME) === SCHEDULER_NAME;
const isAssigned = (pod: Pod) => !!pod.spec?.nodeName;

/** See `bindSlots`: measured on bench:scheduler, 64 binds in flight doubled the throughput. */
export const MAX_BINDS_IN_FLIGHT = 64;

export class Scheduler implements Controller {
  private readonly nodes: SharedIndexInformer<'Node'>;
  private readonly pods: SharedIndexInformer<'Pod'>;
  private readonly recorder: EventRecorder;
  readonly queue: SchedulingQueue;
  readonly cache = new SchedulerCache();
  private readonly algorithm: SchedulingAlgorithm;
  private loop: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * Binds in flight at most: thousands at once all wait together on the apiserver and finish
   * in one late burst (or time out); a bounded pipeline keeps the first pods fast.
   */
  private readonly bindSlots = pLimit(MAX_BINDS_IN_FLIGHT);
  private busy = false;
  private readonly metrics;

  constructor(private readonly ctx: ControllerContext) {
    this.recorder = ctx.recorder(SCHEDULER_NAME);
    this.queue = new SchedulingQueue({ clock: ctx.clock });
    this.algorithm = new SchedulingAlgorithm(DEFAULT_FILTERS, DEFAULT_SCORES);
    this.metrics = schedulerMetrics(ctx, this.queue);
    this.nodes = ctx.informers.informerFor('Node');
    this.pods = ctx.informers.informerFor('Pod');
    this.nodes.addEventHandler({
      onAdd: (n) => {
        this.cache.addNode(n);
        this.queue.onClusterEvent('NodeAdd');
      },
      onUpdate: (old, n) => {
        this.cache.updateNode(n);
        for (const event of nodeEvents(old, n)) this.queue.onClusterEvent(event);
      },
      onDelete: (n) => this.cache.removeNode(n.metadata!.name!),
    });
    this.pods.addEventHandler({
      onAdd: (p) => this.podAdded(p),
      onUpdate: (old, p) => this.podUpdated(old, p),
      onDelete: (p) => this.podDeleted(p),
    });
  }

  run(): void {
    this.loop ??= this.scheduleLoop();
  }

  async stop(): Promise<void> {
    this.queue.close();
    await this.loop;
    await Promise.all(this.inFlight);
  }

  /** Resolves once no pod is being decided or bound and none is ready to try (for tests). */
  async idle(): Promise<void> {
    for (let quiet = 0; quiet < 2;) {
      await nextTurn();
      quiet = !this.busy && this.inFlight.size === 0 && this.queue.pending().active === 0 ? quiet + 1 : 0;
    }
  }

  // --- informer events ---------------------------------------------------------------------

  private podAdded(pod: Pod): void {
    if (isAssigned(pod)) {
      if (!isPodTerminal(pod)) this.cache.addPod(pod);
    } else if (responsibleFor(pod) && !pod.metadata?.deletionTimestamp && !isPodTerminal(pod)) {
      this.queue.add(pod);
    }
  }

  private podUpdated(old: Pod, pod: Pod): void {
    const key = keyOf(pod);
    if (isAssigned(pod)) {
      if (!isAssigned(old)) this.queue.delete(key);
      if (isPodTerminal(pod)) {
        // A finished pod frees its requests.
        this.cache.removePod(key);
        if (!isPodTerminal(old)) this.queue.onClusterEvent('AssignedPodDelete');
      } else {
        this.cache.updatePod(pod);
      }
      return;
    }
    if (pod.metadata?.deletionTimestamp || isPodTerminal(pod) || !responsibleFor(pod)) this.queue.delete(key);
    else this.queue.update(pod);
  }

  private podDeleted(pod: Pod): void {
    const key = keyOf(pod);
    this.queue.delete(key);
    this.cache.removePod(key);
    if (isAssigned(pod)) this.queue.onClusterEvent('AssignedPodDelete');
  }

  // --- the scheduling loop -----------------------------------------------------------------

  private async scheduleLoop(): Promise<void> {
    for (;;) {
      const queued = await this.queue.pop();
      if (!queued) return;
      this.busy = true;
      try {
        this.scheduleOne(queued);
      } catch (err) {
        this.ctx.logger.error(
          { pod: queued.key, err: (err as Error).message },
          'scheduling failed; retrying after backoff',
        );
        this.queue.requeueAfterError(queued);
      } finally {
        this.busy = false;
      }
    }
  }

  /** Decides for one pod; the binding (and any status write) runs in the background. */
  private scheduleOne(queued: QueuedPod): void {
    const { key } = queued;
    const [namespace, name] = key.split('/');
    const pod = this.pods.get(name, namespace);
    // Gone, bound by someone else, being deleted, or replaced by a pod of the same name.
    if (
      !pod ||
      isAssigned(pod) ||
      pod.metadata?.deletionTimestamp ||
      pod.metadata?.uid !== queued.pod.metadata?.uid ||
      this.cache.isAssumed(key)
    ) {
      this.queue.done(key);
      if (pod && pod.metadata?.uid !== queued.pod.metadata?.uid && !isAssigned(pod)) this.queue.add(pod);
      return;
    }
    const info = podInfo(pod);
    const started = performance.now();
    const result = this.algorithm.schedule(
      info,
      () => this.cache.nodeInfos(),
      (name) => this.cache.nodeInfo(name),
    );
    const seconds = (performance.now() - started) / 1000;
    if (result.kind === 'unschedulable') {
      this.metrics.attempts?.inc({ result: 'unschedulable' });
      this.metrics.duration?.observe({ result: 'unschedulable' }, seconds);
      this.queue.requeueUnschedulable(queued, result.failedPlugins);
      this.background(this.reportUnschedulable(pod, result.message));
      return;
    }
    this.metrics.duration?.observe({ result: 'scheduled' }, seconds);
    this.cache.assume(info, result.nodeName);
    this.background(this.bind(queued, pod, result.nodeName));
  }

  private async bind(queued: QueuedPod, pod: Pod, nodeName: string): Promise<void> {
    const { key } = queued;
    const [namespace, name] = key.split('/');
    try {
      await this.bindSlots(() => this.ctx.client.bind(namespace, name, nodeName, { uid: pod.metadata?.uid }));
    } catch (err) {
      this.cache.forget(key);
      if (isNotFound(err)) {
        this.queue.done(key);
        return;
      }
      this.metrics.attempts?.inc({ result: 'error' });
      this.ctx.logger.warn(
        { pod: key, node: nodeName, err: (err as Error).message },
        'binding failed; retrying after backoff',
      );
      // A conflict means someone else bound it or it is going away: the next try sees that.
      if (!isConflict(err))
        this.recorder.event(
          pod,
          'Warning',
          'FailedScheduling',
          `Binding rejected: ${(err as Error).message}`,
        );
      this.queue.requeueAfterError(queued);
      return;
    }
    this.queue.done(key);
    this.metrics.attempts?.inc({ result: 'scheduled' });
    this.recorder.event(pod, 'Normal', 'Scheduled', `Successfully assigned ${key} to ${nodeName}`);
  }

  /** FailedScheduling, and PodScheduled=False with the same words (written only when they change). */
  private async reportUnschedulable(pod: Pod, message: string): Promise<void> {
    this.recorder.event(pod, 'Warning', 'FailedScheduling', message);
    const current = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (current?.status === 'False' && current.reason === 'Unschedulable' && current.message === message)
      return;
    const condition: PodCondition = {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message,
      lastTransitionTime:
        current?.status === 'False' ? current.lastTransitionTime : rfc3339(this.ctx.clock.now()),
    };
    const conditions = [
      ...(pod.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled'),
      condition,
    ];
    try {
      await this.ctx.client.updateStatus<Pod>({ ...pod, status: { ...pod.status, conditions } });
    } catch (err) {
      // Changed meanwhile (or gone): the next attempt writes it again if it still applies.
      if (!isConflict(err) && !isNotFound(err)) {
        this.ctx.logger.warn(
          { pod: keyOf(pod), err: (err as Error).message },
          'could not record why the pod is pending',
        );
      }
    }
  }

  private background(work: Promise<void>): void {
    const tracked = work.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }
}

/** The node changes that may let a waiting pod fit now. */
function nodeEvents(old: Node, node: Node): ClusterEvent[] {
  const events: ClusterEvent[] = [];
  if (!deepEqual(old.status?.allocatable, node.status?.allocatable)) events.push('NodeAllocatableChange');
  if (!deepEqual(old.metadata?.labels, node.metadata?.labels)) events.push('NodeLabelChange');
  if (!deepEqual(old.spec?.taints, node.spec?.taints)) events.push('NodeTaintChange');
  if (!!old.spec?.unschedulable !== !!node.spec?.unschedulable) events.push('NodeSpecUnschedulableChange');
  return events;
}

/** The queue each registry's gauge reads: the running scheduler's (a new one after a leadership change). */
const queues = new WeakMap<Registry, SchedulingQueue>();

function schedulerMetrics(ctx: ControllerContext, queue: SchedulingQueue) {
  const registry = ctx.metrics;
  if (registry) queues.set(registry, queue);
  metric(registry, 'gauge', {
    name: 'scheduler_pending_pods',
    help: 'Pods waiting to be scheduled, by queue (active, backoff, unschedulable)',
    labelNames: ['queue'],
    collect(this: Gauge) {
      const counts = registry && queues.get(registry)?.pending();
      for (const [name, n] of Object.entries(counts || {})) this.set({ queue: name }, n);
    },
  });
  return {
    attempts: metric(ctx.metrics, 'counter', {
      name: 'scheduler_schedule_attempts_total',
      help: 'Scheduling attempts by result (scheduled, unschedulable, error)',
      labelNames: ['result'],
    }) as Counter | undefined,
    duration: metric(ctx.metrics, 'histogram', {
      name: 'scheduler_scheduling_algorithm_duration_seconds',
      help: 'Time to decide on a node for one pod (filters and scores)',
      labelNames: ['result'],
      buckets: [0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1],
    }) as Histogram | undefined,
  };
}

export const schedulerController: ControllerDefinition = {
  name: 'scheduler',
  enabledByDefault: true,
  defaultWorkers: 1,
  create: (ctx) => new Scheduler(ctx),
};
