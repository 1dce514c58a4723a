/**
 * Zone states and eviction rates (Kubernetes' ComputeZoneState and setLimiterInZone), pure.
 */
import type { Node } from '../../../client/api/types.js';
import type { NodeLifecycleConfig } from './config.js';

export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const REGION_LABEL = 'topology.kubernetes.io/region';

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
