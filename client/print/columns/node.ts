/**
 * Nodes: NAME STATUS ROLES AGE VERSION (wide: INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION
 * CONTAINER-RUNTIME), as kubectl's printNode. VERSION is the agent's, marked "(older)" when it is
 * older than the control plane (its skew: it works, but should be upgraded).
 */
import type { Node } from '../../api/types.js';
import { ageOf } from '../age.js';
import { agentSkew } from '../../api/agentversion.js';
import { appendedHeaders, orNone, type KindColumns } from './types.js';

const ROLE_PREFIX = 'node-role.kubernetes.io/';
const ROLE_LABEL = 'kubernetes.io/role';

/**
 * kubectl's printNode: "Ready" when the Ready condition is True, "NotReady" for any other
 * status (False, and Unknown — the node stopped reporting), "Unknown" only without a Ready
 * condition at all; ",SchedulingDisabled" when cordoned. `describe` shows the condition itself.
 */
export function nodeStatus(node: Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const states = [!ready ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady'];
  if (node.spec?.unschedulable) states.push('SchedulingDisabled');
  return states.join(',');
}

export function nodeRoles(node: Node): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata?.labels ?? {})) {
    if (k.startsWith(ROLE_PREFIX) && k.length > ROLE_PREFIX.length) roles.add(k.slice(ROLE_PREFIX.length));
    else if (k === ROLE_LABEL && v) roles.add(v);
  }
  return orNone([...roles].sort().join(','));
}

export function nodeAddress(node: Node, type: string): string | undefined {
  return node.status?.addresses?.find((a) => a.type === type)?.address;
}

export function nodeVersion(node: Node): string {
  const info = node.status?.nodeInfo;
  return info?.kubeletVersion || info?.agentVersion || '';
}

export const nodeColumns: KindColumns<Node> = {
  headers: appendedHeaders(
    ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION'],
    ['INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME'],
  ),
  cells(node, now, wide, context) {
    const version = nodeVersion(node);
    const older = context?.serverVersion && agentSkew(node, context.serverVersion) === 'older';
    const cells = [
      node.metadata?.name ?? '',
      nodeStatus(node),
      nodeRoles(node),
      ageOf(node.metadata?.creationTimestamp, now),
      older ? `${version} (older)` : version,
    ];
    if (!wide) return cells;
    const info = node.status?.nodeInfo;
    return [
      ...cells,
      orNone(nodeAddress(node, 'InternalIP')),
      orNone(nodeAddress(node, 'ExternalIP')),
      info?.osImage || '<unknown>',
      info?.kernelVersion || '<unknown>',
      info?.containerRuntimeVersion || '<unknown>',
    ];
  },
};
