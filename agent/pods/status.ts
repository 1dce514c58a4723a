/**
 * A pod's status from the containers the agent runs (the kubelet's generateAPIPodStatus and
 * getPhase), pure: phase, conditions, container statuses, start time and addresses. The
 * conditions of others (DisruptionTarget, readiness gates) are carried over, never erased.
 */
import { constants } from 'node:os';
import type {
  Container,
  ContainerState,
  ContainerStatus,
  Pod,
  PodCondition,
  PodStatus,
} from '../../client/api/types.js';
import { rfc3339 } from '../../client/util/clock.js';
import type { ContainerRecord } from './containers.js';

export interface PodRuntimeState {
  /** Container records by name (init and regular). */
  containers: Map<string, ContainerRecord>;
  /** All init containers have succeeded (or there are none). */
  initialized: boolean;
  /** When the agent first accepted the pod. */
  startTime: number;
  hostIP: string;
  /** Set when the pod can never run (admission refused it, a container cannot be run). */
  failed?: { reason: string; message: string };
  /** "process" or "docker": the containerID scheme. */
  runtimeName: string;
}

const signalNumber = (name: string | undefined): number | undefined =>
  name ? (constants.signals as Record<string, number>)[name] : undefined;

function stateOf(r: ContainerRecord): { state: ContainerState; lastState: ContainerState } {
  const terminated = (l: NonNullable<ContainerRecord['lastExit']>): ContainerState => ({
    terminated: {
      exitCode: l.exit.exitCode,
      ...(signalNumber(l.exit.signal) ? { signal: signalNumber(l.exit.signal) } : {}),
      reason: l.exit.reason,
      ...(l.exit.message ? { message: l.exit.message } : {}),
      startedAt: rfc3339(l.startedAt),
      finishedAt: rfc3339(l.exit.finishedAt),
      containerID: l.containerID,
    },
  });
  if (r.running) {
    return {
      state: { running: { startedAt: rfc3339(r.running.startedAt) } },
      lastState: r.lastExit ? terminated(r.lastExit) : {},
    };
  }
  if (r.waiting) {
    return {
      state: {
        waiting: { reason: r.waiting.reason, ...(r.waiting.message ? { message: r.waiting.message } : {}) },
      },
      lastState: r.lastExit ? terminated(r.lastExit) : {},
    };
  }
  if (r.lastExit) return { state: terminated(r.lastExit), lastState: {} };
  return { state: { waiting: { reason: 'ContainerCreating' } }, lastState: {} };
}

export function containerStatus(
  spec: Container,
  r: ContainerRecord | undefined,
  scheme: string,
): ContainerStatus {
  if (!r) {
    return {
      name: spec.name,
      state: { waiting: { reason: 'PodInitializing' } },
      ready: false,
      restartCount: 0,
      image: spec.image ?? '',
      imageID: '',
      started: false,
    };
  }
  const { state, lastState } = stateOf(r);
  return {
    name: spec.name,
    state,
    lastState,
    ready: !!r.running && r.ready,
    restartCount: r.restartCount,
    image: spec.image ?? '',
    imageID: '',
    ...(r.running
      ? { containerID: `${scheme}://${r.running.id}` }
      : r.lastExit
        ? { containerID: r.lastExit.containerID }
        : {}),
    started: !!r.running && r.started,
  };
}

/** Kubernetes' getPhase, from the regular containers' statuses. */
export function podPhase(pod: Pod, statuses: ContainerStatus[], initialized: boolean): string {
  if (!initialized) return 'Pending';
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of statuses) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      // A container waiting to restart has run before: it counts as stopped, not pending.
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    }
  }
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function condition(
  type: string,
  status: boolean,
  previous: PodCondition[] | undefined,
  now: number,
  reason?: string,
  message?: string,
): PodCondition {
  const value = status ? 'True' : 'False';
  const before = previous?.find((c) => c.type === type);
  return {
    type,
    status: value,
    lastTransitionTime:
      before?.status === value && before.lastTransitionTime ? before.lastTransitionTime : rfc3339(now),
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  };
}

/**
 * The conditions the agent sets (Kubernetes' PodConditionsByKubelet). Every other condition
 * belongs to someone else — DisruptionTarget from the taint manager or podgc, a readiness
 * gate's condition from its controller — and the agent carries it over untouched.
 */
export const AGENT_CONDITIONS: ReadonlySet<string> = new Set([
  'PodScheduled',
  'Initialized',
  'ContainersReady',
  'Ready',
]);

/**
 * The conditions to write over `api` (what the API holds now): the agent's own from `ours`,
 * everyone else's from `api`. Conditions keep the places they have in `api`, so a status that
 * did not change compares equal and is not written again; ours that `api` lacks come last.
 * Conditions in `ours` that are not the agent's are ignored: their owners' latest word is
 * the one in `api` (the kubelet's mergePodStatus).
 */
export function mergeConditions(api: PodCondition[] | undefined, ours: PodCondition[]): PodCondition[] {
  const own = new Map(ours.filter((c) => AGENT_CONDITIONS.has(c.type ?? '')).map((c) => [c.type, c]));
  const merged: PodCondition[] = [];
  for (const c of api ?? []) {
    if (!AGENT_CONDITIONS.has(c.type ?? '')) merged.push(c);
    else if (own.has(c.type)) {
      merged.push(own.get(c.type)!);
      own.delete(c.type);
    }
  }
  return [...merged, ...own.values()];
}

const isTerminalPhase = (phase: string | undefined) => phase === 'Succeeded' || phase === 'Failed';

/**
 * `ours` with the conditions of others taken from `api` (see mergeConditions). A phase the
 * API holds as terminal stays, with its reason and message, as the kubelet forces it back:
 * the API refuses to leave it, and a write it refuses must not hold up a pod's final delete.
 */
export function mergeStatus(api: PodStatus | undefined, ours: PodStatus): PodStatus {
  const merged: PodStatus = { ...ours, conditions: mergeConditions(api?.conditions, ours.conditions ?? []) };
  if (isTerminalPhase(api?.phase) && ours.phase !== api?.phase) {
    merged.phase = api?.phase;
    delete merged.reason;
    delete merged.message;
    if (api?.reason) merged.reason = api.reason;
    if (api?.message) merged.message = api.message;
  }
  return merged;
}

/**
 * Why the readiness gates keep the pod from being Ready, in Kubernetes' words
 * (GeneratePodReadyCondition), or undefined when every gate's condition is True.
 */
export function unreadyGatesMessage(pod: Pod, conditions: PodCondition[]): string | undefined {
  const messages: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const type = gate.conditionType ?? '';
    const c = conditions.find((x) => x.type === type);
    if (!c) messages.push(`corresponding condition of pod readiness gate "${type}" does not exist.`);
    else if (c.status !== 'True')
      messages.push(`the status of pod readiness gate "${type}" is not "True", but ${c.status ?? ''}`);
  }
  return messages.length ? messages.join(', ') : undefined;
}

/** The whole status to write for the pod. */
export function podStatus(pod: Pod, state: PodRuntimeState, now: number): PodStatus {
  const previous = pod.status?.conditions;
  // Everyone else's conditions, as the agent last saw them: carried over, and read by the
  // readiness gates.
  const others = (previous ?? []).filter((c) => !AGENT_CONDITIONS.has(c.type ?? ''));
  const scheduled = previous?.find((c) => c.type === 'PodScheduled') ?? {
    type: 'PodScheduled',
    status: 'True',
    lastTransitionTime: rfc3339(state.startTime),
  };
  const base: PodStatus = {
    hostIP: state.hostIP,
    hostIPs: [{ ip: state.hostIP }],
    // Processes share the host's network: the pod's address is the node's.
    podIP: state.hostIP,
    podIPs: [{ ip: state.hostIP }],
    startTime: rfc3339(state.startTime),
    ...(pod.status?.qosClass ? { qosClass: pod.status.qosClass } : {}),
  };
  const initStatuses = (pod.spec?.initContainers ?? []).map((c) =>
    containerStatus(c, state.containers.get(c.name ?? ''), state.runtimeName),
  );
  const statuses = (pod.spec?.containers ?? []).map((c) =>
    containerStatus(c, state.containers.get(c.name ?? ''), state.runtimeName),
  );
  if (state.failed) {
    return {
      ...base,
      phase: 'Failed',
      reason: state.failed.reason,
      message: state.failed.message,
      conditions: mergeConditions(previous, [
        scheduled,
        condition('Initialized', state.initialized, previous, now),
        condition('ContainersReady', false, previous, now, 'PodFailed'),
        condition('Ready', false, previous, now, 'PodFailed'),
      ]),
      ...(initStatuses.length ? { initContainerStatuses: initStatuses } : {}),
      containerStatuses: statuses,
    };
  }
  const phase = podPhase(pod, statuses, state.initialized);
  const unready = statuses.filter((s) => !s.ready).map((s) => s.name);
  const done = phase === 'Succeeded' || phase === 'Failed';
  const ready = !done && unready.length === 0 && statuses.length > 0;
  const notReadyReason = done ? 'PodCompleted' : 'ContainersNotReady';
  const notReadyMessage = done ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const initPending = (pod.spec?.initContainers ?? [])
    .filter(
      (c) =>
        !state.containers.get(c.name ?? '')?.lastExit ||
        state.containers.get(c.name ?? '')?.lastExit?.exit.exitCode !== 0,
    )
    .map((c) => c.name);
  const initialized = state.initialized
    ? condition('Initialized', true, previous, now)
    : condition(
        'Initialized',
        false,
        previous,
        now,
        'ContainersNotInitialized',
        `containers with incomplete status: [${initPending.join(' ')}]`,
      );
  // Ready needs the containers ready and, as in Kubernetes, every readiness gate's condition
  // True; while the containers are not ready, Ready says what ContainersReady says.
  const gatesUnready = ready ? unreadyGatesMessage(pod, [...others, initialized]) : undefined;
  return {
    ...base,
    phase,
    conditions: mergeConditions(previous, [
      scheduled,
      initialized,
      ready
        ? condition('ContainersReady', true, previous, now)
        : condition('ContainersReady', false, previous, now, notReadyReason, notReadyMessage),
      !ready
        ? condition('Ready', false, previous, now, notReadyReason, notReadyMessage)
        : gatesUnready
          ? condition('Ready', false, previous, now, 'ReadinessGatesNotReady', gatesUnready)
          : condition('Ready', true, previous, now),
    ]),
    ...(initStatuses.length ? { initContainerStatuses: initStatuses } : {}),
    containerStatuses: statuses,
  };
}
