/**
 * The taint eviction controller (Kubernetes' NoExecute taint manager): deletes the pods that
 * do not tolerate their node's NoExecute taints — at once, or after the toleration's
 * tolerationSeconds, with one timer per pod that is cancelled when the taints or the pod go.
 * Each eviction and each cancellation is an event on the pod. When a pod must go is decided
 * in decide.ts; this file keeps the timers and does the deletions.
 *
 * As in Kubernetes, deleting a Node cancels nothing: the evictions already scheduled for its
 * pods still happen (handleNodeUpdate only forgets a deleted node's taints), and a pod of a
 * node with no known NoExecute taints is left alone when it changes (handlePodUpdate).
 */
import { isConflict, isNotFound } from '../../../client/api/errors.js';
import type { Pod, PodCondition, Taint } from '../../../client/api/types.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import { NODE_NAME_INDEX, nodeNameIndexFunc, splitKey } from '../../../client/cache/keys.js';
import type { EventRecorder } from '../../../client/events/recorder.js';
import { retrying } from '../../../client/retry.js';
import { rfc3339, type TimerHandle } from '../../../client/util/clock.js';
import { deepEqual } from '../../../client/util/objects.js';
import { nextTurn } from '../../../client/util/nextturn.js';
import { metric } from '../metrics.js';
import type { Controller, ControllerContext, ControllerDefinition } from '../types.js';
import { KeyWorker } from '../worker.js';
import { decideEviction, noExecuteTaints, type ScheduledEviction } from './decide.js';

const NODE_PREFIX = 'node/';
const POD_PREFIX = 'pod/';

interface Pending extends ScheduledEviction {
  uid: string;
  timer: TimerHandle;
}

export class TaintEvictionController implements Controller {
  private readonly nodes: SharedIndexInformer<'Node'>;
  private readonly pods: SharedIndexInformer<'Pod'>;
  private readonly recorder: EventRecorder;
  private readonly worker: KeyWorker;
  /** NoExecute taints per node, as last synced. */
  private readonly tainted = new Map<string, Taint[]>();
  /** Evictions waiting for their time, per pod key. */
  private readonly pending = new Map<string, Pending>();
  private readonly evicting = new Set<Promise<void>>();
  private readonly deletions;

  constructor(private readonly ctx: ControllerContext) {
    this.recorder = ctx.recorder('taint-eviction-controller');
    this.deletions = metric(ctx.metrics, 'counter', {
      name: 'taint_eviction_controller_pod_deletions_total',
      help: 'Pods deleted because they did not tolerate a NoExecute taint of their node',
    });
    this.nodes = ctx.informers.informerFor('Node');
    this.pods = ctx.informers.informerFor('Pod');
    this.pods.addIndexers({ [NODE_NAME_INDEX]: nodeNameIndexFunc });
    this.worker = new KeyWorker(
      { name: 'taint_eviction_controller', clock: ctx.clock, logger: ctx.logger, metrics: ctx.queueMetrics },
      (key) =>
        key.startsWith(NODE_PREFIX)
          ? this.syncNode(key.slice(NODE_PREFIX.length))
          : this.syncPod(key.slice(POD_PREFIX.length)),
    );
    const nodeChanged = (name: string) => this.worker.enqueue(NODE_PREFIX + name);
    this.nodes.addEventHandler({
      onAdd: (n) => nodeChanged(n.metadata!.name!),
      // Heartbeats change the node all the time; only its NoExecute taints matter here.
      onUpdate: (o, n) => {
        if (!deepEqual(noExecuteTaints(o.spec?.taints), noExecuteTaints(n.spec?.taints)))
          nodeChanged(n.metadata!.name!);
      },
      onDelete: (n) => nodeChanged(n.metadata!.name!),
    });
    const podChanged = (p: Pod) =>
      this.worker.enqueue(`${POD_PREFIX}${p.metadata!.namespace}/${p.metadata!.name}`);
    this.pods.addEventHandler({
      onAdd: podChanged,
      onUpdate: (o, n) => {
        if (o.spec?.nodeName !== n.spec?.nodeName || !deepEqual(o.spec?.tolerations, n.spec?.tolerations))
          podChanged(n);
      },
      onDelete: podChanged,
    });
  }

  run(workers: number): void {
    this.worker.run(workers);
  }

  async stop(): Promise<void> {
    await this.worker.stop();
    for (const p of this.pending.values()) this.ctx.clock.clearTimeout(p.timer);
    this.pending.clear();
    await Promise.all(this.evicting);
  }

  /** Resolves once no key is queued or in work and no deletion is in flight (for tests). */
  async idle(): Promise<void> {
    for (let quiet = 0; quiet < 2;) {
      await nextTurn();
      quiet = this.worker.queue.isIdle() && this.evicting.size === 0 ? quiet + 1 : 0;
    }
  }

  /** When each waiting eviction falls due, per pod key (for tests and the GUI). */
  scheduled(): Map<string, number> {
    return new Map([...this.pending].map(([k, p]) => [k, p.at]));
  }

  private async syncNode(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) {
      // Gone: forget its taints but keep its pods' scheduled evictions (Kubernetes does; the
      // pods of a deleted node have to go anyway, and podgc only gets to them 40 s later).
      this.tainted.delete(name);
      return;
    }
    const taints = noExecuteTaints(node.spec?.taints);
    if (taints.length) this.tainted.set(name, taints);
    else this.tainted.delete(name);
    const now = this.ctx.clock.now();
    for (const pod of this.pods.indexer.byIndex(NODE_NAME_INDEX, name)) this.processPod(pod, taints, now);
  }

  private async syncPod(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pod = this.pods.get(name, namespace);
    // What was scheduled was for a pod that is gone (perhaps replaced by one of the same name).
    if (this.pending.has(key) && this.pending.get(key)!.uid !== pod?.metadata?.uid) this.cancel(key);
    if (!pod) return;
    const nodeName = pod.spec?.nodeName;
    // Only a node's taints (syncNode) cancel evictions: with none known — the node is
    // untainted, or deleted — a change to the pod changes nothing (Kubernetes' handlePodUpdate).
    const taints = nodeName ? this.tainted.get(nodeName) : undefined;
    if (!taints) return;
    this.processPod(pod, taints, this.ctx.clock.now());
  }

  private processPod(pod: Pod, taints: Taint[], now: number): void {
    const key = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
    let current = this.pending.get(key);
    if (current && current.uid !== pod.metadata?.uid) {
      // Another pod of the same name: what was scheduled was for the old one.
      this.cancel(key);
      current = undefined;
    }
    const decision = decideEviction(taints, pod.spec?.tolerations, current, now);
    switch (decision.action) {
      case 'keep':
        return;
      case 'cancel':
        this.cancel(key);
        return;
      case 'schedule': {
        // Only ever replaces a later eviction by one now: no cancellation event for that.
        if (current) this.ctx.clock.clearTimeout(current.timer);
        const { at } = decision;
        const uid = pod.metadata!.uid!;
        const timer = this.ctx.clock.setTimeout(() => this.fire(key, uid), at - now);
        this.pending.set(key, { at, uid, timer });
        if (at > now) {
          this.ctx.logger.info(
            { pod: key, node: pod.spec?.nodeName, inMs: at - now },
            'pod will be evicted when its toleration runs out',
          );
        }
      }
    }
  }

  /** Cancels a waiting eviction, with an event saying so. */
  private cancel(key: string): void {
    const p = this.pending.get(key);
    if (!p) return;
    this.ctx.clock.clearTimeout(p.timer);
    this.pending.delete(key);
    const { namespace, name } = splitKey(key);
    this.recorder.event(
      { apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name, uid: p.uid } },
      'Normal',
      'TaintManagerEviction',
      `Cancelling deletion of Pod ${key}`,
    );
    this.ctx.logger.info({ pod: key }, 'pending eviction cancelled');
  }

  private fire(key: string, uid: string): void {
    if (this.pending.get(key)?.uid !== uid) return;
    this.pending.delete(key);
    const done = this.evict(key, uid)
      .catch((err) =>
        this.ctx.logger.error(
          { pod: key, err: (err as Error).message },
          'eviction failed; the pod stays until its node changes again',
        ),
      )
      .finally(() => this.evicting.delete(done));
    this.evicting.add(done);
  }

  private async evict(key: string, uid: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pod = this.pods.get(name, namespace);
    if (!pod || pod.metadata?.uid !== uid || pod.metadata?.deletionTimestamp) return;
    const { client, clock } = this.ctx;
    this.recorder.event(pod, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${key}`);
    // Tell whoever looks at the pod why it goes (best effort: the deletion is what matters).
    const disruption: PodCondition = {
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'DeletionByTaintManager',
      message: 'Taint manager: deleting due to NoExecute taint',
      lastTransitionTime: rfc3339(clock.now()),
    };
    const conditions = (pod.status?.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget');
    await client
      .updateStatus<Pod>({ ...pod, status: { ...pod.status, conditions: [...conditions, disruption] } })
      .catch(() => undefined);
    try {
      await retrying(() => client.delete('Pod', name, { namespace, preconditions: { uid } }), 'idempotent');
    } catch (err) {
      // Gone already, or replaced by another pod of the same name.
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
    this.deletions?.inc();
    this.ctx.logger.warn(
      { pod: key, node: pod.spec?.nodeName },
      "pod evicted: it does not tolerate its node's NoExecute taints",
    );
  }
}

export const taintEvictionController: ControllerDefinition = {
  name: 'taint-eviction-controller',
  enabledByDefault: true,
  defaultWorkers: 1,
  create: (ctx) => new TaintEvictionController(ctx),
};
