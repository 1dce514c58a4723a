/**
 * A Deployment's conditions (deploymentutil's condition helpers and progress.go's decisions):
 * Available (minimum availability), Progressing (new ReplicaSet created, found, updated,
 * available; paused, resumed; ProgressDeadlineExceeded) and ReplicaFailure copied from its
 * ReplicaSets.
 */
import type {
  Deployment,
  DeploymentCondition,
  DeploymentStatus,
  ReplicaSet,
} from '../../../client/api/types.js';
import { rfc3339 } from '../../../client/util/clock.js';
import { replicasOf } from './util.js';

export const AVAILABLE = 'Available';
export const PROGRESSING = 'Progressing';
export const REPLICA_FAILURE = 'ReplicaFailure';

export const Reason = {
  MinimumReplicasAvailable: 'MinimumReplicasAvailable',
  MinimumReplicasUnavailable: 'MinimumReplicasUnavailable',
  NewReplicaSetCreated: 'NewReplicaSetCreated',
  FoundNewReplicaSet: 'FoundNewReplicaSet',
  NewReplicaSetAvailable: 'NewReplicaSetAvailable',
  ReplicaSetUpdated: 'ReplicaSetUpdated',
  ProgressDeadlineExceeded: 'ProgressDeadlineExceeded',
  DeploymentPaused: 'DeploymentPaused',
  DeploymentResumed: 'DeploymentResumed',
  ReplicaSetCreateError: 'ReplicaSetCreateError',
} as const;

export function newCondition(
  type: string,
  status: 'True' | 'False' | 'Unknown',
  reason: string,
  message: string,
  now: number,
): DeploymentCondition {
  const t = rfc3339(now);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

export function getCondition(
  status: DeploymentStatus | undefined,
  type: string,
): DeploymentCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * Sets a condition (SetDeploymentCondition): one of the same status and reason is left as it
 * is; one of the same status keeps its lastTransitionTime. Mutates `status`.
 */
export function setCondition(status: DeploymentStatus, condition: DeploymentCondition): void {
  const current = getCondition(status, condition.type ?? '');
  if (current && current.status === condition.status && current.reason === condition.reason) return;
  const next = { ...condition };
  if (current && current.status === condition.status) next.lastTransitionTime = current.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== next.type), next];
}

export function removeCondition(status: DeploymentStatus, type: string): void {
  status.conditions = (status.conditions ?? []).filter((c) => c.type !== type);
}

/** A deadline is set and is not "never" (HasProgressDeadline). */
export function hasProgressDeadline(d: Deployment): boolean {
  const s = d.spec?.progressDeadlineSeconds;
  return s !== undefined && s !== 2 ** 31 - 1;
}

/** Every pod is updated and available, and the status is current (DeploymentComplete). */
export function deploymentComplete(d: Deployment, status: DeploymentStatus): boolean {
  const r = replicasOf(d);
  return (
    (status.updatedReplicas ?? 0) === r &&
    (status.replicas ?? 0) === r &&
    (status.availableReplicas ?? 0) === r &&
    (status.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0)
  );
}

/** More pods are updated, ready or available, or fewer are old, than before (DeploymentProgressing). */
export function deploymentProgressing(d: Deployment, status: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (status.replicas ?? 0) - (status.updatedReplicas ?? 0);
  return (
    (status.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (status.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (status.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** No progress for progressDeadlineSeconds since the Progressing condition last moved (DeploymentTimedOut). */
export function deploymentTimedOut(d: Deployment, status: DeploymentStatus, now: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getCondition(status, PROGRESSING);
  if (!c) return false;
  if (c.reason === Reason.NewReplicaSetAvailable) return false;
  if (c.reason === Reason.ProgressDeadlineExceeded) return true;
  const from = Date.parse(c.lastUpdateTime ?? '');
  if (!Number.isFinite(from)) return false;
  return from + (d.spec!.progressDeadlineSeconds ?? 0) * 1000 < now;
}

/** The first ReplicaFailure of the new ReplicaSet, else of an old one, as a Deployment condition. */
export function replicaFailure(
  all: ReplicaSet[],
  newRS: ReplicaSet | undefined,
): DeploymentCondition | undefined {
  const ordered = newRS ? [newRS, ...all.filter((rs) => rs !== newRS)] : all;
  for (const rs of ordered) {
    const c = rs.status?.conditions?.find((x) => x.type === REPLICA_FAILURE && x.status === 'True');
    if (c)
      return {
        type: REPLICA_FAILURE,
        status: c.status,
        reason: c.reason,
        message: c.message,
        lastUpdateTime: c.lastTransitionTime,
        lastTransitionTime: c.lastTransitionTime,
      };
  }
  return undefined;
}
