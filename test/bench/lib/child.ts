/**
 * Runs `kubelab server` in a child process for the benchmarks, so the client (the benchmark)
 * and the server do not share one event loop, the same way etcd runs in its own process.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Client } from '../../../client/client.js';
import { grpcClient } from '../../../client/grpc/transport.js';
import { freePort } from '../../support/etcd.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export interface ChildControlPlaneOptions {
  store: 'sqlite' | 'etcd';
  etcdEndpoint?: string;
  etcdPrefix?: string;
  /** Extra node flags for the child (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Extra `kubelab server` flags (e.g. --no-controller-manager). */
  serverArgs?: string[];
  /** Extra environment for the child. */
  env?: Record<string, string>;
  startTimeoutMs?: number;
  /** Run on this data folder and kept on stop (a restart); default: a new one, removed on stop. */
  dataDir?: string;
  /** Listen on these ports (a restart keeps its address); default: free ones. */
  port?: number;
  metricsPort?: number;
  /** Everything the child prints on stdout is also appended to this file (e.g. V8's GC trace). */
  stdoutFile?: string;
}

export interface ChildControlPlane {
  readonly store: 'sqlite' | 'etcd';
  readonly server: string;
  readonly token: string;
  readonly caPem: string;
  readonly pid: number;
  /** The server's --data-dir (admin.token, pki/, tokens.json, the store); removed by stop(). */
  readonly dataDir: string;
  readonly port: number;
  readonly metricsPort: number;
  /** A typed gRPC client; `separateChannel` gives it its own connection. */
  client(separateChannel?: boolean): Client;
  stop(): Promise<void>;
}

export async function startChildControlPlane(options: ChildControlPlaneOptions): Promise<ChildControlPlane> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), `kubelab-bench-${options.store}-`));
  const port = options.port ?? (await freePort());
  // Each child serves /metrics on its own port (the default one can be taken only once).
  const metricsPort = options.metricsPort ?? (await freePort());
  const args = [
    ...(options.nodeArgs ?? []),
    join(REPO_ROOT, 'bin/kubelab.mjs'),
    'server',
    '--data-dir',
    dataDir,
    '--listen',
    `127.0.0.1:${port}`,
    '--store',
    options.store,
    '--metrics-listen',
    `127.0.0.1:${metricsPort}`,
    '--log-level',
    'warn',
    ...(options.serverArgs ?? []),
  ];
  if (options.store === 'etcd') {
    if (!options.etcdEndpoint) throw new Error('an etcd endpoint is needed for --store etcd');
    args.push('--etcd-endpoints', options.etcdEndpoint, '--etcd-prefix', options.etcdPrefix ?? '/bench');
  }
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KUBELAB_LOG_LEVEL: 'warn', ...options.env },
  });
  if (options.stdoutFile) child.stdout?.pipe(createWriteStream(options.stdoutFile, { flags: 'a' }));
  let exited = false;
  let stdout = '';
  let stderr = '';
  const exit = new Promise<void>((r) => child.once('exit', () => ((exited = true), r())));
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-8000);
  });
  const clients: Client[] = [];
  const cleanup = async () => {
    for (const c of clients.splice(0)) c.close();
    if (!exited) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    }
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    await new Promise<void>((resolveStart, rejectStart) => {
      const timer = setTimeout(
        () => rejectStart(new Error(`kubelab server did not start within 30 s: ${stderr}`)),
        options.startTimeoutMs ?? 30_000,
      );
      child.stdout?.on('data', (d: Buffer) => {
        // Only the tail is kept: a GC trace (--trace-gc-nvp) can print megabytes before the line.
        stdout = (stdout + d.toString()).slice(-4096);
        if (stdout.includes('is running')) {
          clearTimeout(timer);
          resolveStart();
        }
      });
      void exit.then(() => {
        clearTimeout(timer);
        rejectStart(new Error(`kubelab server exited during start-up: ${stderr}`));
      });
    });
  } catch (err) {
    await cleanup();
    throw err;
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  child.stdout?.resume();

  const token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
  const caPem = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
  const server = `127.0.0.1:${port}`;
  return {
    store: options.store,
    server,
    token,
    caPem,
    pid: child.pid ?? 0,
    dataDir,
    port,
    metricsPort,
    client(separateChannel = false) {
      const c = grpcClient({
        server,
        token,
        caPem,
        timeoutMs: 120_000,
        // Clients with the same target share one connection unless told otherwise.
        channelOptions: separateChannel ? { 'grpc.use_local_subchannel_pool': 1 } : {},
      });
      clients.push(c);
      return c;
    },
    stop: cleanup,
  };
}

/** A join token for agents, made the way a person makes one: `kubelab token create`. */
export async function createJoinToken(cp: ChildControlPlane): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(REPO_ROOT, 'bin/kubelab.mjs'), 'token', 'create', '--data-dir', cp.dataDir, '--server', cp.server],
    { cwd: REPO_ROOT },
  );
  const token = stdout.trim();
  if (!/^K10[0-9a-f]{64}::/.test(token))
    throw new Error(`kubelab token create printed ${JSON.stringify(stdout.slice(0, 200))}`);
  return token;
}
