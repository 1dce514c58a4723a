/**
 * NoSchedule taints that follow a node's conditions and spec.unschedulable (Kubernetes'
 * doNoScheduleTaintingPass), pure: the scheduler then needs only taints and tolerations.
 */
import {
  TAINT_DISK_PRESSURE,
  TAINT_MEMORY_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_NOT_READY,
  TAINT_PID_PRESSURE,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
} from '../../../client/api/taints.js';
import type { Node, Taint } from '../../../client/api/types.js';

/** condition type → condition status → taint key. */
const CONDITION_TAINTS: Record<string, Record<string, string>> = {
  Ready: { False: TAINT_NOT_READY, Unknown: TAINT_UNREACHABLE },
  MemoryPressure: { True: TAINT_MEMORY_PRESSURE },
  DiskPressure: { True: TAINT_DISK_PRESSURE },
  PIDPressure: { True: TAINT_PID_PRESSURE },
  NetworkUnavailable: { True: TAINT_NETWORK_UNAVAILABLE },
};

const MANAGED_KEYS = new Set([
  ...Object.values(CONDITION_TAINTS).flatMap((m) => Object.values(m)),
  TAINT_UNSCHEDULABLE,
]);

/** The NoSchedule taints this controller manages that the node should have now. */
export function desiredNoScheduleTaints(node: Node): Taint[] {
  const taints: Taint[] = [];
  for (const c of node.status?.conditions ?? []) {
    const key = CONDITION_TAINTS[c.type ?? '']?.[c.status ?? ''];
    if (key) taints.push({ key, effect: 'NoSchedule' });
  }
  if (node.spec?.unschedulable) taints.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
  return taints;
}

/** What to add and remove so the managed NoSchedule taints match the node's state. */
export function noScheduleTaintChange(node: Node): { add: Taint[]; remove: Taint[] } {
  const want = desiredNoScheduleTaints(node);
  const have = (node.spec?.taints ?? []).filter(
    (t) => t.effect === 'NoSchedule' && MANAGED_KEYS.has(t.key ?? ''),
  );
  return {
    add: want.filter((w) => !have.some((h) => h.key === w.key)),
    remove: have.filter((h) => !want.some((w) => w.key === h.key)),
  };
}
