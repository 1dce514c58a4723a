/**
 * What a pod asks for and what a node offers, in base units (Kubernetes'
 * resourcehelper.PodRequests and computePodResourceRequest): shared by the scheduler and the
 * agent's pod admission, which must agree on what fits.
 */
import { parseQuantity } from './quantity.js';
import type { Container, Node, Pod } from './types.js';

/** Amounts in base units: milli-CPUs, bytes, bytes, pods. */
export interface Resources {
  milliCPU: number;
  memory: number;
  ephemeralStorage: number;
  pods: number;
}

export const RESOURCE_CPU = 'cpu';
export const RESOURCE_MEMORY = 'memory';
export const RESOURCE_EPHEMERAL_STORAGE = 'ephemeral-storage';
export const RESOURCE_PODS = 'pods';

/**
 * What a container that requests no cpu / memory counts as when scoring, so that pods without
 * requests neither pile onto one node nor look free to the pods scheduled after them.
 */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

type ResourceList = Record<string, string> | undefined;

export function zeroResources(): Resources {
  return { milliCPU: 0, memory: 0, ephemeralStorage: 0, pods: 0 };
}

/**
 * A quantity in base units (milli-units for cpu), rounded up as Kubernetes' Value() and
 * MilliValue() do. The API server rejects malformed quantities, so one that still fails to
 * parse counts as 0 rather than stopping the scheduler.
 */
function amount(list: ResourceList, name: string, milli: boolean): number {
  const text = list?.[name];
  if (text === undefined) return 0;
  try {
    const q = parseQuantity(text);
    return milli ? q.milliValue() : q.value();
  } catch {
    return 0;
  }
}

/** cpu, memory, ephemeral-storage and pods of a resource list (requests, capacity, allocatable). */
export function resourcesOf(list: ResourceList): Resources {
  return {
    milliCPU: amount(list, RESOURCE_CPU, true),
    memory: amount(list, RESOURCE_MEMORY, false),
    ephemeralStorage: amount(list, RESOURCE_EPHEMERAL_STORAGE, false),
    pods: amount(list, RESOURCE_PODS, false),
  };
}

function containerRequests(container: Container, nonZero: boolean): Resources {
  const requests = container.resources?.requests;
  const r = resourcesOf(requests);
  r.pods = 0;
  // Only an absent request gets the default: an explicit "0" stays 0, as in Kubernetes.
  if (nonZero && requests?.[RESOURCE_CPU] === undefined) r.milliCPU = DEFAULT_MILLI_CPU_REQUEST;
  if (nonZero && requests?.[RESOURCE_MEMORY] === undefined) r.memory = DEFAULT_MEMORY_REQUEST;
  return r;
}

export function addInto(target: Resources, r: Resources, sign: 1 | -1 = 1): void {
  target.milliCPU += sign * r.milliCPU;
  target.memory += sign * r.memory;
  target.ephemeralStorage += sign * r.ephemeralStorage;
  target.pods += sign * r.pods;
}

function maxInto(target: Resources, r: Resources): void {
  target.milliCPU = Math.max(target.milliCPU, r.milliCPU);
  target.memory = Math.max(target.memory, r.memory);
  target.ephemeralStorage = Math.max(target.ephemeralStorage, r.ephemeralStorage);
}

/**
 * The containers run together, so their requests add up; init containers run one at a time
 * before them, so each only has to fit on its own: the pod needs the larger of the two, per
 * resource. (Our API has neither sidecar init containers nor pod overhead; when it gains
 * them, sidecars add to the sum and to every later init container, and overhead is added.)
 */
function computePodRequests(pod: Pod, nonZero: boolean): Resources {
  const total = zeroResources();
  for (const c of pod.spec?.containers ?? []) addInto(total, containerRequests(c, nonZero));
  for (const c of pod.spec?.initContainers ?? []) maxInto(total, containerRequests(c, nonZero));
  total.pods = 1;
  return total;
}

/** What the pod requests (Kubernetes' computePodResourceRequest); pods = 1. */
export function podRequests(pod: Pod): Resources {
  return computePodRequests(pod, false);
}

/** The same with 100m cpu / 200Mi memory for each container that leaves them unset (scoring only). */
export function podNonZeroRequests(pod: Pod): Resources {
  return computePodRequests(pod, true);
}

/**
 * What the node offers pods. Kubernetes' API defaults a missing status.allocatable to the
 * capacity (SetDefaults_NodeStatus); ours does not, so the fallback lives here. A resource
 * missing from the list is 0, pods included: such a node takes no pods, as in Kubernetes.
 */
export function nodeAllocatable(node: Node): Resources {
  const allocatable = node.status?.allocatable;
  const hasAllocatable = allocatable !== undefined && Object.keys(allocatable).length > 0;
  return resourcesOf(hasAllocatable ? allocatable : node.status?.capacity);
}
