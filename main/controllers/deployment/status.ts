/**
 * A Deployment's status from its ReplicaSets (calculateStatus), and the status a rollout
 * reports (syncRolloutStatus): Progressing moves with progress, is True/NewReplicaSetAvailable
 * once complete, False/ProgressDeadlineExceeded after progressDeadlineSeconds without progress.
 */
import type { Deployment, DeploymentStatus, ReplicaSet } from '../../../client/api/types.js';
import { clone } from '../../../client/util/objects.js';
import {
  AVAILABLE,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  getCondition,
  hasProgressDeadline,
  newCondition,
  PROGRESSING,
  Reason,
  removeCondition,
  REPLICA_FAILURE,
  replicaFailure,
  setCondition,
} from './conditions.js';
import {
  actualReplicas,
  availableReplicas,
  maxUnavailable,
  readyReplicas,
  replicasOf,
  specReplicas,
} from './util.js';

export function calculateStatus(
  all: ReplicaSet[],
  newRS: ReplicaSet | undefined,
  d: Deployment,
  now: number,
): DeploymentStatus {
  const available = availableReplicas(all);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata?.generation ?? 0,
    replicas: actualReplicas(all),
    updatedReplicas: actualReplicas(newRS ? [newRS] : []),
    readyReplicas: readyReplicas(all),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, specReplicas(all) - available),
    ...(d.status?.collisionCount !== undefined ? { collisionCount: d.status.collisionCount } : {}),
    conditions: clone(d.status?.conditions ?? []),
  };
  if (available >= replicasOf(d) - maxUnavailable(d)) {
    setCondition(
      status,
      newCondition(
        AVAILABLE,
        'True',
        Reason.MinimumReplicasAvailable,
        'Deployment has minimum availability.',
        now,
      ),
    );
  } else {
    setCondition(
      status,
      newCondition(
        AVAILABLE,
        'False',
        Reason.MinimumReplicasUnavailable,
        'Deployment does not have minimum availability.',
        now,
      ),
    );
  }
  return status;
}

/** The status a rollout reports (syncRolloutStatus's decisions). */
export function rolloutStatus(
  all: ReplicaSet[],
  newRS: ReplicaSet | undefined,
  d: Deployment,
  now: number,
): DeploymentStatus {
  const status = calculateStatus(all, newRS, d, now);
  if (!hasProgressDeadline(d)) removeCondition(status, PROGRESSING);
  const current = getCondition(d.status, PROGRESSING);
  const complete =
    status.replicas === status.updatedReplicas && current?.reason === Reason.NewReplicaSetAvailable;
  if (hasProgressDeadline(d) && !complete) {
    const subject = newRS ? `ReplicaSet "${newRS.metadata?.name}"` : `Deployment "${d.metadata?.name}"`;
    if (deploymentComplete(d, status)) {
      setCondition(
        status,
        newCondition(
          PROGRESSING,
          'True',
          Reason.NewReplicaSetAvailable,
          `${subject} has successfully progressed.`,
          now,
        ),
      );
    } else if (deploymentProgressing(d, status)) {
      const condition = newCondition(
        PROGRESSING,
        'True',
        Reason.ReplicaSetUpdated,
        `${subject} is progressing.`,
        now,
      );
      // Progress moves lastUpdateTime even when the reason stays; a True condition keeps its transition time.
      if (current) {
        if (current.status === 'True') condition.lastTransitionTime = current.lastTransitionTime;
        removeCondition(status, PROGRESSING);
      }
      setCondition(status, condition);
    } else if (deploymentTimedOut(d, status, now)) {
      setCondition(
        status,
        newCondition(
          PROGRESSING,
          'False',
          Reason.ProgressDeadlineExceeded,
          `${subject} has timed out progressing.`,
          now,
        ),
      );
    }
  }
  const failure = replicaFailure(all, newRS);
  if (failure) setCondition(status, failure);
  else removeCondition(status, REPLICA_FAILURE);
  return status;
}

/**
 * When to look again at a Deployment whose rollout has not finished, to notice the deadline
 * passing (requeueStuckDeployment); undefined when there is no deadline to watch.
 */
export function stuckRequeueMs(d: Deployment, status: DeploymentStatus, now: number): number | undefined {
  const current = getCondition(d.status, PROGRESSING);
  if (
    !hasProgressDeadline(d) ||
    !current ||
    deploymentComplete(d, status) ||
    current.reason === Reason.ProgressDeadlineExceeded
  )
    return undefined;
  const from = Date.parse(current.lastUpdateTime ?? '');
  if (!Number.isFinite(from)) return undefined;
  const after = from + d.spec!.progressDeadlineSeconds! * 1000 - now;
  return after < 1000 ? 0 : after + 1000;
}
