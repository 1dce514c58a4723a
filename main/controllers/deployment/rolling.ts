/**
 * RollingUpdate's decisions (rolling.go): how far the new ReplicaSet may grow
 * (reconcileNewReplicaSet), and how far the old ones may shrink (reconcileOldReplicaSets) —
 * first their unhealthy pods, then available ones, never below replicas − maxUnavailable
 * available pods.
 */
import type { Deployment, ReplicaSet } from '../../../client/api/types.js';
import type { ScaleStep } from './scale.js';
import {
  availableReplicas,
  byCreation,
  maxUnavailable,
  newRSNewReplicas,
  replicasOf,
  specReplicas,
} from './util.js';

/** The new ReplicaSet's next size, or undefined when it is right (reconcileNewReplicaSet). */
export function newReplicaSetTarget(d: Deployment, all: ReplicaSet[], newRS: ReplicaSet): number | undefined {
  if (replicasOf(newRS) === replicasOf(d)) return undefined;
  if (replicasOf(newRS) > replicasOf(d)) return replicasOf(d);
  const target = newRSNewReplicas(d, all, newRS);
  return target === replicasOf(newRS) ? undefined : target;
}

/**
 * The old ReplicaSets' scale-downs, in order (reconcileOldReplicaSets, cleanupUnhealthyReplicas,
 * scaleDownOldReplicaSetsForRollingUpdate). `old` are the active old ReplicaSets.
 */
export function oldReplicaSetsPlan(
  d: Deployment,
  all: ReplicaSet[],
  old: ReplicaSet[],
  newRS: ReplicaSet,
): ScaleStep[] {
  if (specReplicas(old) === 0) return [];
  // A ReplicaSet counting more available pods than it asks for has a stale status (it was just
  // scaled down): wait for its controller to report, as Kubernetes' cleanupUnhealthyReplicas
  // refuses to go on, rather than scale down on numbers that would break maxUnavailable.
  if (old.some((rs) => (rs.status?.availableReplicas ?? 0) > replicasOf(rs))) return [];
  const minAvailable = replicasOf(d) - maxUnavailable(d);
  const newUnavailable = replicasOf(newRS) - (newRS.status?.availableReplicas ?? 0);
  const maxScaledDown = specReplicas(all) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return [];
  const steps: ScaleStep[] = [];
  // Sizes as the steps leave them.
  const size = new Map<ReplicaSet, number>(old.map((rs) => [rs, replicasOf(rs)]));

  // Unhealthy pods first: they cost no availability.
  let cleaned = 0;
  for (const rs of [...old].sort(byCreation)) {
    if (cleaned >= maxScaledDown) break;
    const replicas = size.get(rs)!;
    const available = rs.status?.availableReplicas ?? 0;
    if (replicas === 0 || replicas === available) continue;
    const down = Math.min(maxScaledDown - cleaned, replicas - available);
    size.set(rs, replicas - down);
    cleaned += down;
    steps.push({ rs, to: replicas - down, operation: 'down' });
  }

  // Then available ones, as far as availability allows.
  const availableNow = availableReplicas([...old, newRS]);
  if (availableNow > minAvailable) {
    const total = availableNow - minAvailable;
    let scaled = 0;
    for (const rs of [...old].sort(byCreation)) {
      if (scaled >= total) break;
      const replicas = size.get(rs)!;
      if (replicas === 0) continue;
      const down = Math.min(replicas, total - scaled);
      size.set(rs, replicas - down);
      scaled += down;
      steps.push({ rs, to: replicas - down, operation: 'down' });
    }
  }
  return steps;
}
