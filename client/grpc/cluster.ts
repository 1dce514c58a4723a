/**
 * Clients for cluster membership: joining a machine with a join token (fetch the CA, check it
 * against the token's pin, then join over TLS pinned to it), managing tokens, and reading a
 * node's metrics history.
 */
import type * as grpc from '@grpc/grpc-js';
import {
  BootstrapService,
  TokensService,
  type GetVersionResponse,
  type JoinRequest,
  type JoinResponse,
  type Token,
} from '../../proto/gen/kubelab/v1/cluster.js';
import { MetricsService, type NodeHistoryResponse } from '../../proto/gen/kubelab/v1/metrics.js';
import { ApiError } from '../api/errors.js';
import type { NodeMetrics } from '../api/types.js';
import { caHashOf } from '../util/tls.js';
import { Connection, type ConnectionOptions } from './connection.js';

export interface JoinToken {
  /** SHA-256 (hex) of the cluster CA the token pins. */
  caHash: string;
  /** "<id>.<secret>", the bearer for the Join call. */
  bearer: string;
}

const JOIN_TOKEN = /^K10([0-9a-f]{64})::([a-z0-9]{6}\.[a-z0-9]{32})$/;

export function parseJoinToken(token: string): JoinToken {
  const m = JOIN_TOKEN.exec(token.trim());
  if (!m) {
    throw new ApiError(
      'BadRequest',
      'the join token is malformed: it looks like K10<64 hex digits>::<6 characters>.<32 characters>; copy it again from `kubelab token create`',
    );
  }
  return { caHash: m[1], bearer: m[2] };
}

/** The cluster CA, fetched without verifying the server (the caller must check it against a pin). */
export async function fetchClusterCA(server: string, timeoutMs = 10_000): Promise<string> {
  const conn = new Connection(
    { server, token: '', insecureSkipVerify: true, timeoutMs },
    BootstrapService as unknown as grpc.ServiceDefinition,
    'kubelab.v1.Bootstrap',
  );
  try {
    const res = await conn.unary<object, { caPem?: string }>('getCa', {});
    if (!res.caPem) throw new ApiError('InternalError', `${server} sent no CA certificate`);
    return res.caPem;
  } finally {
    conn.close();
  }
}

export interface ServerVersion {
  version: string;
  platform: string;
  runtimeVersion: string;
}

/** The server's version (any valid token may ask). */
export async function fetchServerVersion(options: ConnectionOptions): Promise<ServerVersion> {
  const conn = new Connection(
    options,
    BootstrapService as unknown as grpc.ServiceDefinition,
    'kubelab.v1.Bootstrap',
  );
  try {
    const res = await conn.unary<object, GetVersionResponse>('getVersion', {});
    return {
      version: res.version ?? '',
      platform: res.platform ?? '',
      runtimeVersion: res.runtimeVersion ?? '',
    };
  } finally {
    conn.close();
  }
}

export interface JoinResult {
  caPem: string;
  /** The credential bound to the node: store it, it replaces the join token. */
  token: string;
  nodeName: string;
}

export interface JoinOptions {
  /**
   * This machine's node password (k3s's): proves a join under a name that already has a
   * credential comes from the machine holding it. The server keeps only a hash.
   */
  nodePassword?: string;
  /** Take the name over even though another machine holds it (its credential is revoked). */
  force?: boolean;
}

/** Joins `nodeName` to the cluster at `server` with a join token. */
export async function joinCluster(
  server: string,
  joinToken: string,
  nodeName: string,
  options: JoinOptions = {},
): Promise<JoinResult> {
  const pin = parseJoinToken(joinToken);
  const caPem = await fetchClusterCA(server);
  const actual = caHashOf(caPem);
  if (actual !== pin.caHash) {
    throw new ApiError(
      'Unauthorized',
      `the CA certificate of ${server} does not match the join token (the token pins sha256 ${pin.caHash.slice(0, 16)}…, the server has ${actual.slice(0, 16)}…): check that --server is your control plane, or get a fresh token with \`kubelab token create\``,
    );
  }
  const conn = new Connection(
    { server, token: pin.bearer, caPem },
    BootstrapService as unknown as grpc.ServiceDefinition,
    'kubelab.v1.Bootstrap',
  );
  try {
    const res = await conn.unary<JoinRequest, JoinResponse>('join', {
      nodeName,
      nodePassword: options.nodePassword ?? '',
      force: options.force ?? false,
    });
    return { caPem, token: res.token ?? '', nodeName: res.nodeName ?? nodeName };
  } catch (err) {
    if (err instanceof ApiError && err.reason === 'Unauthorized') {
      throw new ApiError(
        'Unauthorized',
        `the join token was refused (unknown, deleted or expired): create a new one on the control plane with \`kubelab token create\``,
      );
    }
    throw err;
  } finally {
    conn.close();
  }
}

export interface TokenInfo {
  id: string;
  role: string;
  name: string;
  nodeName?: string;
  createdAt: string;
  expiresAt?: string;
  description?: string;
  /** Only when just created. */
  token?: string;
}

function tokenIn(t: Token): TokenInfo {
  return {
    id: t.id ?? '',
    role: t.role ?? '',
    name: t.name ?? '',
    createdAt: t.createdAt ?? '',
    ...(t.nodeName ? { nodeName: t.nodeName } : {}),
    ...(t.expiresAt ? { expiresAt: t.expiresAt } : {}),
    ...(t.description ? { description: t.description } : {}),
    ...(t.token ? { token: t.token } : {}),
  };
}

export class TokensClient {
  private readonly conn: Connection;

  constructor(options: ConnectionOptions) {
    this.conn = new Connection(
      options,
      TokensService as unknown as grpc.ServiceDefinition,
      'kubelab.v1.Tokens',
    );
  }

  async create(
    options: {
      role?: 'join' | 'admin' | 'viewer';
      ttlSeconds?: number;
      description?: string;
      name?: string;
    } = {},
  ): Promise<TokenInfo> {
    return tokenIn(
      await this.conn.unary<object, Token>('create', {
        role: options.role ?? 'join',
        ttlSeconds: options.ttlSeconds ?? 0,
        description: options.description ?? '',
        name: options.name ?? '',
      }),
    );
  }

  async list(): Promise<TokenInfo[]> {
    const res = await this.conn.unary<object, { tokens?: Token[] }>('list', {});
    return (res.tokens ?? []).map(tokenIn);
  }

  async delete(id: string): Promise<void> {
    await this.conn.unary('delete', { id });
  }

  close(): void {
    this.conn.close();
  }
}

export class MetricsClient {
  private readonly conn: Connection;

  constructor(options: ConnectionOptions) {
    this.conn = new Connection(
      options,
      MetricsService as unknown as grpc.ServiceDefinition,
      'kubelab.v1.Metrics',
    );
  }

  /** The node's usage samples of the last 15 minutes, oldest first. */
  async nodeHistory(nodeName: string): Promise<NodeMetrics[]> {
    const res = await this.conn.unary<object, NodeHistoryResponse>('nodeHistory', { nodeName });
    return (res.samples ?? []) as NodeMetrics[];
  }

  close(): void {
    this.conn.close();
  }
}
