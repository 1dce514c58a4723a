/**
 * Zone states and eviction rates (Kubernetes' ComputeZoneState and setLimiterInZone), pure.
 */
import type { Node } from '../../../client/api/types.js';
import type { NodeLifecycleConfig } from './config.js';

export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const REGION_LABEL = 'topology.kubernetes.io/region';
/** Nodes with this label, whatever its value, are left out of their zone's disruption counts. */
export const EXCLUDE_DISRUPTION_LABEL = 'node.kubernetes.io/exclude-disruption';

/**
 * Whether a node is left out of its zone's counts (Kubernetes' isNodeExcludedFromDisruptionChecks).
 * The label's presence decides, not its value: `kubectl label node x
 * node.kubernetes.io/exclude-disruption=` is how it is usually set, and reading that empty
 * value as "not excluded" would let a node that stays Ready keep an otherwise dead zone Normal,
 * with its evictions going.
 */
export function isExcludedFromDisruptionChecks(node: Node): boolean {
  const labels = node.metadata?.labels;
  return !!labels && Object.hasOwn(labels, EXCLUDE_DISRUPTION_LABEL);
}

/** A node's zone key: "region/zone" from the topology labels; nodes without them share "". */
export function zoneOf(node: Node): string {
  const labels = node.metadata?.labels ?? {};
  const region = labels[REGION_LABEL] ?? '';
  const zone = labels[ZONE_LABEL] ?? '';
  return region ? `${region}/${zone}` : zone;
}

/** A zone's state from the Ready status of its nodes ('True' counts as ready). */
export function computeZoneState(
  readyStatuses: string[],
  unhealthyThreshold: number,
): { state: ZoneState; notReady: number } {
  let ready = 0;
  let notReady = 0;
  for (const s of readyStatuses) {
    if (s === 'True') ready++;
    else notReady++;
  }
  if (notReady > 0 && ready === 0) return { state: 'FullDisruption', notReady };
  if (notReady > 2 && notReady / (notReady + ready) >= unhealthyThreshold)
    return { state: 'PartialDisruption', notReady };
  return { state: 'Normal', notReady };
}

/** Nodes a zone may have tainted per second in a state. */
export function evictionRate(state: ZoneState, zoneSize: number, config: NodeLifecycleConfig): number {
  switch (state) {
    case 'PartialDisruption':
      // A partly broken zone slows down; a small one stops, it is more likely our own fault.
      return zoneSize > config.largeClusterThreshold ? config.secondaryEvictionRate : 0;
    case 'Normal':
    case 'FullDisruption':
    case 'Initial':
      return config.evictionRate;
  }
}
