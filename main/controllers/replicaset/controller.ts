/**
 * The ReplicaSet controller (Kubernetes' pkg/controller/replicaset): keeps spec.replicas active
 * pods. syncReplicaSet reads the cache, claims the pods its selector matches, creates the
 * missing ones in slow-start batches or deletes the extra ones in Kubernetes' order (ranking.ts),
 * at most burstReplicas per sync, and writes the status. Expectations keep it from acting twice
 * on a cache that does not show its own writes yet.
 */
import { isNotFound } from '../../../client/api/errors.js';
import { isPodReady } from '../../../client/api/pods.js';
import { labelSelectorFromObject } from '../../../client/api/selectors.js';
import type { Pod, ReplicaSet } from '../../../client/api/types.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import { metaNamespaceKey, splitKey } from '../../../client/cache/keys.js';
import type { EventRecorder } from '../../../client/events/recorder.js';
import { claimObjects } from '../common/adoption.js';
import { isPodActive } from '../common/availability.js';
import { controlledBy, controlledOrOrphans, indexByController } from '../common/candidates.js';
import { controllerRef } from '../common/claim.js';
import { ControllerExpectations } from '../common/expectations.js';
import { ownedObjectHandlers, ownersFromInformer } from '../common/ownedevents.js';
import { podFromTemplate } from '../common/podtemplate.js';
import { slowStartBatches } from '../common/slowstart.js';
import type { ControllerContext, ControllerDefinition } from '../types.js';
import { KeyWorker, WorkerController } from '../worker.js';
import { podsToDelete } from '../common/ranking.js';
import { calculateStatus, statusChanged } from './status.js';

/** Creates or deletes per sync at most (Kubernetes' BurstReplicas for ReplicaSets). */
export const BURST_REPLICAS = 500;

export interface ReplicaSetControllerOptions {
  burstReplicas?: number;
}

export class ReplicaSetController extends WorkerController {
  readonly expectations: ControllerExpectations;
  private readonly replicaSets: SharedIndexInformer<'ReplicaSet'>;
  private readonly pods: SharedIndexInformer<'Pod'>;
  private readonly recorder: EventRecorder;
  protected readonly worker: KeyWorker;
  private readonly burstReplicas: number;

  constructor(
    private readonly ctx: ControllerContext,
    options: ReplicaSetControllerOptions = {},
  ) {
    super();
    this.burstReplicas = options.burstReplicas ?? BURST_REPLICAS;
    this.expectations = new ControllerExpectations(() => ctx.clock.now());
    this.recorder = ctx.recorder('replicaset-controller');
    this.replicaSets = ctx.informers.informerFor('ReplicaSet');
    this.pods = ctx.informers.informerFor('Pod');
    indexByController(this.pods);
    indexByController(this.replicaSets);
    this.worker = new KeyWorker(
      { name: 'replicaset', clock: ctx.clock, logger: ctx.logger, metrics: ctx.queueMetrics },
      (key) => this.syncReplicaSet(key),
    );
    this.replicaSets.addEventHandler({
      onAdd: (rs) => this.enqueue(rs),
      onUpdate: (_old, rs) => this.enqueue(rs),
      onDelete: (rs) => {
        this.expectations.deleteExpectations(metaNamespaceKey(rs));
        this.enqueue(rs);
      },
    });
    this.pods.addEventHandler(
      ownedObjectHandlers<Pod, ReplicaSet>(ownersFromInformer('ReplicaSet', this.replicaSets), {
        enqueue: (rs) => this.enqueue(rs),
        created: (rs) => this.expectations.creationObserved(metaNamespaceKey(rs)),
        deleted: (rs, pod) => this.expectations.deletionObserved(metaNamespaceKey(rs), pod.metadata?.uid),
        // A pod that just became ready counts as available minReadySeconds later.
        updated: (rs, old, pod) => {
          const minReady = rs.spec?.minReadySeconds ?? 0;
          if (minReady > 0 && !isPodReady(old) && isPodReady(pod))
            this.worker.enqueueAfter(metaNamespaceKey(rs), minReady * 1000);
        },
      }),
    );
  }

  enqueue(rs: ReplicaSet): void {
    this.worker.enqueue(metaNamespaceKey(rs));
  }

  // ---- the sync ----

  async syncReplicaSet(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const rs = this.replicaSets.get(name, namespace);
    if (!rs) {
      this.expectations.deleteExpectations(key);
      return;
    }
    const needsSync = this.expectations.satisfiedExpectations(key);
    const selector = labelSelectorFromObject(rs.spec?.selector ?? {}, 'spec.selector');
    const active = controlledOrOrphans(this.pods, rs).filter(isPodActive);
    const owned = await claimObjects(
      this.ctx.client,
      this.ctx.logger,
      { kind: 'ReplicaSet', object: rs },
      selector,
      'Pod',
      active,
    );
    let manageError: Error | undefined;
    if (needsSync && !rs.metadata?.deletionTimestamp) {
      try {
        await this.manageReplicas(rs, owned);
      } catch (err) {
        manageError = err as Error;
      }
    }
    const now = this.ctx.clock.now();
    const status = calculateStatus(rs, owned, manageError, now);
    await this.updateStatus(rs, status);
    // Availability comes with time: look again once the ready pods have been ready long enough.
    const minReady = rs.spec?.minReadySeconds ?? 0;
    if (!manageError && minReady > 0 && status.readyReplicas !== status.availableReplicas) {
      this.worker.enqueueAfter(key, minReady * 1000);
    }
    if (manageError) throw manageError;
  }

  /** Creates or deletes pods to reach spec.replicas, at most burstReplicas (manageReplicas). */
  private async manageReplicas(rs: ReplicaSet, active: Pod[]): Promise<void> {
    const key = metaNamespaceKey(rs);
    const diff = active.length - (rs.spec?.replicas ?? 1);
    if (diff < 0) {
      const count = Math.min(-diff, this.burstReplicas);
      this.expectations.setExpectations(key, count, 0);
      const result = await slowStartBatches(count, async () => {
        try {
          const pod = await this.ctx.client.create(podFromTemplate(rs.spec?.template, rs, 'ReplicaSet'));
          this.recorder.event(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata?.name}`);
        } catch (err) {
          this.expectations.creationObserved(key);
          this.recorder.event(rs, 'Warning', 'FailedCreate', `Error creating: ${(err as Error).message}`);
          throw err;
        }
      });
      if (result.skipped > 0) {
        this.ctx.logger.info(
          { replicaset: key, skipped: result.skipped },
          'slow-start failure: skipping the remaining creates until the next sync',
        );
        for (let i = 0; i < result.skipped; i++) this.expectations.creationObserved(key);
      }
      if (result.errors.length) throw result.errors[0];
      return;
    }
    if (diff > 0) {
      const count = Math.min(diff, this.burstReplicas);
      const victims = podsToDelete(active, this.relatedPods(rs), count, this.ctx.clock.now());
      this.expectations.expectDeletions(
        key,
        victims.map((p) => p.metadata!.uid!),
      );
      const errors: Error[] = [];
      await Promise.all(
        victims.map(async (pod) => {
          try {
            await this.ctx.client.delete('Pod', pod.metadata!.name!, {
              namespace: pod.metadata!.namespace,
              preconditions: { uid: pod.metadata!.uid },
            });
            this.recorder.event(rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata!.name}`);
          } catch (err) {
            this.expectations.deletionObserved(key, pod.metadata!.uid);
            if (isNotFound(err)) return;
            this.recorder.event(rs, 'Warning', 'FailedDelete', `Error deleting: ${(err as Error).message}`);
            errors.push(err as Error);
          }
        }),
      );
      if (errors.length) throw errors[0];
    }
  }

  /**
   * The active pods of every ReplicaSet with the same controller as this one — its Deployment's
   * — for ranking pods doubled up on a node (getIndirectlyRelatedPods).
   */
  private relatedPods(rs: ReplicaSet): Pod[] {
    const owner = controllerRef(rs);
    const siblings = owner
      ? controlledBy(this.replicaSets, owner.uid).map((r) => r.metadata!.uid)
      : [rs.metadata!.uid];
    return siblings.flatMap((uid) => controlledBy(this.pods, uid)).filter(isPodActive);
  }

  private async updateStatus(rs: ReplicaSet, status: NonNullable<ReplicaSet['status']>): Promise<void> {
    let target = rs;
    for (let attempt = 0; ; attempt++) {
      if (!statusChanged(target, status)) return;
      try {
        await this.ctx.client.updateStatus<ReplicaSet>({ ...target, status });
        return;
      } catch (err) {
        if (attempt >= 1 || isNotFound(err)) throw err;
        target = await this.ctx.client.get('ReplicaSet', rs.metadata!.name!, {
          namespace: rs.metadata!.namespace,
        });
      }
    }
  }
}

export const replicaSetController: ControllerDefinition = {
  name: 'replicaset',
  enabledByDefault: true,
  defaultWorkers: 5,
  create: (ctx) => new ReplicaSetController(ctx),
};
