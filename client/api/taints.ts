/**
 * Taints and tolerations (Kubernetes' v1helper semantics), shared by the node lifecycle
 * controller, the taint manager, the scheduler and the DaemonSet controller.
 */
import type { Taint, Toleration } from './types.js';

export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const TAINT_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
export const TAINT_DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
export const TAINT_PID_PRESSURE = 'node.kubernetes.io/pid-pressure';
export const TAINT_NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';
/** Put by hand on a node that is down for good: its terminating pods may be force-deleted. */
export const TAINT_OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';

/** Same key and effect: the identity of a taint on a node. */
export function sameTaint(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect;
}

/** Whether `toleration` tolerates `taint` (Toleration.ToleratesTaint). */
export function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  // An empty key with Exists matches every taint.
  switch (toleration.operator || 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

export function toleratesAll(tolerations: Toleration[] | undefined, taints: Taint[]): boolean {
  return taints.every((t) => (tolerations ?? []).some((tol) => tolerates(tol, t)));
}

/** The taints (of the given effects) no toleration covers. */
export function untoleratedTaints(
  taints: Taint[] | undefined,
  tolerations: Toleration[] | undefined,
  effects: string[],
): Taint[] {
  return (taints ?? []).filter(
    (t) => effects.includes(t.effect ?? '') && !(tolerations ?? []).some((tol) => tolerates(tol, t)),
  );
}

/** The node's taints with `taint` added or replaced (same key and effect). */
export function withTaint(taints: Taint[] | undefined, taint: Taint): Taint[] {
  return [...(taints ?? []).filter((t) => !sameTaint(t, taint)), taint];
}

export function withoutTaint(taints: Taint[] | undefined, taint: Taint): Taint[] {
  return (taints ?? []).filter((t) => !sameTaint(t, taint));
}

export function hasTaint(taints: Taint[] | undefined, taint: Taint): boolean {
  return (taints ?? []).some((t) => sameTaint(t, taint));
}

/**
 * The taints after adding `add` and removing `remove` (same key and effect), or undefined if
 * that changes nothing. NoExecute taints added are stamped with `timeAdded`.
 */
export function swapTaints(
  current: Taint[] | undefined,
  add: Taint[],
  remove: Taint[],
  timeAdded: string,
): Taint[] | undefined {
  const have = current ?? [];
  const toAdd = add.filter((t) => !hasTaint(have, t));
  const kept = have.filter((t) => !remove.some((r) => sameTaint(r, t)));
  if (!toAdd.length && kept.length === have.length) return undefined;
  return [...kept, ...toAdd.map((t) => (t.effect === 'NoExecute' ? { ...t, timeAdded } : t))];
}
