/** Names every part of the cluster agrees on. */

/** Where each node's heartbeat Lease lives (named after the node). */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** Where control-plane components keep their own objects (leader election leases). */
export const SYSTEM_NAMESPACE = 'kube-system';

/**
 * Kinds whose writes by an agent are its heartbeat (its Node and its Lease): the server serves
 * them first (priority level node-high) and the agent's call stream never queues them behind
 * its other calls.
 */
export const HEARTBEAT_KINDS: ReadonlySet<string> = new Set(['Node', 'Lease']);
