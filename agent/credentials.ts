/**
 * The agent's credential: obtained once by joining with a join token, then kept (0600) in the
 * data directory, so later starts need no token. Beside it, the node password (k3s's): a
 * secret made on the first join and sent with every join, so that the control plane lets this
 * machine — and no other — join again under its node name while its credential is valid.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ApiError } from '../client/api/errors.js';
import type { Clock } from '../client/util/clock.js';
import { joinWhenReachable } from './bootstrap.js';

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

/** Where the node password is kept: beside the credential (a hollow node's under hollow/). */
export function nodePasswordPath(dataDir: string, nodeName?: string): string {
  return nodeName ? join(dataDir, 'hollow', `${nodeName}.password`) : join(dataDir, 'node-password');
}

/** The node password, made (32 random bytes) and kept 0600 the first time it is needed. */
export function ensureNodePassword(path: string): string {
  if (existsSync(path)) {
    const kept = readFileSync(path, 'utf8').trim();
    if (kept) return kept;
  }
  const password = randomBytes(32).toString('base64url');
  writePrivateFile(path, password + '\n');
  return password;
}

/** Writes a file only its owner may read, whole or not at all (temporary file, then rename). */
function writePrivateFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export function loadCredentials(path: string): StoredCredentials | undefined {
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as StoredCredentials;
}

export function saveCredentials(path: string, creds: StoredCredentials): void {
  writePrivateFile(path, JSON.stringify(creds, null, 2) + '\n');
}

export interface ObtainOptions {
  path: string;
  /** Where this node's password is kept (nodePasswordPath); made on the first join. */
  passwordPath: string;
  servers: string[];
  joinToken?: string;
  nodeName: string;
  /** Join again even though a credential is stored (it was refused). */
  rejoin?: boolean;
  /** Take the node name over even though another machine holds it (kubelab-agent --force). */
  force?: boolean;
  clock?: Clock;
  /** Told once when the control plane does not answer yet (the join waits for it). */
  onWaiting?: (message: string) => void;
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
  // Kept before joining: a crash after the join must not leave the name held by a secret lost.
  const nodePassword = ensureNodePassword(options.passwordPath);
  const joined = await joinWhenReachable({
    servers: options.servers,
    joinToken: options.joinToken,
    nodeName: options.nodeName,
    nodePassword,
    force: options.force,
    clock: options.clock,
    onWaiting: options.onWaiting,
  });
  const creds: StoredCredentials = {
    servers: options.servers,
    caPem: joined.caPem,
    token: joined.token,
    nodeName: joined.nodeName,
    joinedAt: new Date().toISOString(),
  };
  saveCredentials(options.path, creds);
  return creds;
}
