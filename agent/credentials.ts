/**
 * The agent's credential: obtained once by joining with a join token, then kept (0600) in the
 * data directory, so later starts need no token.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../client/api/errors.js';
import { joinCluster } from '../client/grpc/cluster.js';

export interface StoredCredentials {
  servers: string[];
  caPem: string;
  /** The bearer token bound to the node. */
  token: string;
  nodeName: string;
  joinedAt: string;
}

export function credentialsPath(dataDir: string, nodeName?: string): string {
  return nodeName ? join(dataDir, 'hollow', `${nodeName}.json`) : join(dataDir, 'credentials.json');
}

export function loadCredentials(path: string): StoredCredentials | undefined {
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as StoredCredentials;
}

export function saveCredentials(path: string, creds: StoredCredentials): void {
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export interface ObtainOptions {
  path: string;
  servers: string[];
  joinToken?: string;
  nodeName: string;
  /** Join again even though a credential is stored (it was refused). */
  rejoin?: boolean;
}

/** The stored credential, or a new one from joining with the join token. */
export async function obtainCredentials(options: ObtainOptions): Promise<StoredCredentials> {
  const stored = loadCredentials(options.path);
  // A stored credential wins over a token: the token may have expired since the first start
  // (a service keeps passing the same flags).
  if (stored && stored.nodeName === options.nodeName && !options.rejoin) {
    return options.servers.length ? { ...stored, servers: options.servers } : stored;
  }
  if (!options.joinToken) {
    throw new ApiError(
      'Unauthorized',
      `no credential in ${options.path} for node ${options.nodeName}: join with --token <join token> (create one on the control plane with \`kubelab token create\`)`,
    );
  }
  if (!options.servers.length)
    throw new ApiError('BadRequest', 'joining needs --server https://<control plane>:6443');
  let last: unknown;
  for (const server of options.servers) {
    try {
      const joined = await joinCluster(server, options.joinToken, options.nodeName);
      const creds: StoredCredentials = {
        servers: options.servers,
        caPem: joined.caPem,
        token: joined.token,
        nodeName: joined.nodeName,
        joinedAt: new Date().toISOString(),
      };
      saveCredentials(options.path, creds);
      return creds;
    } catch (err) {
      last = err;
      // A refused token or a wrong CA will not get better on another replica.
      if (!(err instanceof ApiError) || (err.reason !== 'Unavailable' && err.reason !== 'Timeout')) throw err;
    }
  }
  throw last;
}
