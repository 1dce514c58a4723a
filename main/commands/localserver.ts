/**
 * Commands run on the control plane machine (`kubelab token …`, `kubelab kubeconfig`) talk to
 * the local server with the admin token and CA from its data folder, at the address the
 * server recorded when it started.
 */
import type { Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../../client/api/errors.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { localDialAddress, readServerRecord, serverRecordPath } from '../serverrecord.js';
import { defaultDataDir } from './common.js';

export interface ConnectFlags {
  dataDir: string;
  /** Absent: the server that owns the data folder, where it last said it listens. */
  server?: string;
}

/** Where the commands dial, and how the server can be reached by other machines. */
export interface Target {
  server: string;
  /** Where the address came from, for messages. */
  from: string;
  /** host:port the server listens on, when known. */
  listen?: string;
}

export function localServerOptions(c: Command): Command {
  return c
    .option(
      '--data-dir <dir>',
      'the control plane data folder (holds admin.token and pki/ca.crt)',
      defaultDataDir(),
    )
    .option(
      '--server <host:port>',
      'the control plane (default: where the server of --data-dir listens, as it recorded at start)',
    );
}

export function targetOf(flags: ConnectFlags): Target {
  if (flags.server) return { server: flags.server, from: '--server' };
  const record = readServerRecord(flags.dataDir);
  if (!record)
    return { server: '127.0.0.1:6443', from: `the default (no server has started on ${flags.dataDir} yet)` };
  return {
    server: localDialAddress(record.listen),
    from: `where the server of ${flags.dataDir} listens, as recorded in ${serverRecordPath(flags.dataDir)}`,
    listen: record.listen,
  };
}

/** The cluster CA from the data folder; undefined when the server runs without TLS. */
export function caOf(dataDir: string): string | undefined {
  const caPath = join(dataDir, 'pki', 'ca.crt');
  return existsSync(caPath) ? readFileSync(caPath, 'utf8') : undefined;
}

function connect(flags: ConnectFlags, target: Target): TokensClient {
  const tokenPath = join(flags.dataDir, 'admin.token');
  if (!existsSync(tokenPath)) {
    throw new Error(
      `no admin token at ${tokenPath}: run this on the control plane machine, or pass --data-dir`,
    );
  }
  const caPem = caOf(flags.dataDir);
  return new TokensClient({
    server: target.server,
    token: readFileSync(tokenPath, 'utf8').trim(),
    caPem,
    plaintext: caPem === undefined,
  });
}

export async function withTokensClient<T>(
  flags: ConnectFlags,
  fn: (c: TokensClient) => Promise<T>,
): Promise<T> {
  const target = targetOf(flags);
  const client = connect(flags, target);
  try {
    return await fn(client);
  } catch (err) {
    if (err instanceof ApiError && (err.reason === 'Unavailable' || err.reason === 'Timeout')) {
      throw new Error(
        `no kubelab server answers at ${target.server} (${target.from}): start it with \`kubelab server --data-dir ${flags.dataDir}\`, or pass --server host:port`,
      );
    }
    throw err;
  } finally {
    client.close();
  }
}
