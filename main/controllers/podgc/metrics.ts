/** The pod garbage collector's metrics, under Kubernetes' names (pkg/controller/podgc/metrics). */
import type { Registry } from 'prom-client';
import { metric } from '../metrics.js';

export function podGCMetrics(registry: Registry | undefined) {
  return {
    deletions: metric(registry, 'counter', {
      name: 'pod_gc_collector_force_delete_pods_total',
      help: 'Pods force-deleted by the pod garbage collector, by namespace and reason (terminated, orphaned, unscheduled, out-of-service)',
      labelNames: ['namespace', 'reason'],
    }),
    errors: metric(registry, 'counter', {
      name: 'pod_gc_collector_force_delete_pod_errors_total',
      help: 'Forced pod deletions by the pod garbage collector that failed, by namespace and reason',
      labelNames: ['namespace', 'reason'],
    }),
  };
}

export type PodGCMetrics = ReturnType<typeof podGCMetrics>;
