/**
 * When a node was last heard from, as Kubernetes users read it: its Lease's renewTime (the
 * agent renews the lease every 10 s). The Ready condition's lastHeartbeatTime is only written
 * on a change or every 5 minutes, so a healthy node would look 4 minutes silent; it stands in
 * only for a node that has no lease.
 */
import type { Lease, Node } from '../../../client/api/types.js';
import { NODE_LEASE_NAMESPACE } from '../../../client/api/wellknown.js';

/** The key of a node's lease in the leases store (namespace/name: the lease is named after the node). */
export function nodeLeaseKey(nodeName: string): string {
  return `${NODE_LEASE_NAMESPACE}/${nodeName}`;
}

/** The node's last heartbeat (RFC 3339), from its lease when it has one. */
export function heartbeat(node: Node, lease: Lease | undefined): string | undefined {
  return (
    lease?.spec?.renewTime || node.status?.conditions?.find((c) => c.type === 'Ready')?.lastHeartbeatTime
  );
}
