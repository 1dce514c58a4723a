/**
 * The bridge ops that are not API calls on objects: how this control plane runs (the GUI's
 * Settings view), a node's recent NodeMetrics samples (so a node's charts start filled), and
 * token management for admins — the same tokens as `kubelab token create|list|delete`.
 */
import { ApiError, echo } from '../../client/api/errors.js';
import type { Identity } from '../../client/api/local.js';
import type {
  BridgeCreatedToken,
  BridgeInfo,
  BridgeKubeconfig,
  BridgeRequest,
  BridgeToken,
} from '../../client/bridge/protocol.js';
import type { ControlPlane } from '../controlplane.js';
import { stringify } from 'yaml';
import { issueToken } from '../grpc/cluster.js';
import { kubeconfigFor } from '../kubeconfig.js';
import type { TokenRecord } from '../grpc/tokens.js';
import { bridgeHello } from './hello.js';
import { agentAddressOf } from './jointoken.js';

export const GUI_OPS = [
  'info',
  'nodeMetricsHistory',
  'listTokens',
  'createToken',
  'deleteToken',
  'kubeconfig',
] as const;
export type GuiOp = (typeof GUI_OPS)[number];
export type GuiRequest = Extract<BridgeRequest, { op: GuiOp }>;

const GUI_OP_NAMES = new Set<string>(GUI_OPS);
const TOKEN_ROLES = ['join', 'admin', 'viewer'];
/** Ten years: beyond that, "never" is the honest choice. */
export const MAX_TTL_SECONDS = 10 * 365 * 24 * 3600;

export function isGuiOp(raw: unknown): boolean {
  return GUI_OP_NAMES.has(String((raw as { op?: unknown } | null)?.op));
}

/** What is wrong with a GUI op's message, or undefined when it has the shape its op needs. */
export function malformedGuiOp(m: Record<string, unknown>): string | undefined {
  if (typeof m.id !== 'number' || !Number.isInteger(m.id) || m.id <= 0)
    return 'id: must be a positive integer';
  const optionalString = (field: string) =>
    m[field] === undefined || typeof m[field] === 'string' ? undefined : `${field}: must be a string`;
  switch (m.op as GuiOp) {
    case 'nodeMetricsHistory':
      return typeof m.name === 'string' && m.name ? undefined : 'name: the node whose samples to read';
    case 'createToken':
      if (typeof m.role !== 'string' || !TOKEN_ROLES.includes(m.role))
        return `role: must be one of ${TOKEN_ROLES.join(', ')}`;
      if (
        m.ttlSeconds !== undefined &&
        !(
          Number.isInteger(m.ttlSeconds) &&
          (m.ttlSeconds as number) >= 0 &&
          (m.ttlSeconds as number) <= MAX_TTL_SECONDS
        )
      )
        return `ttlSeconds: a whole number of seconds from 0 (never expires) to ${MAX_TTL_SECONDS}`;
      return optionalString('name') ?? optionalString('description');
    case 'deleteToken':
      return typeof m.tokenId === 'string' && m.tokenId
        ? undefined
        : 'tokenId: the id of the token to delete';
    case 'kubeconfig':
      return m.role === 'admin' || m.role === 'viewer' ? undefined : 'role: must be admin or viewer';
    default:
      return undefined;
  }
}

function tokenOut(r: TokenRecord): BridgeToken {
  return {
    id: r.id,
    role: r.role,
    name: r.name,
    createdAt: r.createdAt,
    ...(r.nodeName ? { nodeName: r.nodeName } : {}),
    ...(r.expiresAt ? { expiresAt: r.expiresAt } : {}),
    ...(r.description ? { description: r.description } : {}),
  };
}

export interface GuiOpsOptions {
  /** Browser mode's address, when this connection came through it. */
  uiAddress?: string;
}

/** Carries out the GUI ops for one connection's identity. */
export function guiOps(
  cp: ControlPlane,
  identity: Identity,
  options: GuiOpsOptions = {},
): (req: GuiRequest) => Promise<unknown> {
  const admin = identity.role === 'admin';
  const requireAdmin = (what: string) => {
    if (!admin)
      throw new ApiError(
        'Forbidden',
        `user "${identity.name}" cannot ${what}: managing tokens needs the admin role`,
      );
  };
  return async (req) => {
    switch (req.op) {
      case 'info':
        return info(cp, identity, options.uiAddress);
      case 'nodeMetricsHistory':
        return cp.api.nodeMetricsHistory(identity, req.name);
      case 'listTokens':
        requireAdmin('list tokens');
        return cp.tokens
          .list()
          .map(tokenOut)
          .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      case 'createToken': {
        requireAdmin('create tokens');
        const created = issueToken(cp.tokens, cp.pki, {
          role: req.role,
          ttlSeconds: req.ttlSeconds,
          name: req.name?.trim(),
          description: req.description?.trim() || undefined,
        });
        const answer: BridgeCreatedToken = { ...tokenOut(created.record), token: created.shown };
        return answer;
      }
      case 'deleteToken':
        requireAdmin('delete tokens');
        if (!cp.tokens.delete(req.tokenId))
          throw new ApiError(
            'NotFound',
            `token "${echo(req.tokenId, 40)}" not found: it may have been deleted already`,
          );
        return null;
      case 'kubeconfig':
        requireAdmin('make a kubeconfig');
        return kubeconfig(cp, req.role);
    }
  };
}

/** A kubeconfig with a token of its own, named so that `kubelab token list` tells what it is. */
function kubeconfig(cp: ControlPlane, role: 'admin' | 'viewer'): BridgeKubeconfig {
  if (!cp.pki)
    throw new ApiError(
      'FailedPrecondition',
      'this control plane runs without TLS (--plaintext), and kubectl needs HTTPS: start it without --plaintext',
    );
  const created = issueToken(cp.tokens, cp.pki, {
    role,
    name: 'kubeconfig-kubelab',
    description: `kubeconfig (${role}), made in the GUI`,
  });
  const server = agentAddressOf(cp).url;
  const config = kubeconfigFor({
    server,
    caPem: cp.pki.caPem,
    token: created.shown,
    context: 'kubelab',
    user: `kubelab-${role}`,
  });
  return { kubeconfig: stringify(config), tokenId: created.record.id, role, server };
}

function info(cp: ControlPlane, identity: Identity, uiAddress: string | undefined): BridgeInfo {
  const { version, user, server } = bridgeHello(cp, identity);
  return {
    version,
    user,
    role: identity.role,
    store: server.store,
    listen: server.listen,
    tls: Boolean(cp.pki),
    ...(uiAddress ? { uiAddress } : {}),
    agents: agentAddressOf(cp),
    ...(server.store === 'etcd' && cp.options.etcdEndpoints
      ? { etcdEndpoints: cp.options.etcdEndpoints }
      : {}),
    // Where the server keeps its files (and secrets) is for those who may change it.
    ...(identity.role === 'admin'
      ? {
          dataDir: server.dataDir,
          adminTokenPath: cp.tokens.adminTokenPath,
          ...(cp.pki ? { caPath: cp.pki.caPath } : {}),
        }
      : {}),
  };
}
