/** Cordon and uncordon: a node that is unschedulable takes no new pods (kubectl cordon). */
import type { BridgeClient } from '../bridge/client.js';

export async function setUnschedulable(
  bridge: BridgeClient,
  nodeName: string,
  unschedulable: boolean,
): Promise<void> {
  await bridge.request({ op: 'patch', kind: 'Node', name: nodeName, patch: { spec: { unschedulable } } });
}
