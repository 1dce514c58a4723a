/**
 * A ReplicaSet's status from its active pods (calculateStatus): how many it has, how many carry
 * every template label, are ready, are available; and the ReplicaFailure condition while
 * creating or deleting pods fails (FailedCreate / FailedDelete), gone once writes succeed.
 */
import { isPodReady } from '../../../client/api/pods.js';
import type { Pod, ReplicaSet, ReplicaSetCondition, ReplicaSetStatus } from '../../../client/api/types.js';
import { rfc3339 } from '../../../client/util/clock.js';
import { deepEqual } from '../../../client/util/objects.js';
import { isPodAvailable } from '../common/availability.js';

export const REPLICA_FAILURE = 'ReplicaFailure';

export function calculateStatus(
  rs: ReplicaSet,
  activePods: Pod[],
  manageError: Error | undefined,
  now: number,
): ReplicaSetStatus {
  const templateLabels = Object.entries(rs.spec?.template?.metadata?.labels ?? {});
  const minReady = rs.spec?.minReadySeconds ?? 0;
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const pod of activePods) {
    const labels = pod.metadata?.labels ?? {};
    if (templateLabels.every(([k, v]) => labels[k] === v)) fullyLabeled++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, minReady, now)) available++;
    }
  }
  let conditions = rs.status?.conditions ?? [];
  const failure = conditions.find((c) => c.type === REPLICA_FAILURE);
  if (manageError && !failure) {
    const diff = activePods.length - (rs.spec?.replicas ?? 1);
    const condition: ReplicaSetCondition = {
      type: REPLICA_FAILURE,
      status: 'True',
      lastTransitionTime: rfc3339(now),
      ...(diff < 0 ? { reason: 'FailedCreate' } : diff > 0 ? { reason: 'FailedDelete' } : {}),
      message: manageError.message,
    };
    conditions = [...conditions, condition];
  } else if (!manageError && failure) {
    conditions = conditions.filter((c) => c !== failure);
  }
  return {
    ...rs.status,
    replicas: activePods.length,
    fullyLabeledReplicas: fullyLabeled,
    readyReplicas: ready,
    availableReplicas: available,
    observedGeneration: rs.metadata?.generation ?? 0,
    conditions,
  };
}

/** Whether `next` says anything the stored status does not (updateReplicaSetStatus's check). */
export function statusChanged(rs: ReplicaSet, next: ReplicaSetStatus): boolean {
  const cur = rs.status ?? {};
  return (
    (cur.replicas ?? 0) !== next.replicas ||
    (cur.fullyLabeledReplicas ?? 0) !== next.fullyLabeledReplicas ||
    (cur.readyReplicas ?? 0) !== next.readyReplicas ||
    (cur.availableReplicas ?? 0) !== next.availableReplicas ||
    (cur.observedGeneration ?? 0) !== next.observedGeneration ||
    !deepEqual(cur.conditions ?? [], next.conditions ?? [])
  );
}
