/** Pods: NAME READY STATUS RESTARTS AGE (wide: IP NODE NOMINATED NODE), as kubectl's printPod. */
import type { ContainerStatus, Pod } from '../../api/types.js';
import { ageOf } from '../age.js';
import { appendedHeaders, orNone, type KindColumns } from './types.js';

/** The reason the Ready condition hides, for the STATUS column (kubectl's printPod logic). */
export function podStatus(pod: Pod): string {
  const status = pod.status ?? {};
  let reason = status.reason || status.phase || 'Pending';
  const initStatuses = status.initContainerStatuses ?? [];
  const initCount = pod.spec?.initContainers?.length ?? 0;
  let initializing = false;
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i];
    const term = c.state?.terminated;
    if (term && term.exitCode === 0) continue;
    if (term) {
      if (!term.reason)
        reason = term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode ?? 0}`;
      else reason = `Init:${term.reason}`;
      initializing = true;
    } else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing') {
      reason = `Init:${c.state.waiting.reason}`;
      initializing = true;
    } else {
      reason = `Init:${i}/${initCount}`;
      initializing = true;
    }
    break;
  }
  if (!initializing) {
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      const state = c.state ?? {};
      if (state.waiting?.reason) reason = state.waiting.reason;
      else if (state.terminated?.reason) reason = state.terminated.reason;
      else if (state.terminated)
        reason = state.terminated.signal
          ? `Signal:${state.terminated.signal}`
          : `ExitCode:${state.terminated.exitCode ?? 0}`;
      else if (c.ready && state.running) hasRunning = true;
    }
    if (reason === 'Completed' && hasRunning) {
      const ready = status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      reason = ready ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata?.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

/** "2/2": ready containers over containers. */
export function podReady(pod: Pod): string {
  const total = pod.spec?.containers?.length ?? 0;
  const ready = (pod.status?.containerStatuses ?? []).filter((c) => c.ready && c.state?.running).length;
  return `${ready}/${total}`;
}

function lastRestart(statuses: ContainerStatus[]): number | undefined {
  let last: number | undefined;
  for (const c of statuses) {
    const at = Date.parse(c.lastState?.terminated?.finishedAt ?? '');
    if (!Number.isNaN(at) && (last === undefined || at > last)) last = at;
  }
  return last;
}

/** "3" or "3 (2m ago)", as kubectl prints restarts since 1.22. */
export function podRestarts(pod: Pod, now: number): string {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const restarts = statuses.reduce((n, c) => n + (c.restartCount ?? 0), 0);
  const last = lastRestart(statuses);
  if (!restarts || last === undefined) return String(restarts);
  return `${restarts} (${ageOf(new Date(last).toISOString(), now)} ago)`;
}

export const podColumns: KindColumns<Pod> = {
  headers: appendedHeaders(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'], ['IP', 'NODE', 'NOMINATED NODE']),
  cells(pod, now, wide) {
    const cells = [
      pod.metadata?.name ?? '',
      podReady(pod),
      podStatus(pod),
      podRestarts(pod, now),
      ageOf(pod.metadata?.creationTimestamp, now),
    ];
    if (!wide) return cells;
    return [
      ...cells,
      orNone(pod.status?.podIP),
      orNone(pod.spec?.nodeName),
      orNone(pod.status?.nominatedNodeName),
    ];
  },
};
