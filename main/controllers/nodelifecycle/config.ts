/** The node lifecycle controller's settings, with Kubernetes' defaults (DESIGN.md §5). */
export interface NodeLifecycleConfig {
  /** How often node health is checked (--node-monitor-period). */
  monitorPeriodMs: number;
  /** How long a node may go without a heartbeat before it is Unknown (--node-monitor-grace-period). */
  monitorGracePeriodMs: number;
  /** The same for a node that has never been Ready (--node-startup-grace-period). */
  startupGracePeriodMs: number;
  /** Nodes tainted per second in a healthy zone (--node-eviction-rate). */
  evictionRate: number;
  /** In a partially disrupted zone (--secondary-node-eviction-rate). */
  secondaryEvictionRate: number;
  /** Zones this size or smaller stop evicting when partially disrupted (--large-cluster-size-threshold). */
  largeClusterThreshold: number;
  /** Share of not-ready nodes (and at least 3) that makes a zone partially disrupted (--unhealthy-zone-threshold). */
  unhealthyZoneThreshold: number;
  /** How often the tainting queues are worked (Kubernetes' nodeEvictionPeriod). */
  taintPassMs: number;
}

export const DEFAULT_NODE_LIFECYCLE: NodeLifecycleConfig = {
  monitorPeriodMs: 5_000,
  monitorGracePeriodMs: 50_000,
  startupGracePeriodMs: 60_000,
  evictionRate: 0.1,
  secondaryEvictionRate: 0.01,
  largeClusterThreshold: 50,
  unhealthyZoneThreshold: 0.55,
  taintPassMs: 100,
};
