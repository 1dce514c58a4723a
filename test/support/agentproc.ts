/**
 * Real agents as child processes, and the processes they leave behind: containers outlive
 * their agent by design, so tests find them by a marker in their command line and clean up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Container, Pod, PodSpec } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import type { TestControlPlane } from './controlplane.js';
import { eventually } from './wait.js';

export const AGENT_BIN = join(import.meta.dirname, '..', '..', 'bin', 'kubelab-agent.mjs');

export interface AgentProcessOptions {
  /** host:port of the control plane. */
  server: string;
  dataDir: string;
  nodeName: string;
  token?: string;
  args?: string[];
}

/** The agent's last lines of stderr, for a failing test's message. */
export const agentLogs = new WeakMap<ChildProcess, string[]>();

export function startAgentProcess(options: AgentProcessOptions): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      AGENT_BIN,
      '--server',
      `https://${options.server}`,
      ...(options.token ? ['--token', options.token] : []),
      '--data-dir',
      options.dataDir,
      '--node-name',
      options.nodeName,
      '--log-level',
      'warn',
      ...(options.args ?? []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const lines: string[] = [];
  agentLogs.set(child, lines);
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    lines.push(...text.split('\n').filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - 200));
  });
  return child;
}

/** Stops an agent process and waits until it is gone. */
export async function killAgent(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/** Pids of the processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (cmdline.includes(marker) && Number(entry) !== process.pid) pids.push(Number(entry));
  }
  return pids;
}

/** Kills every process whose command line contains `marker`. */
export function killProcessesWith(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** A join token for agents, created through the Tokens service as `kubelab token create` does. */
export async function createJoinToken(t: TestControlPlane): Promise<string> {
  const tokens = new TokensClient({
    server: `127.0.0.1:${t.cp.port}`,
    token: t.cp.adminToken,
    caPem: t.caPem,
  });
  try {
    return (await tokens.create()).token!;
  } finally {
    tokens.close();
  }
}

export async function waitForNodeReady(client: Client, name: string): Promise<void> {
  await eventually(
    async () =>
      (await client.get('Node', name).catch(() => undefined))?.status?.conditions?.some(
        (c) => c.type === 'Ready' && c.status === 'True',
      ) ?? false,
    `node ${name} to be Ready`,
  );
}

/**
 * A pod on `node` whose one container runs `script` in sh; `marker` ends its command line, so
 * processesWith(`${marker}-${name}`) finds its processes.
 */
export function shellPod(
  name: string,
  script: string,
  where: { node: string; marker: string },
  spec: Partial<PodSpec> = {},
  container: Partial<Container> = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: where.node,
      containers: [
        { name: 'main', command: ['sh', '-c', `${script} # ${where.marker}-${name}`], ...container },
      ],
      ...spec,
    },
  };
}
