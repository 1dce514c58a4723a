/**
 * Join tokens for the GUI's "Add node" view: the same tokens as `kubelab token create`, and the
 * address a lab machine should use — this machine's first non-loopback IPv4 address (the
 * control plane listens on every address by default), or its hostname.
 */
import { hostname, networkInterfaces } from 'node:os';
import type { Identity } from '../../client/api/local.js';
import type { BridgeJoinToken } from '../../client/bridge/protocol.js';
import type { ControlPlane } from '../controlplane.js';
import { DEFAULT_JOIN_TTL_SECONDS, joinTokenString } from '../grpc/cluster.js';

export function lanAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return hostname();
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
      server: `https://${lanAddress()}:${cp.port}`,
      expiresInSeconds: ttlSeconds,
    };
  };
}
