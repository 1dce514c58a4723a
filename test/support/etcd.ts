/**
 * Starts a real etcd (Debian's etcd-server) on 127.0.0.1 for tests and benchmarks: free
 * ports, a fresh data folder, stopped and removed by `stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface EtcdServer {
  endpoint: string;
  dataDir: string;
  stop(): Promise<void>;
}

export function etcdBinary(): string {
  for (const candidate of [process.env.ETCD_BIN, '/usr/bin/etcd', '/usr/local/bin/etcd']) {
    if (candidate && existsSync(candidate)) return candidate;
  }
  throw new Error('etcd is not installed: run `sudo apt-get install -y etcd-server` (or set ETCD_BIN)');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

/** Port races lost in a row before a start-up gives up. */
const BIND_ATTEMPTS = 5;

/**
 * An etcd on two ports that were free a moment before it started: a test running in parallel
 * can take one of them first, and etcd then exits with "address already in use". It is started
 * again on other ports.
 */
export async function startEtcd(): Promise<EtcdServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEtcdOnce();
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt >= BIND_ATTEMPTS) throw err;
    }
  }
}

class PortTaken extends Error {}

async function startEtcdOnce(): Promise<EtcdServer> {
  const bin = etcdBinary();
  const dataDir = mkdtempSync(join(tmpdir(), 'kubelab-etcd-'));
  const clientPort = await freePort();
  const peerPort = await freePort();
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const progressInterval = process.env.ETCD_EXPERIMENTAL_WATCH_PROGRESS_NOTIFY_INTERVAL ?? '1s';
  const childEnv = { ...process.env };
  delete childEnv.ETCD_EXPERIMENTAL_WATCH_PROGRESS_NOTIFY_INTERVAL;
  const child: ChildProcess = spawn(
    bin,
    [
      '--name',
      'test',
      '--data-dir',
      dataDir,
      '--listen-client-urls',
      endpoint,
      '--advertise-client-urls',
      endpoint,
      '--listen-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-cluster',
      `test=http://127.0.0.1:${peerPort}`,
      '--quota-backend-bytes',
      String(2 * 1024 * 1024 * 1024),
      '--max-request-bytes',
      String(4 * 1024 * 1024),
      '--log-level',
      'error',
      // etcd 3.4 sends progress notices every 10 minutes unless told otherwise; the watch
      // cache relies on them to prove freshness when its keys are quiet.
      '--experimental-watch-progress-notify-interval',
      progressInterval,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: childEnv },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));
  // Its last words on stderr may come after 'exit'; 'close' waits for them.
  let closed = false;
  child.on('close', () => (closed = true));

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (closed) {
      rmSync(dataDir, { recursive: true, force: true });
      const message = `etcd exited during start-up: ${stderr.slice(-2000)}`;
      throw /address already in use/.test(stderr) ? new PortTaken(message) : new Error(message);
    }
    try {
      const res = await fetch(`${endpoint}/health`);
      if (res.ok && ((await res.json()) as { health?: string }).health === 'true') break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`etcd did not become healthy within 20 s: ${stderr.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  return {
    endpoint,
    dataDir,
    async stop() {
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
