/**
 * `kubelab server` as a user runs it: a child process, TLS and an admin token created on first
 * start, reflection and health for any gRPC tool, a clean stop on SIGTERM with no acknowledged
 * write lost, and data that survives a restart.
 */
import * as grpc from '@grpc/grpc-js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { freePort } from '../support/etcd.js';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'kubelab.mjs');
const BUF = join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'buf');

interface Server {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  port: number;
  exited: Promise<number | null>;
}

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kubelab-server-'));
  dirs.push(d);
  return d;
}

async function startServer(
  dataDir: string,
  port: number,
  extra: string[] = [],
  cwd?: string,
): Promise<Server> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'server',
      '--data-dir',
      dataDir,
      '--listen',
      `127.0.0.1:${port}`,
      '--log-level',
      'warn',
      '--metrics-listen',
      '127.0.0.1:0',
      ...extra,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(cwd ? { cwd } : {}),
    },
  );
  children.push(child);
  const s: Server = {
    child,
    stdout: '',
    stderr: '',
    port,
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
  child.stdout!.on('data', (d: Buffer) => (s.stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (s.stderr += d.toString()));
  const deadline = Date.now() + 30_000;
  while (!s.stdout.includes('Stop with Ctrl-C')) {
    if (child.exitCode !== null) throw new Error(`kubelab server exited: ${s.stderr}`);
    if (Date.now() > deadline) throw new Error(`kubelab server did not start: ${s.stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return s;
}

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', command: ['true'] }] },
});

describe('kubelab server', () => {
  it('creates its CA, serving certificate and admin token on first start and says how to connect', async () => {
    const dir = tempDir();
    const s = await startServer(dir, await freePort());
    expect(s.stdout).toContain(`listening on    127.0.0.1:${s.port} (TLS)`);
    expect(s.stdout).toContain(`CA certificate  ${join(dir, 'pki', 'ca.crt')}`);
    expect(s.stdout).toContain(`admin token     ${join(dir, 'admin.token')}`);
    // What to do next, with this server's real address and files.
    const token = `"$(cat ${join(dir, 'admin.token')})"`;
    expect(s.stdout).toContain(
      `  npx labctl login https://127.0.0.1:${s.port} --token ${token} --certificate-authority ${join(dir, 'pki', 'ca.crt')}\n`,
    );
    expect(s.stdout).toContain(`  npx kubelab token create --data-dir ${dir}\n`);
    expect(s.stdout).toContain(
      `  KUBELAB_TOKEN='<the join token>' kubelab-agent --server https://127.0.0.1:${s.port}\n`,
    );
    expect(s.stdout).toContain(
      'no other machine can reach it; to add machines, start it with --listen 0.0.0.0',
    );
    expect(s.stdout).not.toContain('grpcurl');
    expect(statSync(join(dir, 'admin.token')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'pki', 'ca.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8')).toMatch(/^-----BEGIN CERTIFICATE-----/);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('starts from any folder, as `npx kubelab server` run in a home folder does', async () => {
    const dir = tempDir();
    const elsewhere = tempDir();
    const s = await startServer(dir, await freePort(), [], elsewhere);
    expect(s.stderr).not.toMatch(/cannot open the database|Cannot find package/);
    const client = grpcClient({
      server: `127.0.0.1:${s.port}`,
      token: readFileSync(join(dir, 'admin.token'), 'utf8').trim(),
      caPem: readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8'),
    });
    try {
      expect((await client.get('Namespace', 'default')).metadata?.name).toBe('default');
    } finally {
      client.close();
    }
  });

  it('serves reflection and health, so a generic gRPC tool can call it (buf curl, as the README shows)', async () => {
    const dir = tempDir();
    const s = await startServer(dir, await freePort());
    const token = readFileSync(join(dir, 'admin.token'), 'utf8').trim();
    const header = `authorization: Bearer ${token}`;
    const common = [
      'curl',
      '--protocol',
      'grpc',
      '--cacert',
      join(dir, 'pki', 'ca.crt'),
      '-H',
      header,
      '--reflect-header',
      header,
    ];
    const methods = await run(BUF, [...common, '--list-methods', `https://localhost:${s.port}`]);
    // The line the banner prints works as printed.
    const printed = s.stdout.split('\n').find((l) => l.trim().startsWith('npx buf curl'))!;
    const fromBanner = await run('sh', ['-c', printed.trim().replace(/^npx buf/, BUF)]);
    expect(fromBanner.stdout).toBe(methods.stdout);
    expect(methods.stdout.split('\n')).toEqual(
      expect.arrayContaining(['kubelab.v1.Resources/List', 'kubelab.v1.Resources/Watch']),
    );
    const created = await run(BUF, [
      ...common,
      '-d',
      JSON.stringify({ manifest: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: lab\n' }),
      `https://localhost:${s.port}/kubelab.v1.Resources/Create`,
    ]);
    expect(JSON.parse(created.stdout).namespace.metadata.name).toBe('lab');
    const listed = await run(BUF, [
      ...common,
      '-d',
      '{"kind":"Namespace"}',
      `https://localhost:${s.port}/kubelab.v1.Resources/List`,
    ]);
    const names = JSON.parse(listed.stdout).items.map(
      (i: { namespace: { metadata: { name: string } } }) => i.namespace.metadata.name,
    );
    expect(names).toEqual(['default', 'kube-node-lease', 'kube-public', 'kube-system', 'lab']);

    // Health needs no token.
    const caPem = readFileSync(join(dir, 'pki', 'ca.crt'));
    const health = new grpc.Client(`localhost:${s.port}`, grpc.credentials.createSsl(caPem));
    const status = await new Promise<Buffer>((resolve, reject) =>
      health.makeUnaryRequest(
        '/grpc.health.v1.Health/Check',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        (err, v) => (err ? reject(err) : resolve(v!)),
      ),
    );
    expect([...status]).toEqual([0x08, 0x01]); // status: SERVING
    health.close();
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('is found by `kubelab token create --data-dir` wherever it listens, which says so when it is not running', async () => {
    const dir = tempDir();
    const s = await startServer(dir, await freePort());
    const created = await run(process.execPath, [BIN, 'token', 'create', '--data-dir', dir]);
    expect(created.stdout).toMatch(/^K10[0-9a-f]{64}::[a-z0-9]{6}\.[a-z0-9]{32}\n$/);
    expect(created.stderr).toContain(
      `KUBELAB_TOKEN='${created.stdout.trim()}' kubelab-agent --server https://127.0.0.1:${s.port}\n`,
    );
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    const refused = await run(process.execPath, [BIN, 'token', 'list', '--data-dir', dir]).catch(
      (err) => err,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `error: no kubelab server answers at 127.0.0.1:${s.port} (where the server of ${dir} listens`,
    );
    expect(refused.stderr).toContain(`start it with \`kubelab server --data-dir ${dir}\``);
  });

  it('stops on SIGTERM without losing an acknowledged write, and keeps its data across restarts', async () => {
    const dir = tempDir();
    const port = await freePort();
    const s = await startServer(dir, port);
    const client = grpcClient({
      server: `127.0.0.1:${port}`,
      token: readFileSync(join(dir, 'admin.token'), 'utf8').trim(),
      caPem: readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8'),
      retry: { attempts: 1 },
    });
    const acknowledged: string[] = [];
    let stopSent = false;
    const writes = Array.from({ length: 400 }, (_, i) =>
      client.create(pod(`p${i}`)).then(
        () => {
          acknowledged.push(`p${i}`);
          if (acknowledged.length === 150 && !stopSent) {
            stopSent = true;
            s.child.kill('SIGTERM');
          }
        },
        () => undefined,
      ),
    );
    await Promise.all(writes);
    expect(await s.exited).toBe(0);
    client.close();
    expect(acknowledged.length).toBeGreaterThanOrEqual(150);

    const again = await startServer(dir, port);
    const reader = grpcClient({
      server: `127.0.0.1:${port}`,
      token: readFileSync(join(dir, 'admin.token'), 'utf8').trim(),
      caPem: readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8'),
    });
    const stored = new Set((await reader.list('Pod')).items.map((p) => p.metadata?.name));
    const lost = acknowledged.filter((name) => !stored.has(name));
    expect(lost).toEqual([]);
    reader.close();
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  });

  it('refuses plaintext off loopback, with a message that says what to do', async () => {
    const dir = tempDir();
    const res = await run(process.execPath, [
      BIN,
      'server',
      '--data-dir',
      dir,
      '--listen',
      '0.0.0.0:0',
      '--plaintext',
    ]).catch((e) => e);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('--plaintext is only allowed on a loopback address');
    const badListen = await run(process.execPath, [
      BIN,
      'server',
      '--data-dir',
      dir,
      '--listen',
      'nonsense',
    ]).catch((e) => e);
    expect(badListen.code).not.toBe(0);
    expect(badListen.stderr).toContain('is not host:port');
  });

  it('exposes controller, workqueue and informer metrics for Prometheus', async () => {
    const dir = tempDir();
    const s = await startServer(dir, await freePort());
    expect(s.stdout).toContain('controllers     namespace, garbagecollector');
    const url = /metrics +(http:\/\/\S+\/metrics)/.exec(s.stdout)?.[1];
    expect(url).toBeTruthy();
    const text = await (await fetch(url!)).text();
    for (const metric of [
      'workqueue_adds_total',
      'workqueue_depth{name="namespace"}',
      'informer_lists_total{kind="Pod"}',
      'informer_last_resource_version',
      'process_cpu_seconds_total',
    ]) {
      expect(text).toContain(metric);
    }
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('serves plaintext on loopback when asked', async () => {
    const dir = tempDir();
    const s = await startServer(dir, await freePort(), ['--plaintext']);
    expect(s.stdout).toContain('(plaintext, loopback only)');
    const client = grpcClient({
      server: `127.0.0.1:${s.port}`,
      token: readFileSync(join(dir, 'admin.token'), 'utf8').trim(),
      plaintext: true,
    });
    expect((await client.list('Namespace')).items).toHaveLength(4);
    client.close();
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });
});
