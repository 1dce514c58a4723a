/**
 * What the control plane says of itself (`info`: its version, the user's role), asked once and
 * shared by the views that need it (version skew, what the role may do).
 */
import { ref, type Ref } from 'vue';
import type { BridgeInfo } from '../../../client/bridge/protocol.js';
import type { BridgeClient } from '../bridge/client.js';

let shared: Ref<BridgeInfo | undefined> | undefined;

export function useServerInfo(bridge: BridgeClient): Ref<BridgeInfo | undefined> {
  if (shared) return shared;
  const info = ref<BridgeInfo>();
  shared = info;
  bridge.request<BridgeInfo>({ op: 'info' }).then(
    (answer) => (info.value = answer),
    () => (shared = undefined), // asked again by the next view
  );
  return info;
}
