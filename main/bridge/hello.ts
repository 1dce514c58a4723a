/** What the bridge's `hello` answers: the protocol, the server's version and who the GUI acts as. */
import type { Identity } from '../../client/api/local.js';
import { BRIDGE_PROTOCOL_VERSION, type BridgeHello } from '../../client/bridge/protocol.js';
import { VERSION } from '../commands/common.js';
import type { ControlPlane } from '../controlplane.js';
import { splitHostPort } from '../grpc/server.js';

export function bridgeHello(cp: ControlPlane, identity: Identity): BridgeHello {
  const { host } = splitHostPort(cp.options.listen ?? '0.0.0.0:6443');
  return {
    protocol: BRIDGE_PROTOCOL_VERSION,
    version: VERSION,
    user: identity.name,
    server: {
      listen: `${host.includes(':') ? `[${host}]` : host}:${cp.port}`,
      store: cp.options.store ?? 'sqlite',
      // Where the server keeps its files is for those who may change it.
      ...(identity.role === 'admin' ? { dataDir: cp.options.dataDir } : {}),
    },
  };
}
