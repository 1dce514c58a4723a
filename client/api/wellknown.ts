/** Names every part of the cluster agrees on. */

/** Where each node's heartbeat Lease lives (named after the node). */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** Where control-plane components keep their own objects (leader election leases). */
export const SYSTEM_NAMESPACE = 'kube-system';
