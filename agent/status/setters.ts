/**
 * The node status setters (the kubelet's setNodeStatus funcs): each fills one part of a Node
 * from what the agent knows. Pure: the caller owns the Node copy and the time.
 */
import { parseQuantity, type Quantity } from '../../client/api/quantity.js';
import type { Node, NodeCondition, NodeStatus } from '../../client/api/types.js';
import { rfc3339 } from '../../client/util/clock.js';
import { deepEqual } from '../../client/util/objects.js';
import { AGENT_VERSION, type AgentConfig } from '../config.js';
import type { MachineInfo } from '../machine/types.js';
import type { PressureType } from './pressure.js';

export interface StatusInputs {
  info: MachineInfo;
  pressure: Record<PressureType, boolean>;
  /** Problems that make the node not ready (empty: ready). */
  notReadyReasons: string[];
  config: AgentConfig;
  now: number;
}

const MESSAGES: Record<PressureType, { reasons: [string, string]; messages: [string, string] }> = {
  MemoryPressure: {
    reasons: ['KubeletHasInsufficientMemory', 'KubeletHasSufficientMemory'],
    messages: ['kubelet has insufficient memory available', 'kubelet has sufficient memory available'],
  },
  DiskPressure: {
    reasons: ['KubeletHasDiskPressure', 'KubeletHasNoDiskPressure'],
    messages: ['kubelet has disk pressure', 'kubelet has no disk pressure'],
  },
  PIDPressure: {
    reasons: ['KubeletHasInsufficientPID', 'KubeletHasSufficientPID'],
    messages: ['kubelet has insufficient PID available', 'kubelet has sufficient PID available'],
  },
};

function kib(bytes: number): string {
  return `${Math.max(0, Math.floor(bytes / 1024))}Ki`;
}

export function capacityOf(info: MachineInfo, config: AgentConfig): Record<string, string> {
  return {
    cpu: String(info.cpuCores),
    memory: kib(info.memoryTotalBytes),
    'ephemeral-storage': kib(info.nodefsCapacityBytes),
    pods: String(config.maxPods),
  };
}

/** Capacity minus what is reserved, and minus the memory eviction threshold (as Kubernetes does). */
export function allocatableOf(capacity: Record<string, string>, config: AgentConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(capacity)) {
    let q: Quantity = parseQuantity(value);
    if (config.reserved[name]) q = q.sub(parseQuantity(config.reserved[name]));
    const hardMemory = config.evictionHard['memory.available'];
    if (name === 'memory' && hardMemory?.value !== undefined)
      q = q.sub(parseQuantity(String(hardMemory.value)));
    if (q.sign() < 0) q = parseQuantity('0');
    out[name] = name === 'cpu' ? `${q.milliValue()}m` : name === 'pods' ? String(q.value()) : kib(q.value());
  }
  return out;
}

/** Sets a condition; the transition time moves only when the status does. */
export function setCondition(
  conditions: NodeCondition[],
  next: { type: string; status: string; reason: string; message: string },
  now: number,
): NodeCondition[] {
  const at = rfc3339(now);
  const existing = conditions.find((c) => c.type === next.type);
  const updated: NodeCondition = {
    type: next.type,
    status: next.status,
    lastHeartbeatTime: at,
    lastTransitionTime:
      existing && existing.status === next.status && existing.lastTransitionTime
        ? existing.lastTransitionTime
        : at,
    reason: next.reason,
    message: next.message,
  };
  return existing ? conditions.map((c) => (c === existing ? updated : c)) : [...conditions, updated];
}

/** Fills `node.status` (and the agent's labels) for one round of status reporting. */
export function setNodeStatus(node: Node, inputs: StatusInputs): void {
  const { info, config, now } = inputs;
  const status: NodeStatus = (node.status ??= {});
  const ip = config.nodeIP ?? info.internalIPs[0];
  status.addresses = [
    ...(ip ? [{ type: 'InternalIP', address: ip }] : []),
    { type: 'Hostname', address: info.hostname },
  ];
  status.capacity = capacityOf(info, config);
  status.allocatable = allocatableOf(status.capacity, config);
  status.nodeInfo = {
    machineID: info.machineID,
    systemUUID: info.systemUUID,
    bootID: info.bootID,
    kernelVersion: info.kernelVersion,
    osImage: info.osImage,
    containerRuntimeVersion: `process://${process.version}`,
    kubeletVersion: `v${AGENT_VERSION}-kubelab`,
    kubeProxyVersion: '',
    operatingSystem: info.operatingSystem,
    architecture: info.architecture,
    agentVersion: AGENT_VERSION,
  };
  let conditions = status.conditions ?? [];
  for (const type of ['MemoryPressure', 'DiskPressure', 'PIDPressure'] as const) {
    const on = inputs.pressure[type];
    const m = MESSAGES[type];
    conditions = setCondition(
      conditions,
      { type, status: on ? 'True' : 'False', reason: m.reasons[on ? 0 : 1], message: m.messages[on ? 0 : 1] },
      now,
    );
  }
  const ready = inputs.notReadyReasons.length === 0;
  conditions = setCondition(
    conditions,
    {
      type: 'Ready',
      status: ready ? 'True' : 'False',
      reason: ready ? 'KubeletReady' : 'KubeletNotReady',
      message: ready ? 'kubelet is posting ready status' : inputs.notReadyReasons.join('; '),
    },
    now,
  );
  // Kubernetes' order: the pressure conditions, then Ready.
  const order = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'];
  status.conditions = conditions.sort((a, b) => rank(order, a.type) - rank(order, b.type));
}

function rank(order: string[], type: string | undefined): number {
  const i = order.indexOf(type ?? '');
  return i < 0 ? order.length : i;
}

/** Whether status changed beyond heartbeat times (the kubelet's nodeStatusHasChanged). */
export function nodeStatusHasChanged(before: NodeStatus | undefined, after: NodeStatus | undefined): boolean {
  const strip = (s: NodeStatus | undefined) => ({
    ...s,
    conditions: (s?.conditions ?? []).map(({ lastHeartbeatTime: _h, ...rest }) => rest),
  });
  return !deepEqual(strip(before), strip(after));
}
