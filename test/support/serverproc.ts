/**
 * A real `kubelab server` process for tests that must watch the process itself — whether it is
 * still alive, how much memory it holds — and not only its answers: TLS on a free loopback
 * port, browser mode on another, no controllers (nothing writes unless a client does).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'kubelab.mjs');

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  dataDir: string;
  port: number;
  /** Browser mode's HTTP port. */
  uiPort: number;
  adminToken: string;
  caPem: string;
  /** Resident memory now, in bytes (Linux). */
  rssBytes(): number;
  alive(): boolean;
  /** stdout and stderr so far, for failure messages. */
  output(): string;
  /** A raw gRPC channel to the server over TLS (callers encode and decode themselves). */
  channel(): grpc.Client;
  stop(): Promise<void>;
}

export async function startServerProcess(extraArgs: string[] = []): Promise<ServerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kubelab-serverproc-'));
  const child = spawn(
    process.execPath,
    [
      BIN,
      'server',
      '--data-dir',
      dataDir,
      '--listen',
      '127.0.0.1:0',
      '--ui',
      '--ui-listen',
      '127.0.0.1:0',
      '--no-controller-manager',
      '--metrics-listen',
      '127.0.0.1:0',
      '--log-level',
      'warn',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  const deadline = Date.now() + 60_000;
  while (!out.includes('Stop with Ctrl-C')) {
    if (child.exitCode !== null) throw new Error(`kubelab server exited (${child.exitCode}):\n${out}`);
    if (Date.now() > deadline) throw new Error(`kubelab server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const port = Number(/listening on +127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
  const uiPort = Number(/^GUI: http:\/\/127\.0\.0\.1:(\d+)\//m.exec(out)?.[1]);
  const caPem = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
  const channels: grpc.Client[] = [];
  const pid = child.pid!;
  return {
    child,
    pid,
    dataDir,
    port,
    uiPort,
    adminToken: readFileSync(join(dataDir, 'admin.token'), 'utf8').trim(),
    caPem,
    rssBytes() {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      // A process that has exited but is not yet reaped (a zombie) has no VmRSS: it holds none.
      const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
      return kb ? Number(kb) * 1024 : 0;
    },
    alive: () => child.exitCode === null && child.signalCode === null,
    output: () => out,
    channel() {
      const c = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createSsl(Buffer.from(caPem)), {
        'grpc.ssl_target_name_override': 'localhost',
        'grpc.max_send_message_length': -1,
        'grpc.max_receive_message_length': -1,
      });
      channels.push(c);
      return c;
    },
    async stop() {
      for (const c of channels) c.close();
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
