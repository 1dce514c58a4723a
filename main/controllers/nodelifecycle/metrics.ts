/** The node lifecycle controller's metrics, under Kubernetes' names. */
import type { Registry } from 'prom-client';
import { metric } from '../metrics.js';

export function nodeLifecycleMetrics(registry: Registry | undefined) {
  return {
    zoneHealth: metric(registry, 'gauge', {
      name: 'node_collector_zone_health',
      help: 'Percentage of healthy nodes per zone',
      labelNames: ['zone'],
    }),
    zoneSize: metric(registry, 'gauge', {
      name: 'node_collector_zone_size',
      help: 'Number of nodes per zone',
      labelNames: ['zone'],
    }),
    unhealthyNodes: metric(registry, 'gauge', {
      name: 'node_collector_unhealthy_nodes_in_zone',
      help: 'Number of nodes not Ready per zone',
      labelNames: ['zone'],
    }),
    zoneState: metric(registry, 'gauge', {
      name: 'node_collector_zone_state',
      help: '1 for the state each zone is in (Initial, Normal, PartialDisruption, FullDisruption)',
      labelNames: ['zone', 'state'],
    }),
    evictions: metric(registry, 'counter', {
      name: 'node_collector_evictions_total',
      help: 'Nodes tainted NoExecute (not-ready or unreachable) by the node controller, per zone',
      labelNames: ['zone'],
    }),
    monitorDuration: metric(registry, 'histogram', {
      name: 'node_collector_update_all_nodes_health_duration_seconds',
      help: 'How long one check of every node took',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    }),
  };
}

export type NodeLifecycleMetrics = ReturnType<typeof nodeLifecycleMetrics>;
