/**
 * The pod garbage collector (Kubernetes' pkg/controller/podgc): force-deletes the pods no one
 * else will finish — those bound to a node that no longer exists (after a quarantine, and once
 * the API confirms the node is gone), terminating pods that were never scheduled, terminating
 * pods of a node its admin tainted out-of-service — and the oldest finished pods beyond
 * --terminated-pod-gc-threshold. Each is marked Failed first (with a DisruptionTarget
 * condition for a deleted node), as Kubernetes does, because no agent is left to say so.
 *
 * Kubernetes sweeps every pod every 20 s. Here informer events enqueue just the work they
 * make — a node to check, a pod, the count of finished pods — so the pods of a deleted node go
 * when its quarantine ends, not up to a sweep later.
 */
import { isConflict, isNotFound } from '../../../client/api/errors.js';
import { isPodTerminal } from '../../../client/api/pods.js';
import type { Node, Pod } from '../../../client/api/types.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import { NODE_NAME_INDEX, nodeNameIndexFunc, splitKey } from '../../../client/cache/keys.js';
import type { Controller, ControllerContext, ControllerDefinition } from '../types.js';
import { KeyWorker } from '../worker.js';
import { DEFAULT_POD_GC, type PodGCConfig } from './config.js';
import {
  failedStatus,
  isOutOfService,
  isUnscheduledTerminating,
  NODE_GONE,
  orphanCheck,
  terminatedPodsToDelete,
  type Disruption,
  type GcReason,
} from './decide.js';
import { podGCMetrics, type PodGCMetrics } from './metrics.js';

const TERMINATED_KEY = 'terminated';
const NODE_PREFIX = 'node/';
const POD_PREFIX = 'pod/';

export class PodGCController implements Controller {
  readonly config: PodGCConfig;
  private readonly nodes: SharedIndexInformer<'Node'>;
  private readonly pods: SharedIndexInformer<'Pod'>;
  private readonly worker: KeyWorker;
  private readonly metrics: PodGCMetrics;
  /** When each node that pods are bound to was first seen missing: its quarantine's start. */
  private readonly missingSince = new Map<string, number>();

  constructor(private readonly ctx: ControllerContext) {
    this.config = { ...DEFAULT_POD_GC, ...ctx.config?.podGC };
    this.metrics = podGCMetrics(ctx.metrics);
    this.nodes = ctx.informers.informerFor('Node');
    this.pods = ctx.informers.informerFor('Pod');
    this.pods.addIndexers({ [NODE_NAME_INDEX]: nodeNameIndexFunc });
    this.worker = new KeyWorker(
      { name: 'pod_garbage_collector', clock: ctx.clock, logger: ctx.logger, metrics: ctx.queueMetrics },
      (key) => this.sync(key),
    );
    const nodeChanged = (n: Node) => this.worker.enqueue(NODE_PREFIX + n.metadata!.name!);
    this.nodes.addEventHandler({
      // A node back under its name ends its quarantine.
      onAdd: nodeChanged,
      // Heartbeats change nodes all the time; only going out of service (or back) matters.
      onUpdate: (old, node) => {
        if (isOutOfService(old) !== isOutOfService(node)) nodeChanged(node);
      },
      onDelete: nodeChanged,
    });
    this.pods.addEventHandler({
      onAdd: (pod) => this.podChanged(pod),
      onUpdate: (_old, pod) => this.podChanged(pod),
    });
  }

  run(workers: number): void {
    this.worker.run(workers);
  }

  async stop(): Promise<void> {
    await this.worker.stop();
  }

  /** Resolves once no key is queued or in work; nodes waiting out their quarantine do not count (for tests). */
  idle(): Promise<void> {
    return this.worker.idle();
  }

  /** Enqueues what a pod's state may give work to; most pod updates give none. */
  private podChanged(pod: Pod): void {
    if (this.config.terminatedPodThreshold > 0 && isPodTerminal(pod) && !pod.metadata?.deletionTimestamp) {
      this.worker.enqueue(TERMINATED_KEY);
    }
    const nodeName = pod.spec?.nodeName;
    if (nodeName) {
      if (pod.metadata?.deletionTimestamp || !this.nodes.get(nodeName))
        this.worker.enqueue(NODE_PREFIX + nodeName);
    } else if (pod.metadata?.deletionTimestamp) {
      this.worker.enqueue(`${POD_PREFIX}${pod.metadata.namespace}/${pod.metadata.name}`);
    }
  }

  private sync(key: string): Promise<void> {
    if (key === TERMINATED_KEY) return this.syncTerminated();
    if (key.startsWith(NODE_PREFIX)) return this.syncNode(key.slice(NODE_PREFIX.length));
    return this.syncUnscheduled(key.slice(POD_PREFIX.length));
  }

  /** gcTerminated: the oldest finished pods beyond the threshold. */
  private async syncTerminated(): Promise<void> {
    const doomed = terminatedPodsToDelete(this.pods.list(), this.config.terminatedPodThreshold);
    if (!doomed.length) return;
    this.ctx.logger.info(
      { count: doomed.length, threshold: this.config.terminatedPodThreshold },
      'deleting the oldest finished pods beyond --terminated-pod-gc-threshold',
    );
    await this.forceDeleteAll(doomed, 'terminated');
  }

  /** gcOrphaned for a node that is missing, gcTerminating for one that is out of service. */
  private async syncNode(name: string): Promise<void> {
    const bound = this.pods.indexer.byIndex(NODE_NAME_INDEX, name);
    const node = this.nodes.get(name);
    if (node) {
      this.missingSince.delete(name);
      if (isOutOfService(node))
        await this.forceDeleteAll(
          bound.filter((p) => p.metadata?.deletionTimestamp),
          'out-of-service',
        );
      return;
    }
    if (!bound.length) {
      this.missingSince.delete(name);
      return;
    }
    const now = this.ctx.clock.now();
    const since = this.missingSince.get(name) ?? now;
    this.missingSince.set(name, since);
    const check = orphanCheck(since, now, this.config.quarantineMs);
    if (check.action === 'wait') {
      this.worker.enqueueAfter(NODE_PREFIX + name, check.ms);
      return;
    }
    // The cache may lag behind the API: ask it (checkIfNodeExists). A node that exists is
    // added to the cache soon, and that ends the quarantine.
    if (await this.nodeExists(name)) return;
    this.ctx.logger.warn(
      { node: name, pods: bound.length },
      'node no longer exists; force-deleting the pods bound to it',
    );
    await this.forceDeleteAll(bound, 'orphaned', NODE_GONE);
    this.missingSince.delete(name);
  }

  /** gcUnscheduledTerminating. */
  private async syncUnscheduled(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pod = this.pods.get(name, namespace);
    if (pod && isUnscheduledTerminating(pod)) await this.forceDeleteAll([pod], 'unscheduled');
  }

  private async nodeExists(name: string): Promise<boolean> {
    try {
      await this.ctx.client.get('Node', name);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Force-deletes every pod given; an error for any of them retries the key. */
  private async forceDeleteAll(pods: Pod[], reason: GcReason, disruption?: Disruption): Promise<void> {
    const errors: Error[] = [];
    // One at a time: a lowered threshold may doom hundreds of pods, and nothing is urgent.
    for (const pod of pods) {
      const namespace = pod.metadata?.namespace ?? '';
      this.metrics.deletions?.inc({ namespace, reason });
      try {
        await this.markFailedAndDelete(pod, disruption);
      } catch (err) {
        this.metrics.errors?.inc({ namespace, reason });
        errors.push(err as Error);
      }
    }
    if (errors.length) {
      throw new Error(
        `${errors.length} of ${pods.length} pod deletions (${reason}) failed: ${errors[0].message}`,
      );
    }
  }

  /** markFailedAndDeletePodWithCondition: Failed first, then deleted with no grace period. */
  private async markFailedAndDelete(pod: Pod, disruption: Disruption | undefined): Promise<void> {
    const { client, clock, logger } = this.ctx;
    const name = pod.metadata!.name!;
    const namespace = pod.metadata!.namespace;
    const uid = pod.metadata!.uid;
    logger.info({ pod: `${namespace}/${name}`, node: pod.spec?.nodeName }, 'force-deleting pod');
    const status = failedStatus(pod, clock.now(), disruption);
    try {
      if (status) await client.updateStatus<Pod>({ ...pod, status });
    } catch (err) {
      // A conflict means the cache is behind: the retry starts from a fresher pod.
      if (isNotFound(err)) return;
      throw err;
    }
    try {
      await client.delete('Pod', name, { namespace, gracePeriodSeconds: 0, preconditions: { uid } });
    } catch (err) {
      // Gone already, or replaced by another pod of the same name (the uid precondition).
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }
}

export const podGCController: ControllerDefinition = {
  name: 'podgc',
  enabledByDefault: true,
  defaultWorkers: 1,
  create: (ctx) => new PodGCController(ctx),
};
