/**
 * A GUI connection's session on this control plane, acting as `identity`: its client, its
 * hello, and what it may do beyond API calls — the same for the desktop window (IPC) and a
 * browser (WebSocket).
 */
import type { Identity } from '../../client/api/local.js';
import type { BridgeMessage } from '../../client/bridge/protocol.js';
import { inProcessClient } from '../../client/inprocess.js';
import type { ControlPlane } from '../controlplane.js';
import { bridgeHello } from './hello.js';
import { joinTokenMaker } from './jointoken.js';
import { BridgeSession } from './session.js';

export function sessionFor(
  cp: ControlPlane,
  identity: Identity,
  send: (message: BridgeMessage) => void,
): BridgeSession {
  return new BridgeSession(
    inProcessClient(cp.api, identity, 'kubelab-gui'),
    send,
    bridgeHello(cp, identity),
    {
      readManifests: async (text) => {
        cp.api.authorizeEnvelope(identity, 'create', {});
        return cp.api.manifests.readAll(text);
      },
      joinTokens: joinTokenMaker(cp, identity),
    },
  );
}
