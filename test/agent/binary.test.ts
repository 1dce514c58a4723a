/**
 * The single-executable agent for this machine (npm run build:agent) starts and joins a fresh
 * control plane. The other platforms' builds: crossbuild.test.ts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TokensClient } from '../../client/grpc/cluster.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

const root = join(import.meta.dirname, '..', '..');
const platform = `linux-${process.arch}`;
let out: string;
let t: TestControlPlane;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'kubelab-agentbin-'));
  execFileSync(
    process.execPath,
    [join(root, 'scripts', 'build-agent.mjs'), '--out', out, '--platforms', platform],
    {
      stdio: 'pipe',
    },
  );
  t = await startTestControlPlane();
}, 120_000);
afterAll(async () => {
  await t?.close();
  rmSync(out, { recursive: true, force: true });
});

it('is one file, with its checksum, that runs without Node installed alongside, and joins a cluster', async () => {
  const exe = join(out, `kubelab-agent-${platform}`);
  expect(
    execFileSync('sha256sum', ['--check', `kubelab-agent-${platform}.sha256`], { cwd: out }).toString(),
  ).toBe(`kubelab-agent-${platform}: OK\n`);
  // `kubelab-agent` is this machine's build, to try it here.
  expect(realpathSync(join(out, 'kubelab-agent'))).toBe(realpathSync(exe));
  // Nothing of the sources or node_modules is needed: run it from an empty folder, clean env.
  const env = { PATH: '/usr/bin:/bin', HOME: out };
  expect(execFileSync(exe, ['--version'], { cwd: out, env }).toString().trim()).toBe('0.1.0');
  expect(execFileSync(exe, ['--help'], { cwd: out, env }).toString()).toContain('--eviction-hard');

  const tokens = new TokensClient({
    server: `127.0.0.1:${t.cp.port}`,
    token: t.cp.adminToken,
    caPem: t.caPem,
  });
  const { token } = await tokens.create();
  tokens.close();
  const child = spawn(
    exe,
    [
      '--server',
      `https://127.0.0.1:${t.cp.port}`,
      '--token',
      token!,
      '--data-dir',
      join(out, 'data'),
      '--node-name',
      'from-binary',
      '--log-level',
      'warn',
    ],
    { cwd: out, env, stdio: 'pipe' },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d));
  child.stderr.on('data', (d: Buffer) => (output += d));
  try {
    const admin = t.client();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const node = await admin.get('Node', 'from-binary').catch(() => undefined);
      if (node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) break;
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`the agent binary did not register: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(output).toContain('node from-binary reporting to');
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  expect(child.exitCode).toBe(0);
}, 60_000);

it('ships an install script for systemd that says what it needs', async () => {
  const script = join(out, 'install.sh');
  expect(execFileSync('bash', [script, '--help']).toString()).toContain('--server https://10.0.0.2:6443');
  let stderr = '';
  try {
    execFileSync('bash', [script], { stdio: 'pipe' });
  } catch (err) {
    stderr = String((err as { stderr: Buffer }).stderr);
  }
  expect(stderr).toContain('--server https://<control plane>:6443 is required');
  expect(execFileSync('cat', [join(out, 'kubelab-agent.service')]).toString()).toContain('KillMode=process');
});
