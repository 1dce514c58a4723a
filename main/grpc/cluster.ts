/**
 * Cluster membership over gRPC: Bootstrap (GetCA without credentials, Join with a join token),
 * Tokens (admin only) and Metrics (a node's recent usage samples).
 */
import type * as grpc from '@grpc/grpc-js';
import { ApiError, echo } from '../../client/api/errors.js';
import type { Identity } from '../../client/api/local.js';
import { isDNS1123Subdomain } from '../../client/api/validation.js';
import type {
  GetCAResponse,
  GetVersionResponse,
  JoinRequest,
  JoinResponse,
} from '../../proto/gen/kubelab/v1/cluster.js';
import type {
  CreateTokenRequest,
  DeleteTokenRequest,
  ListTokensResponse,
  Token,
} from '../../proto/gen/kubelab/v1/cluster.js';
import type { NodeHistoryRequest, NodeHistoryResponse } from '../../proto/gen/kubelab/v1/metrics.js';
import type { ApiServer } from '../apiserver/apiserver.js';
import type { Logger } from '../logging.js';
import { unaryHandlers } from './handlers.js';
import { admitNodeJoin } from './nodejoin.js';
import type { Pki } from './pki.js';
import type { TokenRecord, TokenStore } from './tokens.js';
import { VERSION } from '../version.js';

export const DEFAULT_JOIN_TTL_SECONDS = 24 * 60 * 60;

/** The join token people copy to a new machine: it pins the CA and carries the secret. */
export function joinTokenString(caHash: string, token: string): string {
  return `K10${caHash}::${token}`;
}

function tokenOut(r: TokenRecord, token = ''): Token {
  return {
    id: r.id,
    role: r.role,
    name: r.name,
    nodeName: r.nodeName ?? '',
    createdAt: r.createdAt,
    expiresAt: r.expiresAt ?? '',
    description: r.description ?? '',
    token,
  };
}

function requireAdmin(id: Identity, what: string): void {
  if (id.role !== 'admin') {
    throw new ApiError('Forbidden', `user "${id.name}" cannot ${what}: managing tokens needs the admin role`);
  }
}

export function bootstrapHandlers(
  tokens: TokenStore,
  pki: Pki | undefined,
  logger: Logger,
): grpc.UntypedServiceImplementation {
  const unary = unaryHandlers(tokens, logger);
  return {
    getCa: unary.open<unknown, GetCAResponse>(async () => {
      if (!pki)
        throw new ApiError(
          'FailedPrecondition',
          'this server runs without TLS (--plaintext): agents can only join a TLS server',
        );
      return { caPem: pki.caPem };
    }),
    // Any valid token may ask: `labctl version` also shows whether the credential works.
    getVersion: unary.authenticated<unknown, GetVersionResponse>(async () => ({
      version: VERSION,
      platform: `${process.platform}/${process.arch}`,
      runtimeVersion: process.version,
    })),
    join: unary.authenticated<JoinRequest, JoinResponse>(async (id, req) => {
      if (id.role !== 'join') {
        throw new ApiError(
          'Forbidden',
          'Join needs a join token: create one on the control plane with `kubelab token create`',
        );
      }
      const nodeName = req.nodeName ?? '';
      const problems = isDNS1123Subdomain(nodeName);
      if (!nodeName || problems.length) {
        throw new ApiError(
          'BadRequest',
          `node name "${echo(nodeName)}" is invalid: ${problems.join('; ') || 'it is empty'}; pass --node-name with a lowercase DNS name`,
        );
      }
      // Joining again replaces the node's old credential, but only from the machine that holds
      // the name (its node password), or when told to take it over.
      const { token } = admitNodeJoin(
        tokens,
        { nodeName, nodePassword: req.nodePassword ?? '', force: req.force ?? false, joinedWith: id.name },
        logger,
      );
      return { token, nodeName };
    }),
  } as unknown as grpc.UntypedServiceImplementation;
}

/**
 * Issues a token as `kubelab token create`, labctl and the GUI all do: join tokens are named
 * system:bootstrap:<id>, expire after a day unless told otherwise and are shown with the CA's
 * hash; admin and viewer tokens never expire unless given a lifetime.
 */
export function issueToken(
  tokens: TokenStore,
  pki: Pki | undefined,
  req: { role: 'join' | 'admin' | 'viewer'; ttlSeconds?: number; name?: string; description?: string },
): { record: TokenRecord; shown: string } {
  if (req.role === 'join' && !pki)
    throw new ApiError(
      'FailedPrecondition',
      'join tokens pin the CA, and this server runs without TLS (--plaintext)',
    );
  const ttlSeconds = req.ttlSeconds || (req.role === 'join' ? DEFAULT_JOIN_TTL_SECONDS : 0);
  const created = tokens.create({
    name: req.role === 'join' ? 'system:bootstrap:{id}' : req.name || `${req.role}-{id}`,
    role: req.role,
    ttlMs: ttlSeconds ? ttlSeconds * 1000 : undefined,
    description: req.description,
  });
  const shown = req.role === 'join' ? joinTokenString(pki!.caHash, created.token) : created.token;
  return { record: created.record, shown };
}

export function tokensHandlers(
  tokens: TokenStore,
  pki: Pki | undefined,
  logger: Logger,
): grpc.UntypedServiceImplementation {
  const unary = unaryHandlers(tokens, logger).authenticated;
  return {
    create: unary<CreateTokenRequest, Token>(async (id, req) => {
      requireAdmin(id, 'create tokens');
      const role = req.role || 'join';
      if (role !== 'join' && role !== 'admin' && role !== 'viewer') {
        throw new ApiError(
          'BadRequest',
          `role "${role}" is not one a token can be created for; use join, admin or viewer`,
        );
      }
      if ((req.ttlSeconds ?? 0) < 0) throw new ApiError('BadRequest', 'ttlSeconds must not be negative');
      const created = issueToken(tokens, pki, {
        role,
        ttlSeconds: req.ttlSeconds,
        name: req.name,
        description: req.description,
      });
      return tokenOut(created.record, created.shown);
    }),
    list: unary<unknown, ListTokensResponse>(async (id) => {
      requireAdmin(id, 'list tokens');
      return { tokens: tokens.list().map((r) => tokenOut(r)) };
    }),
    delete: unary<DeleteTokenRequest, object>(async (id, req) => {
      requireAdmin(id, 'delete tokens');
      if (!tokens.delete(req.id ?? ''))
        throw new ApiError(
          'NotFound',
          `token "${echo(req.id ?? '', 40)}" not found; list them with \`kubelab token list\``,
        );
      return {};
    }),
  } as unknown as grpc.UntypedServiceImplementation;
}

export function metricsHandlers(
  api: ApiServer,
  tokens: TokenStore,
  logger: Logger,
): grpc.UntypedServiceImplementation {
  const unary = unaryHandlers(tokens, logger).authenticated;
  return {
    nodeHistory: unary<NodeHistoryRequest, NodeHistoryResponse>(async (id, req) => ({
      samples: await api.nodeMetricsHistory(id, req.nodeName ?? ''),
    })),
  } as unknown as grpc.UntypedServiceImplementation;
}
