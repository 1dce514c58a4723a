/**
 * The DaemonSet controller (Kubernetes' pkg/controller/daemon): one pod of each DaemonSet on
 * every node that should run it. syncDaemonSet reads the cache, decides with the pure
 * functions beside this file, acts through the client and returns an error to be retried.
 * Expectations keep it from acting twice on a cache that does not show its own writes yet.
 */
import { isAlreadyExists, isNotFound } from '../../../client/api/errors.js';
import { isPodTerminal } from '../../../client/api/pods.js';
import { labelSelectorFromObject, type LabelSelector } from '../../../client/api/selectors.js';
import type { ControllerRevision, DaemonSet, KindMap, Node, Pod } from '../../../client/api/types.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import { splitKey } from '../../../client/cache/keys.js';
import type { EventRecorder } from '../../../client/events/recorder.js';
import { deepEqual } from '../../../client/util/objects.js';
import type { ControllerContext, ControllerDefinition } from '../types.js';
import { KeyWorker, WorkerController } from '../worker.js';
import { PerKeyBackoff } from './backoff.js';
import { claimObjects } from '../common/adoption.js';
import { controlledBy, controlledOrOrphans, indexByController } from '../common/candidates.js';
import { controllerRef } from '../common/claim.js';
import { computeHash } from '../common/hash.js';
import {
  ownedObjectHandlers,
  ownersFromInformer,
  resolveControllerRef,
  type Owners,
} from '../common/ownedevents.js';
import { nodeShouldRunDaemonPod } from './eligibility.js';
import { ControllerExpectations } from '../common/expectations.js';
import { maxRevision, newRevision, revisionMatches, revisionName, revisionsToDelete } from './history.js';
import { podsShouldBeOnNode, unscheduledPodsWithoutNode } from './podsonnode.js';
import { daemonPodFor } from './podtemplate.js';
import { rollingUpdatePlan } from './rollingupdate.js';
import { slowStartBatches } from '../common/slowstart.js';
import { daemonSetCounts, nextStatus } from './status.js';
import {
  dsKey,
  minReadySeconds,
  REVISION_HASH_LABEL,
  targetNodeName,
  type NodeToDaemonPods,
} from './util.js';

/** Creates or deletes per sync at most (Kubernetes' BurstReplicas). */
export const BURST_REPLICAS = 250;
const BACKOFF_GC_INTERVAL_MS = 60_000;

export interface DaemonSetControllerOptions {
  burstReplicas?: number;
}

export class DaemonSetController extends WorkerController {
  readonly expectations: ControllerExpectations;
  readonly failedPodsBackoff = new PerKeyBackoff();
  private readonly daemonSets: SharedIndexInformer<'DaemonSet'>;
  private readonly pods: SharedIndexInformer<'Pod'>;
  private readonly nodes: SharedIndexInformer<'Node'>;
  private readonly revisions: SharedIndexInformer<'ControllerRevision'>;
  private readonly recorder: EventRecorder;
  protected readonly worker: KeyWorker;
  private readonly owners: Owners<DaemonSet>;
  private readonly burstReplicas: number;
  private lastBackoffGc = 0;

  constructor(
    private readonly ctx: ControllerContext,
    options: DaemonSetControllerOptions = {},
  ) {
    super();
    this.burstReplicas = options.burstReplicas ?? BURST_REPLICAS;
    this.expectations = new ControllerExpectations(() => ctx.clock.now());
    this.recorder = ctx.recorder('daemonset-controller');
    this.daemonSets = ctx.informers.informerFor('DaemonSet');
    this.pods = ctx.informers.informerFor('Pod');
    this.nodes = ctx.informers.informerFor('Node');
    this.revisions = ctx.informers.informerFor('ControllerRevision');
    indexByController(this.pods);
    indexByController(this.revisions);
    this.worker = new KeyWorker(
      { name: 'daemonset', clock: ctx.clock, logger: ctx.logger, metrics: ctx.queueMetrics },
      (key) => this.syncDaemonSet(key),
    );

    this.daemonSets.addEventHandler({
      onAdd: (ds) => this.enqueue(ds),
      onUpdate: (_old, ds) => this.enqueue(ds),
      onDelete: (ds) => {
        this.expectations.deleteExpectations(dsKey(ds));
        this.enqueue(ds);
      },
    });
    this.owners = ownersFromInformer('DaemonSet', this.daemonSets);
    this.pods.addEventHandler(
      ownedObjectHandlers<Pod, DaemonSet>(this.owners, {
        enqueue: (ds) => this.enqueue(ds),
        created: (ds) => this.expectations.creationObserved(dsKey(ds)),
        deleted: (ds) => this.expectations.deletionObserved(dsKey(ds)),
      }),
    );
    this.nodes.addEventHandler({
      onAdd: (node) => {
        for (const ds of this.daemonSets.list())
          if (nodeShouldRunDaemonPod(node, ds).shouldRun) this.enqueue(ds);
      },
      onUpdate: (old, node) => this.nodeUpdated(old, node),
      // Its DaemonSets recount and delete the unbound pods meant for it; pod GC removes the bound ones.
      onDelete: (node) => {
        for (const ds of this.daemonSets.list())
          if (this.hasPodsOn(ds, node.metadata!.name!)) this.enqueue(ds);
      },
    });
    const revisionChanged = (r: ControllerRevision) => {
      const ds = resolveControllerRef(this.owners, r);
      if (ds) this.enqueue(ds);
    };
    this.revisions.addEventHandler({
      onAdd: revisionChanged,
      onUpdate: (_o, r) => revisionChanged(r),
      onDelete: revisionChanged,
    });
  }

  enqueue(ds: DaemonSet): void {
    this.worker.enqueue(dsKey(ds));
  }

  // ---- the sync ----

  async syncDaemonSet(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const ds = this.daemonSets.get(name, namespace);
    if (!ds) {
      this.expectations.deleteExpectations(key);
      return;
    }
    const sel = ds.spec?.selector;
    if (!sel || (!Object.keys(sel.matchLabels ?? {}).length && !sel.matchExpressions?.length)) {
      this.recorder.event(
        ds,
        'Warning',
        'SelectingAll',
        'This daemon set is selecting all pods. A non-empty selector is required.',
      );
      return;
    }
    if (ds.metadata?.deletionTimestamp) return;
    const selector = labelSelectorFromObject(sel, 'spec.selector');
    const nodes = this.nodes.list();
    const { current, old } = await this.constructHistory(ds, selector);
    const hash = current.metadata?.labels?.[REVISION_HASH_LABEL] ?? '';

    if (!this.expectations.satisfiedExpectations(key)) {
      // Not every create or delete of the last sync is visible yet: only report.
      await this.updateStatus(ds, selector, nodes, hash, false);
      return;
    }
    // One look at its pods serves the whole sync unless the sync itself changed them: with
    // thousands of nodes, matching and grouping every pod three times a sync was most of it.
    let nodeToPods = await this.nodesToDaemonPods(ds, selector);
    let wrote = await this.manage(ds, nodes, nodeToPods, hash);
    if (this.expectations.satisfiedExpectations(key) && ds.spec?.updateStrategy?.type !== 'OnDelete') {
      if (wrote) nodeToPods = await this.nodesToDaemonPods(ds, selector);
      const plan = rollingUpdatePlan(ds, nodes, nodeToPods, hash, this.now());
      wrote = (await this.syncNodes(ds, plan.deletePods, plan.createOnNodes, hash)) || wrote;
    }
    await this.cleanupHistory(ds, selector, old);
    await this.updateStatus(ds, selector, nodes, hash, true, wrote ? undefined : nodeToPods);
  }

  /** Creates and deletes what each node needs (manage); whether it wrote anything. */
  private async manage(
    ds: DaemonSet,
    nodes: Node[],
    nodeToPods: NodeToDaemonPods,
    hash: string,
  ): Promise<boolean> {
    const now = this.now();
    if (now - this.lastBackoffGc > BACKOFF_GC_INTERVAL_MS) {
      this.failedPodsBackoff.gc(now);
      this.lastBackoffGc = now;
    }
    const createOn: string[] = [];
    const toDelete: Pod[] = [];
    let retryAfterMs: number | undefined;
    for (const node of nodes) {
      const nodeName = node.metadata!.name!;
      const plan = podsShouldBeOnNode(
        node,
        nodeToPods.get(nodeName) ?? [],
        ds,
        hash,
        this.failedPodsBackoff,
        now,
      );
      if (plan.create) createOn.push(nodeName);
      toDelete.push(...plan.delete);
      for (const pod of plan.failed) {
        this.recorder.event(
          ds,
          'Warning',
          'FailedDaemonPod',
          `Found failed daemon pod ${pod.metadata!.namespace}/${pod.metadata!.name} on node ${nodeName}, will try to kill it`,
        );
      }
      if (plan.retryAfterMs !== undefined)
        retryAfterMs = Math.min(retryAfterMs ?? Infinity, plan.retryAfterMs);
    }
    toDelete.push(...unscheduledPodsWithoutNode(nodes, nodeToPods));
    if (retryAfterMs !== undefined) this.worker.enqueueAfter(dsKey(ds), retryAfterMs);
    return this.syncNodes(ds, toDelete, createOn, hash);
  }

  /**
   * Deletes and creates, at most burstReplicas of each, expectations set first; creates go in
   * slow-start batches (syncNodes).
   */
  private async syncNodes(
    ds: DaemonSet,
    toDelete: Pod[],
    createOn: string[],
    hash: string,
  ): Promise<boolean> {
    if (!toDelete.length && !createOn.length) return false;
    const key = dsKey(ds);
    const createDiff = Math.min(createOn.length, this.burstReplicas);
    const deleteDiff = Math.min(toDelete.length, this.burstReplicas);
    this.expectations.setExpectations(key, createDiff, deleteDiff);

    const { client, logger } = this.ctx;
    const created = await slowStartBatches(createDiff, async (i) => {
      try {
        const pod = await client.create(daemonPodFor(ds, createOn[i], hash));
        this.recorder.event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata?.name}`);
      } catch (err) {
        this.expectations.creationObserved(key);
        this.recorder.event(ds, 'Warning', 'FailedCreate', `Error creating: ${(err as Error).message}`);
        throw err;
      }
    });
    if (created.skipped > 0) {
      logger.info(
        { daemonset: key, skipped: created.skipped },
        'slow-start failure: skipping the remaining creates until the next sync',
      );
      for (let i = 0; i < created.skipped; i++) this.expectations.creationObserved(key);
    }

    const deleteErrors: Error[] = [];
    await Promise.all(
      toDelete.slice(0, deleteDiff).map(async (pod) => {
        try {
          await client.delete('Pod', pod.metadata!.name!, {
            namespace: pod.metadata!.namespace,
            preconditions: { uid: pod.metadata!.uid },
          });
          this.recorder.event(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata!.name}`);
        } catch (err) {
          this.expectations.deletionObserved(key);
          if (isNotFound(err)) return;
          this.recorder.event(ds, 'Warning', 'FailedDelete', `Error deleting: ${(err as Error).message}`);
          deleteErrors.push(err as Error);
        }
      }),
    );
    const errors = [...created.errors, ...deleteErrors];
    if (errors.length) {
      throw new Error(
        `${errors.length} of ${createDiff + deleteDiff} pod writes failed for DaemonSet ${key}: ${errors[0].message}`,
      );
    }
    return true;
  }

  // ---- what belongs to the DaemonSet ----

  /** Its pods by the node they are for, after adopting and releasing (getNodesToDaemonPods). */
  private async nodesToDaemonPods(ds: DaemonSet, selector: LabelSelector): Promise<NodeToDaemonPods> {
    const pods = await this.claimed(ds, selector, 'Pod', controlledOrOrphans(this.pods, ds));
    const byNode: NodeToDaemonPods = new Map();
    for (const pod of pods) {
      // A pod that is finished and being deleted is as good as gone.
      if (isPodTerminal(pod) && pod.metadata?.deletionTimestamp) continue;
      const nodeName = targetNodeName(pod);
      if (!nodeName) continue;
      const list = byNode.get(nodeName);
      if (list) list.push(pod);
      else byNode.set(nodeName, [pod]);
    }
    return byNode;
  }

  private hasPodsOn(ds: DaemonSet, nodeName: string): boolean {
    return controlledBy(this.pods, ds.metadata?.uid).some((p) => targetNodeName(p) === nodeName);
  }

  /** The objects the DaemonSet owns once orphans it selects are adopted and strays released. */
  private claimed<K extends 'Pod' | 'ControllerRevision'>(
    ds: DaemonSet,
    selector: LabelSelector,
    kind: K,
    objects: KindMap[K][],
  ): Promise<KindMap[K][]> {
    return claimObjects(
      this.ctx.client,
      this.ctx.logger,
      { kind: 'DaemonSet', object: ds },
      selector,
      kind,
      objects,
    );
  }

  // ---- history ----

  /** The current revision (created if the template is new) and the old ones (constructHistory). */
  private async constructHistory(
    ds: DaemonSet,
    selector: LabelSelector,
  ): Promise<{ current: ControllerRevision; old: ControllerRevision[] }> {
    const { client } = this.ctx;
    const owned = await this.claimed(
      ds,
      selector,
      'ControllerRevision',
      controlledOrOrphans(this.revisions, ds),
    );
    const matching = owned
      .filter((r) => revisionMatches(ds, r))
      .sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0));
    const old = owned.filter((r) => !matching.includes(r));
    let current = matching[0];
    if (current && matching.length > 1) current = await this.dedupRevisions(ds, current, matching.slice(1));
    const nextNumber = maxRevision(old) + 1;
    if (current) {
      if ((current.revision ?? 0) < nextNumber) {
        // A rollback to an older template: its revision becomes the newest.
        current = await client.update<ControllerRevision>({ ...current, revision: nextNumber });
      }
      return { current, old };
    }
    const hash = computeHash(ds.spec?.template, ds.status?.collisionCount);
    try {
      current = await client.create(newRevision(ds, hash, nextNumber));
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const name = revisionName(ds, hash);
      const existing = await client.get('ControllerRevision', name, { namespace: ds.metadata!.namespace });
      if (revisionMatches(ds, existing) && controllerRef(existing)?.uid === ds.metadata?.uid)
        return { current: existing, old };
      // Another template already has this name: count the collision so the next hash differs.
      const latest = await client.get('DaemonSet', ds.metadata!.name!, { namespace: ds.metadata!.namespace });
      if ((latest.status?.collisionCount ?? 0) !== (ds.status?.collisionCount ?? 0)) {
        throw new Error(
          `stale collisionCount for DaemonSet ${dsKey(ds)}; will retry once the cache catches up`,
          { cause: err },
        );
      }
      await client.updateStatus<DaemonSet>({
        ...latest,
        status: { ...latest.status, collisionCount: (latest.status?.collisionCount ?? 0) + 1 },
      });
      throw new Error(`hash collision on ControllerRevision ${name}: collisionCount raised; will retry`, {
        cause: err,
      });
    }
    return { current, old };
  }

  /** Several revisions hold the current template: keep the newest, move pods to its hash, delete the rest. */
  private async dedupRevisions(
    ds: DaemonSet,
    keep: ControllerRevision,
    duplicates: ControllerRevision[],
  ): Promise<ControllerRevision> {
    const { client } = this.ctx;
    const keepHash = keep.metadata?.labels?.[REVISION_HASH_LABEL] ?? '';
    for (const dup of duplicates) {
      const dupHash = dup.metadata?.labels?.[REVISION_HASH_LABEL];
      for (const pod of controlledBy(this.pods, ds.metadata?.uid)) {
        if (pod.metadata?.labels?.[REVISION_HASH_LABEL] !== dupHash) continue;
        await client.patch(
          'Pod',
          pod.metadata!.name!,
          { metadata: { labels: { [REVISION_HASH_LABEL]: keepHash } } },
          { namespace: pod.metadata!.namespace },
        );
      }
      await client
        .delete('ControllerRevision', dup.metadata!.name!, { namespace: dup.metadata!.namespace })
        .catch((err) => {
          if (!isNotFound(err)) throw err;
        });
    }
    return keep;
  }

  /** Deletes old revisions beyond revisionHistoryLimit that no live pod uses (cleanupHistory). */
  private async cleanupHistory(
    ds: DaemonSet,
    selector: LabelSelector,
    old: ControllerRevision[],
  ): Promise<void> {
    const liveHashes = new Set<string>();
    for (const pods of (await this.nodesToDaemonPods(ds, selector)).values()) {
      for (const p of pods) {
        const h = p.metadata?.labels?.[REVISION_HASH_LABEL];
        if (h) liveHashes.add(h);
      }
    }
    for (const r of revisionsToDelete(ds, old, liveHashes)) {
      await this.ctx.client
        .delete('ControllerRevision', r.metadata!.name!, { namespace: r.metadata!.namespace })
        .catch((err) => {
          if (!isNotFound(err)) throw err;
        });
    }
  }

  // ---- status ----

  private async updateStatus(
    ds: DaemonSet,
    selector: LabelSelector,
    nodes: Node[],
    hash: string,
    updateObservedGeneration: boolean,
    nodeToPods?: NodeToDaemonPods,
  ): Promise<void> {
    nodeToPods ??= await this.nodesToDaemonPods(ds, selector);
    const counts = daemonSetCounts(ds, nodes, nodeToPods, hash, this.now());
    let target = ds;
    for (let attempt = 0; ; attempt++) {
      const status = nextStatus(target, counts, updateObservedGeneration);
      if (!status) break;
      try {
        await this.ctx.client.updateStatus<DaemonSet>({ ...target, status });
        break;
      } catch (err) {
        if (attempt >= 1 || isNotFound(err)) throw err;
        target = await this.ctx.client.get('DaemonSet', ds.metadata!.name!, {
          namespace: ds.metadata!.namespace,
        });
      }
    }
    // Availability comes with time: look again once the ready pods have been ready long enough.
    if (minReadySeconds(ds) > 0 && counts.numberReady !== counts.numberAvailable) {
      this.worker.enqueueAfter(dsKey(ds), minReadySeconds(ds) * 1000);
    }
  }

  // ---- event handlers ----

  /** A node change matters to a DaemonSet only if it changes where its pods should be (updateNode). */
  private nodeUpdated(old: Node, node: Node): void {
    if (shouldIgnoreNodeUpdate(old, node)) return;
    for (const ds of this.daemonSets.list()) {
      const before = nodeShouldRunDaemonPod(old, ds);
      const after = nodeShouldRunDaemonPod(node, ds);
      if (
        before.shouldRun !== after.shouldRun ||
        before.shouldContinueRunning !== after.shouldContinueRunning
      ) {
        this.enqueue(ds);
      }
    }
  }

  private now(): number {
    return this.ctx.clock.now();
  }
}

/** Heartbeats and readings change a node constantly; only labels, taints and the like matter here. */
export function shouldIgnoreNodeUpdate(old: Node, node: Node): boolean {
  const conditions = (n: Node) => (n.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort();
  if (!deepEqual(conditions(old), conditions(node))) return false;
  return deepEqual(old.metadata?.labels, node.metadata?.labels) && deepEqual(old.spec, node.spec);
}

export const daemonSetController: ControllerDefinition = {
  name: 'daemonset',
  enabledByDefault: true,
  defaultWorkers: 2,
  create: (ctx) => new DaemonSetController(ctx),
};
