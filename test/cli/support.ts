/**
 * Running labctl as a user does — `node bin/labctl.mjs …` as a child process — against a real
 * control plane on loopback, with its config in a temp folder ($HOME and $KUBELAB_CONFIG), and
 * optionally hollow nodes (in this process) that run their pods.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { defaultConfig } from '../../agent/config.js';
import { HollowFleet } from '../../agent/hollow.js';
import { quietLogger } from '../../agent/logger.js';
import type { DaemonSet } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import {
  createJoinToken,
  killAgent,
  killProcessesWith,
  startAgentProcess,
  waitForNodeReady,
} from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

export const LABCTL = join(import.meta.dirname, '..', '..', 'bin', 'labctl.mjs');

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliCluster {
  t: TestControlPlane;
  admin: Client;
  /** A temp folder: $HOME of every labctl run, holding .kubelab/config. */
  home: string;
  server: string;
  fleet?: HollowFleet;
  /** Runs labctl to the end. */
  run(args: string[], options?: RunOptions): Promise<Result>;
  /** Starts labctl and leaves it running (watch, follow). */
  start(args: string[], options?: RunOptions): Running;
  close(): Promise<void>;
}

export interface RunOptions {
  env?: Record<string, string>;
  input?: string;
}

export class Running {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (this.stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (this.stderr += d));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  /** Waits until stdout holds `text` (or matches it). */
  async waitFor(text: string | RegExp, what = String(text), ms = 30_000): Promise<void> {
    await eventually(
      () => (typeof text === 'string' ? this.stdout.includes(text) : text.test(this.stdout)),
      `${what} in labctl's output (so far: ${JSON.stringify(this.stdout.slice(-400))}, stderr ${JSON.stringify(this.stderr.slice(-400))})`,
      ms,
    );
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }
}

export function spawnLabctl(args: string[], env: NodeJS.ProcessEnv, input?: string): Running {
  const child = spawn(process.execPath, [LABCTL, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin!.end(input ?? '');
  return new Running(child);
}

export async function runLabctl(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<Result> {
  const r = spawnLabctl(args, env, input);
  const code = await r.exited;
  return { code, stdout: r.stdout, stderr: r.stderr };
}

/** The environment of a labctl run: this process's, minus any KUBELAB_* and editor settings. */
export function cleanEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('KUBELAB_') && k !== 'EDITOR' && k !== 'KUBE_EDITOR') env[k] = v;
  }
  return { ...env, HOME: home, KUBELAB_CONFIG: join(home, '.kubelab', 'config'), ...extra };
}

export function writeConfig(home: string, server: string, caPem: string, token: string): void {
  const dir = join(home, '.kubelab');
  mkdirSync(dir, { recursive: true });
  const cfg = {
    apiVersion: 'kubelab/v1',
    kind: 'Config',
    'current-context': 'test',
    contexts: [
      { name: 'test', server, 'certificate-authority-data': Buffer.from(caPem).toString('base64'), token },
    ],
  };
  writeFileSync(join(dir, 'config'), stringify(cfg), { mode: 0o600 });
}

export async function startCliCluster(
  options: { hollowNodes?: number; prefix?: string } = {},
): Promise<CliCluster> {
  const t = await startTestControlPlane();
  const admin = t.client();
  const home = mkdtempSync(join(tmpdir(), 'labctl-home-'));
  const server = `https://127.0.0.1:${t.cp.port}`;
  writeConfig(home, server, t.caPem, t.cp.adminToken);
  let fleet: HollowFleet | undefined;
  if (options.hollowNodes) {
    const prefix = options.prefix ?? 'lab';
    fleet = new HollowFleet({
      count: options.hollowNodes,
      prefix,
      servers: [server],
      dataDir: join(home, 'hollow'),
      joinToken: await createJoinToken(t),
      config: (name) => ({ ...defaultConfig(name), labels: { 'kubelab.io/pool': prefix } }),
      logger: quietLogger(),
      spreadMs: 20,
    });
    await fleet.start();
    await eventually(
      async () =>
        (await admin.list('Node')).items.filter((n) =>
          n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        ).length === options.hollowNodes,
      'the hollow nodes to be Ready',
    );
  }
  const env = (extra?: Record<string, string>) => cleanEnv(home, extra);
  return {
    t,
    admin,
    home,
    server,
    fleet,
    run: (args, o = {}) => runLabctl(args, env(o.env), o.input),
    start: (args, o = {}) => spawnLabctl(args, env(o.env), o.input),
    async close() {
      await fleet?.stop();
      await t.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

export interface RealNode {
  name: string;
  /** Ends the command line of every pod process, so they can be found and ended. */
  marker: string;
  /** Kills the agent and its pods' processes (they outlive an agent by design), removes its folder. */
  stop(): Promise<void>;
}

/** A real agent process joined to the cluster as `name` (Ready), running its pods as processes. */
export async function startRealNode(c: CliCluster, name: string): Promise<RealNode> {
  const marker = `labctl-${name}-${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), `labctl-${name}-`));
  const agent = startAgentProcess({
    server: `127.0.0.1:${c.t.cp.port}`,
    dataDir: join(dir, 'agent'),
    nodeName: name,
    token: await createJoinToken(c.t),
  });
  const stop = async () => {
    await killAgent(agent);
    killProcessesWith(marker);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForNodeReady(c.admin, name, agent);
  } catch (err) {
    await stop();
    throw err;
  }
  return { name, marker, stop };
}

/** A table's cells: columns are separated by three or more spaces (never inside a cell). */
export function tableCells(text: string): string[][] {
  return text
    .trimEnd()
    .split('\n')
    .map((l) => l.split(/ {3,}/));
}

/** Where each cell of a line starts. */
function cellStarts(line: string): number[] {
  const starts: number[] = [];
  for (let i = 0; i < line.length; i++) {
    if (line[i] !== ' ' && (i === 0 || line.slice(Math.max(0, i - 3), i) === '   ')) starts.push(i);
  }
  return starts;
}

/** Whether every row's cells start where the header's do (kubectl's alignment). */
export function isAligned(text: string): boolean {
  const lines = text.trimEnd().split('\n');
  const header = cellStarts(lines[0]);
  return lines.every((l) => {
    const starts = cellStarts(l);
    // A row may have empty trailing cells; those it has start under the header's.
    return starts.every((s, i) => s === header[i]);
  });
}

/** A DaemonSet whose pods are labelled app=<name>, in the default namespace. */
export function daemonSetObject(name: string, image: string): DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'agent', image }] } },
    },
  };
}
