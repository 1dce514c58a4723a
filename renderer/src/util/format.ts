/** Small formatting helpers for the views. */
import type { Node, Pod } from '../../../client/api/types.js';

export function age(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export function condition(node: Node, type: string): string | undefined {
  return node.status?.conditions?.find((c) => c.type === type)?.status;
}

export function nodeState(node: Node): string {
  const ready = condition(node, 'Ready');
  const state = ready === 'True' ? 'Ready' : ready === 'False' ? 'NotReady' : 'Unknown';
  return node.spec?.unschedulable ? `${state},SchedulingDisabled` : state;
}

export function pressures(node: Node): string[] {
  return ['MemoryPressure', 'DiskPressure', 'PIDPressure'].filter((t) => condition(node, t) === 'True');
}

export function restarts(pod: Pod): number {
  return (pod.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
}

/** What `kubectl get pods` shows as STATUS: a waiting reason beats the phase. */
export function podStatus(pod: Pod): string {
  if (pod.metadata?.deletionTimestamp) return 'Terminating';
  for (const c of pod.status?.containerStatuses ?? []) {
    if (c.state?.waiting?.reason) return c.state.waiting.reason;
    if (c.state?.terminated?.reason && pod.status?.phase !== 'Running') return c.state.terminated.reason;
  }
  return pod.status?.reason ?? pod.status?.phase ?? 'Pending';
}

/** Sorts times so that ascending order is youngest first, like an "Age" column; absent last. */
export function timeSortValue(iso: string | undefined): number {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(t) ? Infinity : -t;
}

/** Ready containers of all, as `kubectl get pods` shows READY: "1/2". */
export function readyContainers(pod: Pod): string {
  const statuses = pod.status?.containerStatuses ?? [];
  const total = pod.spec?.containers?.length ?? statuses.length;
  return `${statuses.filter((c) => c.ready).length}/${total}`;
}
