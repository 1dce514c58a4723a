/**
 * The first hour, as a newcomer lives it and as README's quick start tells it: fresh folders,
 * `kubelab server`, then only what the server and the commands print — sign labctl in with
 * the line the banner gives, make a join token with `kubelab token create --data-dir` (no
 * --server: it finds the server that owns the folder), start the agent with the line that
 * prints, apply the example DaemonSet, watch it roll out, restart the agent (what an upgrade
 * or a reboot does) and see the DaemonSet ready again. Every command is the real binary, and
 * every assertion is on what it printed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/etcd.js';
import { processesWith } from '../support/agentproc.js';
import { eventually } from '../support/wait.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** How the printed commands run from a checkout: `npx labctl …` is `node bin/labctl.mjs …`. */
const BINARIES: Array<[RegExp, string]> = [
  [/\bnpx labctl\b/g, `node ${join(ROOT, 'bin', 'labctl.mjs')}`],
  [/\bnpx kubelab\b/g, `node ${join(ROOT, 'bin', 'kubelab.mjs')}`],
  [/(^|\s)kubelab-agent\b/g, `$1node ${join(ROOT, 'bin', 'kubelab-agent.mjs')}`],
];

const dirs: string[] = [];
const children: ChildProcess[] = [];
const tmp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const home = tmp('kubelab-newcomer-home-');
const serverDir = tmp('kubelab-newcomer-server-');
const agentDir = tmp('kubelab-newcomer-agent-');
/** Marks the DaemonSet's processes, so that they are found and cleaned up. */
const NODE_NAME = `newcomer-${process.pid}`;

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  // The pods' wrappers name the agent's folder; each leads its container's process group.
  for (const pid of processesWith(agentDir)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Output {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one command line as a user's shell would ($(cat …) included), in the checkout. */
function sh(line: string, env: Record<string, string> = {}): Promise<Output> {
  let command = line.trim();
  for (const [pattern, replacement] of BINARIES) command = command.replace(pattern, replacement);
  const child = spawn('sh', ['-c', command], {
    cwd: ROOT,
    env: { ...process.env, HOME: home, KUBELAB_CONFIG: join(home, 'config'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, ...out })));
}

/** Starts a long-running command line; its output so far is on the returned object. */
function start(line: string, env: Record<string, string> = {}): { child: ChildProcess; out: Output } {
  let command = line.trim();
  for (const [pattern, replacement] of BINARIES) command = command.replace(pattern, replacement);
  // `exec` after any VAR=value words, so that the process is the command itself.
  const [, assignments, rest] = /^((?:\w+='[^']*'\s+)*)([\s\S]*)$/.exec(command)!;
  const child = spawn('sh', ['-c', `${assignments}exec ${rest}`], {
    cwd: ROOT,
    env: { ...process.env, HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const out: Output = { code: null, stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out.stderr = (out.stderr + d.toString()).slice(-20_000)));
  child.on('exit', (code) => (out.code = code));
  return { child, out };
}

/** The printed line that starts with `prefix` (after its indentation). */
function lineStartingWith(text: string, prefix: string): string {
  const line = text.split('\n').find((l) => l.trim().startsWith(prefix));
  if (!line) throw new Error(`no line starting with "${prefix}" in:\n${text}`);
  return line.trim();
}

/** When the one pod's Ready condition last changed, from `labctl get pods -o json`. */
function readyTransition(json: string): string | undefined {
  const list = JSON.parse(json) as {
    items: Array<{ status?: { conditions?: Array<{ type: string; lastTransitionTime?: string }> } }>;
  };
  expect(list.items).toHaveLength(1);
  return list.items[0].status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

describe('a newcomer, following what kubelab prints', () => {
  it('starts a server, signs labctl in, adds a machine, runs a DaemonSet, and keeps it ready across an agent restart', async () => {
    // 1. The server (README: `npx kubelab server`; here on a free loopback port).
    const port = await freePort();
    const server = start(
      `npx kubelab server --data-dir ${serverDir} --listen 127.0.0.1:${port} --metrics-listen 127.0.0.1:0`,
    );
    await eventually(
      () => server.out.stdout.includes('Stop with Ctrl-C.') || server.out.code !== null,
      'the server to start',
      60_000,
    );
    const banner = server.out.stdout;
    expect(banner, server.out.stderr).toContain(`listening on    127.0.0.1:${port} (TLS)`);
    expect(banner).toContain('GUI: start the server with --ui to open it in a browser');

    // 2. Sign labctl in with the line the banner prints.
    const login = await sh(lineStartingWith(banner, 'npx labctl login'));
    expect(login.stderr).toBe('');
    expect(login.stdout).toMatch(new RegExp(`^Logged in to https://127\\.0\\.0\\.1:${port} as context "`));

    // 3. A join token from the command the banner prints: it finds this server by itself.
    const created = await sh(lineStartingWith(banner, 'npx kubelab token create'));
    expect(created.code, created.stderr).toBe(0);
    const joinToken = created.stdout.trim();
    expect(joinToken).toMatch(/^K10[0-9a-f]{64}::[a-z0-9]{6}\.[a-z0-9]{32}$/);
    const agentLine = lineStartingWith(created.stderr, 'KUBELAB_TOKEN=');
    expect(agentLine).toBe(`KUBELAB_TOKEN='${joinToken}' kubelab-agent --server https://127.0.0.1:${port}`);
    expect(created.stderr).toContain('no other machine can reach it');

    // 4. The agent, as printed (its own folder and name: this machine may run others).
    const agentArgs = ` --data-dir ${agentDir} --node-name ${NODE_NAME}`;
    let agent = start(agentLine + agentArgs);
    await eventually(
      async () => {
        const nodes = await sh('npx labctl get nodes');
        return new RegExp(`^${NODE_NAME} +Ready `, 'm').test(nodes.stdout);
      },
      `node ${NODE_NAME} to be Ready`,
      60_000,
    ).catch((err) => {
      throw new Error(`${(err as Error).message}; the agent said:\n${agent.out.stderr.slice(-3000)}`);
    });

    // 5. The example DaemonSet, rolled out.
    const applied = await sh('npx labctl apply -f examples/hello-daemonset.yaml');
    expect(applied.stdout).toBe('daemonset.apps/hello created\n');
    const rolledOut = await sh('npx labctl rollout status ds/hello --timeout 60s');
    expect(rolledOut.stdout, rolledOut.stderr).toContain('daemon set "hello" successfully rolled out');
    const pods = await sh('npx labctl get pods');
    expect(pods.stdout).toMatch(/^hello-[a-z0-9]{5} +1\/1 +Running +0 /m);
    const readySince = readyTransition((await sh('npx labctl get pods -l app=hello -o json')).stdout);

    // 6. The agent restarts (an upgrade, a reboot of the service): the pod keeps running and
    // is ready again within a status round, so a rollout status completes.
    await stop(agent.child);
    agent = start(`kubelab-agent --server https://127.0.0.1:${port}${agentArgs}`);
    await eventually(
      () => /adopted a running container/.test(agent.out.stderr),
      'the agent to adopt the pod',
      30_000,
    );
    const started = performance.now();
    const again = await sh('npx labctl rollout status ds/hello --timeout 30s');
    expect(again.stdout, again.stderr).toContain('daemon set "hello" successfully rolled out');
    expect(performance.now() - started).toBeLessThan(30_000);
    const podsAfter = await sh('npx labctl get pods');
    expect(podsAfter.stdout).toMatch(/^hello-[a-z0-9]{5} +1\/1 +Running +0 /m);
    // Never not ready in between: the Ready condition did not change.
    expect(readyTransition((await sh('npx labctl get pods -l app=hello -o json')).stdout)).toBe(readySince);

    // 7. Done: deleting the DaemonSet stops its pod (labctl waits until it is gone).
    const deleted = await sh('npx labctl delete ds hello');
    expect(deleted.stdout).toContain('daemonset.apps "hello" deleted');
    await stop(agent.child);
    await stop(server.child);
  }, 300_000);
});
