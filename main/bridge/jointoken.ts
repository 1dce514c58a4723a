/**
 * Join tokens for the GUI's "Add node" view: the same tokens as `kubelab token create`, and the
 * address a lab machine should use — where the control plane listens, or this machine's LAN
 * address when it listens on every address. A server on a loopback address only cannot be
 * reached from another machine at all: the address says so, and the view warns.
 */
import type { Identity } from '../../client/api/local.js';
import type { BridgeAgentAddress, BridgeJoinToken } from '../../client/bridge/protocol.js';
import { agentAddress } from '../agentaddress.js';
import type { ControlPlane } from '../controlplane.js';
import { DEFAULT_JOIN_TTL_SECONDS, joinTokenString } from '../grpc/cluster.js';
import { splitHostPort } from '../grpc/server.js';

/** Where lab machines' agents should dial this control plane, and whether they can. */
export function agentAddressOf(cp: ControlPlane): BridgeAgentAddress {
  const { host } = splitHostPort(cp.options.listen ?? '0.0.0.0:6443');
  return agentAddress(host, cp.port, Boolean(cp.pki));
}

/** A join-token maker for admins; undefined for anyone else or a server without TLS. */
export function joinTokenMaker(
  cp: ControlPlane,
  identity: Identity,
): ((ttlSeconds?: number) => BridgeJoinToken) | undefined {
  const pki = cp.pki;
  if (identity.role !== 'admin' || !pki) return undefined;
  return (ttlSeconds = DEFAULT_JOIN_TTL_SECONDS) => {
    const created = cp.tokens.create({
      name: 'system:bootstrap:{id}',
      role: 'join',
      ttlMs: ttlSeconds * 1000,
    });
    return {
      token: joinTokenString(pki.caHash, created.token),
      server: agentAddressOf(cp).url,
      expiresInSeconds: ttlSeconds,
    };
  };
}
