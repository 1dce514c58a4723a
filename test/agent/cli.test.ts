/**
 * The agent as people run it: `kubelab token create` on the control plane, `kubelab-agent
 * --server … --token …` on the machine, later starts without the token, and a clear way back
 * after the Node was deleted.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const KUBELAB = join(root, 'bin', 'kubelab.mjs');
const AGENT = join(root, 'bin', 'kubelab-agent.mjs');
let t: TestControlPlane;
let dir: string;

beforeAll(async () => {
  t = await startTestControlPlane();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-agentcli-'));
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

function startAgent(args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(
    process.execPath,
    [AGENT, '--data-dir', join(dir, 'agent'), '--node-name', 'cli-node', '--log-level', 'warn', ...args],
    { stdio: 'pipe' },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (out += d));
  return { child, output: () => out };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

it('joins with a token from `kubelab token create`, restarts without it, and rejoins after the Node was deleted', async () => {
  const server = `https://127.0.0.1:${t.cp.port}`;
  const created = await run(process.execPath, [
    KUBELAB,
    'token',
    'create',
    '--data-dir',
    t.dataDir,
    '--server',
    `127.0.0.1:${t.cp.port}`,
  ]);
  const token = created.stdout.trim();
  expect(token).toMatch(/^K10[0-9a-f]{64}::/);
  expect(created.stderr).toContain('kubelab-agent --server');

  const admin = t.client();
  const first = startAgent(['--server', server, '--token', token]);
  await eventually(
    async () =>
      (await admin.get('Node', 'cli-node')).status?.conditions?.some(
        (c) => c.type === 'Ready' && c.status === 'True',
      ) ?? false,
    'the node to be Ready',
  );
  expect(statSync(join(dir, 'agent', 'credentials.json')).mode & 0o777).toBe(0o600);
  await stop(first.child);

  // Later starts need no token.
  const second = startAgent([]);
  await eventually(async () => second.output().includes('node cli-node reporting to'), 'the restart');
  // The first run may have stopped before its first lease write: wait for the lease itself.
  let renewed: string | undefined;
  await eventually(async () => {
    renewed = (await admin.get('Lease', 'cli-node', { namespace: 'kube-node-lease' })).spec?.renewTime;
    return true;
  }, 'the lease');
  await eventually(
    async () =>
      (await admin.get('Lease', 'cli-node', { namespace: 'kube-node-lease' })).spec?.renewTime !== renewed,
    'a heartbeat after the restart',
  );
  await stop(second.child);

  // The Node is deleted: its credential goes with it.
  await admin.delete('Node', 'cli-node');
  const refused = startAgent([]);
  await new Promise((r) => refused.child.once('exit', r));
  expect(refused.child.exitCode).toBe(1);
  expect(refused.output()).toContain('was refused (was the Node deleted?): join again with --token');

  const rejoined = startAgent(['--server', server, '--token', token]);
  await eventually(
    async () => (await admin.get('Node', 'cli-node')).metadata?.name === 'cli-node',
    'the node to register again',
  );
  await stop(rejoined.child);
}, 90_000);

it('explains what is missing', async () => {
  const noCreds = await run(process.execPath, [
    AGENT,
    '--data-dir',
    join(dir, 'empty'),
    '--server',
    'https://127.0.0.1:1',
  ]).catch((e) => e);
  expect(noCreds.code).toBe(1);
  expect(noCreds.stderr).toContain('join with --token');
  const badFlag = await run(process.execPath, [
    AGENT,
    '--eviction-hard',
    'memory.free<1Gi',
    '--data-dir',
    join(dir, 'x'),
  ]).catch((e) => e);
  expect(badFlag.code).toBe(1);
  expect(badFlag.stderr).toContain('--eviction-hard "memory.free<1Gi"');
  const wrongCa = await run(process.execPath, [
    AGENT,
    '--data-dir',
    join(dir, 'y'),
    '--server',
    `https://127.0.0.1:${t.cp.port}`,
    '--token',
    `K10${'0'.repeat(64)}::abcdef.${'a'.repeat(32)}`,
  ]).catch((e) => e);
  expect(wrongCa.code).toBe(1);
  expect(wrongCa.stderr).toContain('does not match the join token');
}, 90_000);

it('--help shows each default once, and documents KUBELAB_TOKEN without ever showing its value', async () => {
  const secret = `K10${'0'.repeat(64)}::abcdef.${'b'.repeat(32)}`;
  const { stdout } = await run(process.execPath, [AGENT, '--help'], {
    env: { ...process.env, KUBELAB_TOKEN: secret },
  });
  const nodeName = stdout.split('\n').find((l) => l.trimStart().startsWith('--node-name'))!;
  expect(nodeName.match(/\(default:/g)).toHaveLength(1);
  expect(nodeName).toContain("this machine's hostname");
  const tokenHelp = stdout.split('\n').find((l) => l.trimStart().startsWith('--token'))!;
  expect(tokenHelp).toContain('env: KUBELAB_TOKEN');
  expect(stdout).toContain(
    "KUBELAB_TOKEN='K10<hash>::<id>.<secret>' kubelab-agent --server https://10.0.0.2:6443",
  );
  expect(stdout).not.toContain(secret);
});
