/**
 * The Deployment controller (Kubernetes' pkg/controller/deployment): one ReplicaSet per pod
 * template, the current one scaled up and the old ones down as the strategy allows.
 * syncDeployment reads the cache, claims the ReplicaSets its selector matches, and then — as
 * Kubernetes does — only reports for a Deployment being deleted, scales for a paused one or a
 * change of replicas (proportionally during a rollout), and otherwise rolls out by its
 * strategy. Decisions are in the pure files beside this one; this file acts on them.
 */
import { isAlreadyExists, isNotFound } from '../../../client/api/errors.js';
import { labelSelectorFromObject } from '../../../client/api/selectors.js';
import type { Deployment, DeploymentStatus, Pod, ReplicaSet } from '../../../client/api/types.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import { metaNamespaceKey, splitKey } from '../../../client/cache/keys.js';
import type { EventRecorder } from '../../../client/events/recorder.js';
import { clone, deepEqual } from '../../../client/util/objects.js';
import { claimObjects } from '../common/adoption.js';
import { controlledBy, controlledOrOrphans, indexByController } from '../common/candidates.js';
import { controllerRef, ownerRefFor } from '../common/claim.js';
import { computeHash } from '../common/hash.js';
import {
  ownedObjectHandlers,
  ownersFromInformer,
  resolveControllerRef,
  type Owners,
} from '../common/ownedevents.js';
import type { ControllerContext, ControllerDefinition } from '../types.js';
import { KeyWorker, WorkerController } from '../worker.js';
import {
  getCondition,
  hasProgressDeadline,
  newCondition,
  PROGRESSING,
  Reason,
  setCondition,
  deploymentComplete,
} from './conditions.js';
import { newReplicaSetTarget, oldReplicaSetsPlan } from './rolling.js';
import { scalePlan, type ScaleStep } from './scale.js';
import { calculateStatus, rolloutStatus, stuckRequeueMs } from './status.js';
import {
  activeReplicaSets,
  actualReplicas,
  byRevision,
  desiredReplicasAnnotation,
  findNewReplicaSet,
  maxRevision,
  maxSurge,
  newRSNewReplicas,
  POD_TEMPLATE_HASH_LABEL,
  replicasAnnotationsNeedUpdate,
  replicasOf,
  REVISION_ANNOTATION,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
} from './util.js';

export class DeploymentController extends WorkerController {
  private readonly deployments: SharedIndexInformer<'Deployment'>;
  private readonly replicaSets: SharedIndexInformer<'ReplicaSet'>;
  private readonly pods: SharedIndexInformer<'Pod'>;
  private readonly recorder: EventRecorder;
  protected readonly worker: KeyWorker;
  private readonly owners: Owners<Deployment>;

  constructor(private readonly ctx: ControllerContext) {
    super();
    this.recorder = ctx.recorder('deployment-controller');
    this.deployments = ctx.informers.informerFor('Deployment');
    this.replicaSets = ctx.informers.informerFor('ReplicaSet');
    this.pods = ctx.informers.informerFor('Pod');
    indexByController(this.pods);
    indexByController(this.replicaSets);
    this.worker = new KeyWorker(
      { name: 'deployment', clock: ctx.clock, logger: ctx.logger, metrics: ctx.queueMetrics },
      (key) => this.syncDeployment(key),
    );
    this.deployments.addEventHandler({
      onAdd: (d) => this.enqueue(d),
      onUpdate: (_old, d) => this.enqueue(d),
      onDelete: (d) => this.enqueue(d),
    });
    this.owners = ownersFromInformer('Deployment', this.deployments);
    this.replicaSets.addEventHandler(
      ownedObjectHandlers<ReplicaSet, Deployment>(this.owners, { enqueue: (d) => this.enqueue(d) }),
    );
    // A Recreate rollout waits for the old pods to be gone.
    this.pods.addEventHandler({ onDelete: (pod) => this.podDeleted(pod) });
  }

  enqueue(d: Deployment): void {
    this.worker.enqueue(metaNamespaceKey(d));
  }

  // ---- the sync ----

  async syncDeployment(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const cached = this.deployments.get(name, namespace);
    if (!cached) return;
    // The sync records what it wrote on its own copy.
    const d = clone(cached);
    const sel = d.spec?.selector;
    if (!sel || (!Object.keys(sel.matchLabels ?? {}).length && !sel.matchExpressions?.length)) {
      this.recorder.event(
        d,
        'Warning',
        'SelectingAll',
        'This deployment is selecting all pods. A non-empty selector is required.',
      );
      if ((d.status?.observedGeneration ?? 0) < (d.metadata?.generation ?? 0))
        await this.writeStatus(d, { ...d.status, observedGeneration: d.metadata?.generation });
      return;
    }
    const rsList = await this.claimReplicaSets(d);
    if (d.metadata?.deletionTimestamp) return this.syncStatusOnly(d, rsList);
    await this.checkPausedConditions(d);
    if (d.spec?.paused) return this.sync(d, rsList);
    if (await this.isScalingEvent(d, rsList)) return this.sync(d, rsList);
    if (d.spec?.strategy?.type === 'Recreate') return this.rolloutRecreate(d, rsList);
    return this.rolloutRolling(d, rsList);
  }

  private async syncStatusOnly(d: Deployment, rsList: ReplicaSet[]): Promise<void> {
    const { newRS, old } = await this.replicaSetsAndSyncRevision(d, rsList, false);
    await this.syncDeploymentStatus([...old, ...(newRS ? [newRS] : [])], newRS, d);
  }

  /** Scales without rolling out: a paused Deployment, or one whose replicas changed (sync). */
  private async sync(d: Deployment, rsList: ReplicaSet[]): Promise<void> {
    const { newRS, old } = await this.replicaSetsAndSyncRevision(d, rsList, false);
    await this.applySteps(d, scalePlan(d, newRS, old));
    if (d.spec?.paused) await this.cleanupDeployment(d, old);
    await this.syncDeploymentStatus([...old, ...(newRS ? [newRS] : [])], newRS, d);
  }

  /** A ReplicaSet was sized for another replicas count than the Deployment's now (isScalingEvent). */
  private async isScalingEvent(d: Deployment, rsList: ReplicaSet[]): Promise<boolean> {
    const { newRS, old } = await this.replicaSetsAndSyncRevision(d, rsList, false);
    return activeReplicaSets([...old, ...(newRS ? [newRS] : [])]).some((rs) => {
      const desired = desiredReplicasAnnotation(rs);
      return desired !== undefined && desired !== replicasOf(d);
    });
  }

  private async rolloutRolling(d: Deployment, rsList: ReplicaSet[]): Promise<void> {
    const { newRS, old } = await this.replicaSetsAndSyncRevision(d, rsList, true);
    if (!newRS) return;
    const all = [...old, newRS];
    const target = newReplicaSetTarget(d, all, newRS);
    if (target !== undefined) {
      const scaled = await this.scaleReplicaSet(d, newRS, target, target > replicasOf(newRS) ? 'up' : 'down');
      if (scaled) return this.syncRolloutStatus(all, newRS, d);
    }
    const steps = oldReplicaSetsPlan(d, all, activeReplicaSets(old), newRS);
    if (steps.length && (await this.applySteps(d, steps))) return this.syncRolloutStatus(all, newRS, d);
    if (deploymentComplete(d, d.status ?? {})) await this.cleanupDeployment(d, old);
    return this.syncRolloutStatus(all, newRS, d);
  }

  private async rolloutRecreate(d: Deployment, rsList: ReplicaSet[]): Promise<void> {
    let { newRS, old } = await this.replicaSetsAndSyncRevision(d, rsList, false);
    let all = [...old, ...(newRS ? [newRS] : [])];
    const down = activeReplicaSets(old).map((rs): ScaleStep => ({ rs, to: 0, operation: 'down' }));
    if (await this.applySteps(d, down)) return this.syncRolloutStatus(all, newRS, d);
    if (this.oldPodsRunning(d, newRS, old, rsList)) return this.syncRolloutStatus(all, newRS, d);
    if (!newRS) {
      ({ newRS, old } = await this.replicaSetsAndSyncRevision(d, rsList, true));
      if (!newRS) return;
      all = [...old, newRS];
    }
    if (replicasOf(newRS) !== replicasOf(d))
      await this.scaleReplicaSet(d, newRS, replicasOf(d), replicasOf(newRS) < replicasOf(d) ? 'up' : 'down');
    if (deploymentComplete(d, d.status ?? {})) await this.cleanupDeployment(d, old);
    return this.syncRolloutStatus(all, newRS, d);
  }

  /** Old pods that have not finished, or any pod of an old ReplicaSet (oldPodsRunning). */
  private oldPodsRunning(
    d: Deployment,
    newRS: ReplicaSet | undefined,
    old: ReplicaSet[],
    rsList: ReplicaSet[],
  ): boolean {
    if (actualReplicas(old) > 0) return true;
    return rsList
      .filter((rs) => rs !== newRS)
      .some((rs) =>
        controlledBy(this.pods, rs.metadata?.uid).some(
          (p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
        ),
      );
  }

  // ---- ReplicaSets ----

  private claimReplicaSets(d: Deployment): Promise<ReplicaSet[]> {
    const selector = labelSelectorFromObject(d.spec!.selector!, 'spec.selector');
    return claimObjects(
      this.ctx.client,
      this.ctx.logger,
      { kind: 'Deployment', object: d },
      selector,
      'ReplicaSet',
      controlledOrOrphans(this.replicaSets, d),
    );
  }

  /**
   * The new ReplicaSet (created when asked and missing) and every old one, with the revision
   * annotations brought up to date on both sides (getAllReplicaSetsAndSyncRevision).
   */
  private async replicaSetsAndSyncRevision(
    d: Deployment,
    rsList: ReplicaSet[],
    create: boolean,
  ): Promise<{ newRS: ReplicaSet | undefined; old: ReplicaSet[] }> {
    const existing = findNewReplicaSet(d, rsList);
    const old = rsList.filter((rs) => rs !== existing);
    const newRevision = maxRevision(old) + 1;
    if (existing) {
      const copy = clone(existing);
      const annotationsChanged = setNewReplicaSetAnnotations(d, copy, newRevision, true);
      const minReadyChanged = (copy.spec?.minReadySeconds ?? 0) !== (d.spec?.minReadySeconds ?? 0);
      if (annotationsChanged || minReadyChanged) {
        copy.spec = { ...copy.spec, minReadySeconds: d.spec?.minReadySeconds ?? 0 };
        const updated = await this.ctx.client.update(copy);
        // Later steps of this sync see the written ReplicaSet, not the cache's older copy.
        rsList[rsList.indexOf(existing)] = updated;
        return { newRS: updated, old };
      }
      let needsUpdate = setDeploymentRevision(d, copy.metadata?.annotations?.[REVISION_ANNOTATION] ?? '');
      if (hasProgressDeadline(d) && !getCondition(d.status, PROGRESSING)) {
        const status = (d.status ??= {});
        setCondition(
          status,
          newCondition(
            PROGRESSING,
            'True',
            Reason.FoundNewReplicaSet,
            `Found new replica set "${copy.metadata?.name}"`,
            this.now(),
          ),
        );
        needsUpdate = true;
      }
      if (needsUpdate) await this.writeStatus(d, d.status ?? {});
      return { newRS: copy, old };
    }
    if (!create) return { newRS: undefined, old };
    return { newRS: await this.createNewReplicaSet(d, old, newRevision), old };
  }

  private async createNewReplicaSet(
    d: Deployment,
    old: ReplicaSet[],
    newRevision: number,
  ): Promise<ReplicaSet | undefined> {
    const { client } = this.ctx;
    const template = clone(d.spec!.template ?? {});
    const hash = computeHash(template, d.status?.collisionCount);
    template.metadata = {
      ...template.metadata,
      labels: { ...template.metadata?.labels, [POD_TEMPLATE_HASH_LABEL]: hash },
    };
    const selector = clone(d.spec!.selector!);
    selector.matchLabels = { ...selector.matchLabels, [POD_TEMPLATE_HASH_LABEL]: hash };
    const rs: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata!.name}-${hash}`,
        namespace: d.metadata!.namespace,
        labels: { ...template.metadata.labels },
        ownerReferences: [ownerRefFor(d, 'Deployment')],
      },
      spec: { replicas: 0, minReadySeconds: d.spec?.minReadySeconds ?? 0, selector, template },
    };
    rs.spec!.replicas = newRSNewReplicas(d, [...old, rs], rs);
    setNewReplicaSetAnnotations(d, rs, newRevision, false);
    let created: ReplicaSet;
    let alreadyExisted = false;
    try {
      created = await client.create(rs);
    } catch (err) {
      if (isAlreadyExists(err)) {
        const found = await client.get('ReplicaSet', rs.metadata!.name!, {
          namespace: rs.metadata!.namespace,
        });
        if (controllerRef(found)?.uid === d.metadata?.uid && this.sameTemplate(d, found)) {
          created = found;
          alreadyExisted = true;
        } else {
          // Another template holds the name: count the collision so the next hash differs.
          const status = { ...d.status, collisionCount: (d.status?.collisionCount ?? 0) + 1 };
          await this.writeStatus(d, status).catch(() => undefined);
          throw new Error(
            `ReplicaSet ${rs.metadata!.name} exists with another template; collisionCount raised to ${status.collisionCount}, will retry`,
            { cause: err },
          );
        }
      } else {
        if (hasProgressDeadline(d)) {
          const msg = `Failed to create new replica set "${rs.metadata!.name}": ${(err as Error).message}`;
          const status = clone(d.status ?? {});
          setCondition(
            status,
            newCondition(PROGRESSING, 'False', Reason.ReplicaSetCreateError, msg, this.now()),
          );
          await this.writeStatus(d, status).catch(() => undefined);
          this.recorder.event(d, 'Warning', Reason.ReplicaSetCreateError, msg);
        }
        throw err;
      }
    }
    if (!alreadyExisted && replicasOf(created) > 0) {
      this.recorder.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled up replica set ${created.metadata?.name} from 0 to ${replicasOf(created)}`,
      );
    }
    let needsUpdate = setDeploymentRevision(d, String(newRevision));
    if (!alreadyExisted && hasProgressDeadline(d)) {
      const status = (d.status ??= {});
      setCondition(
        status,
        newCondition(
          PROGRESSING,
          'True',
          Reason.NewReplicaSetCreated,
          `Created new replica set "${created.metadata?.name}"`,
          this.now(),
        ),
      );
      needsUpdate = true;
    }
    if (needsUpdate) await this.writeStatus(d, d.status ?? {});
    return created;
  }

  private sameTemplate(d: Deployment, rs: ReplicaSet): boolean {
    return findNewReplicaSet(d, [rs]) === rs;
  }

  /** Runs scale steps in order; true when any changed a size. */
  private async applySteps(d: Deployment, steps: ScaleStep[]): Promise<boolean> {
    let scaled = false;
    const latest = new Map<string, ReplicaSet>();
    for (const step of steps) {
      const rs = latest.get(step.rs.metadata!.uid!) ?? step.rs;
      const result = await this.scaleReplicaSet(d, rs, step.to, step.operation);
      if (result) {
        latest.set(result.metadata!.uid!, result);
        if (replicasOf(result) !== replicasOf(rs)) scaled = true;
      }
    }
    return scaled;
  }

  /**
   * Sets a ReplicaSet's size and replicas annotations (scaleReplicaSet); returns the updated
   * ReplicaSet, or undefined when nothing needed writing.
   */
  private async scaleReplicaSet(
    d: Deployment,
    rs: ReplicaSet,
    to: number,
    operation: 'up' | 'down' | undefined,
  ): Promise<ReplicaSet | undefined> {
    const max = replicasOf(d) + maxSurge(d);
    const sizeChanged = replicasOf(rs) !== to;
    if (!sizeChanged && !replicasAnnotationsNeedUpdate(rs, replicasOf(d), max)) return undefined;
    const copy = clone(rs);
    copy.spec = { ...copy.spec, replicas: to };
    setReplicasAnnotations(copy, replicasOf(d), max);
    const updated = await this.ctx.client.update(copy);
    if (sizeChanged && operation) {
      this.recorder.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled ${operation} replica set ${rs.metadata?.name} from ${replicasOf(rs)} to ${to}`,
      );
    }
    return updated;
  }

  /** Deletes old, empty ReplicaSets beyond revisionHistoryLimit, lowest revision first (cleanupDeployment). */
  private async cleanupDeployment(d: Deployment, old: ReplicaSet[]): Promise<void> {
    const limit = d.spec?.revisionHistoryLimit;
    if (limit === undefined) return;
    const cleanable = old.filter((rs) => !rs.metadata?.deletionTimestamp).sort(byRevision);
    const diff = cleanable.length - limit;
    for (const rs of cleanable.slice(0, Math.max(0, diff))) {
      if (
        (rs.status?.replicas ?? 0) !== 0 ||
        replicasOf(rs) !== 0 ||
        (rs.metadata?.generation ?? 0) > (rs.status?.observedGeneration ?? 0)
      )
        continue;
      await this.ctx.client
        .delete('ReplicaSet', rs.metadata!.name!, {
          namespace: rs.metadata!.namespace,
          preconditions: { uid: rs.metadata!.uid },
        })
        .catch((err) => {
          if (!isNotFound(err)) throw err;
        });
    }
  }

  // ---- status ----

  /** Paused and resumed show in Progressing, unless the deadline already passed (checkPausedConditions). */
  private async checkPausedConditions(d: Deployment): Promise<void> {
    if (!hasProgressDeadline(d)) return;
    const cond = getCondition(d.status, PROGRESSING);
    if (cond?.reason === Reason.ProgressDeadlineExceeded) return;
    const pausedShown = cond?.reason === Reason.DeploymentPaused;
    const status = clone(d.status ?? {});
    if (d.spec?.paused && !pausedShown) {
      setCondition(
        status,
        newCondition(PROGRESSING, 'Unknown', Reason.DeploymentPaused, 'Deployment is paused', this.now()),
      );
    } else if (!d.spec?.paused && pausedShown) {
      setCondition(
        status,
        newCondition(PROGRESSING, 'Unknown', Reason.DeploymentResumed, 'Deployment is resumed', this.now()),
      );
    } else return;
    await this.writeStatus(d, status);
  }

  private async syncDeploymentStatus(
    all: ReplicaSet[],
    newRS: ReplicaSet | undefined,
    d: Deployment,
  ): Promise<void> {
    const status = calculateStatus(all, newRS, d, this.now());
    if (!deepEqual(d.status ?? {}, status)) await this.writeStatus(d, status);
  }

  private async syncRolloutStatus(
    all: ReplicaSet[],
    newRS: ReplicaSet | undefined,
    d: Deployment,
  ): Promise<void> {
    const now = this.now();
    const status = rolloutStatus(all, newRS, d, now);
    if (deepEqual(d.status ?? {}, status)) {
      const after = stuckRequeueMs(d, status, now);
      if (after !== undefined) this.worker.enqueueAfter(metaNamespaceKey(d), after);
      return;
    }
    await this.writeStatus(d, status);
  }

  /** Writes status (and the revision annotation, which deployments/status may carry); `d` follows. */
  private async writeStatus(d: Deployment, status: DeploymentStatus): Promise<void> {
    const written = await this.ctx.client.updateStatus<Deployment>({ ...d, status });
    d.metadata = written.metadata;
    d.status = written.status;
  }

  // ---- event handlers ----

  private podDeleted(pod: Pod): void {
    const ref = controllerRef(pod);
    if (ref?.kind !== 'ReplicaSet') return;
    const rs = this.replicaSets.get(ref.name!, pod.metadata?.namespace);
    if (!rs || rs.metadata?.uid !== ref.uid) return;
    const d = resolveControllerRef(this.owners, rs);
    if (d?.spec?.strategy?.type === 'Recreate') this.enqueue(d);
  }

  private now(): number {
    return this.ctx.clock.now();
  }
}

export const deploymentController: ControllerDefinition = {
  name: 'deployment',
  enabledByDefault: true,
  defaultWorkers: 5,
  create: (ctx) => new DeploymentController(ctx),
};
