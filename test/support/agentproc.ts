/**
 * Real agents as child processes, and the processes they leave behind: containers outlive
 * their agent by design, so tests find them by a marker in their command line and clean up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Container, Node, Pod, PodSpec } from '../../client/api/types.js';
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
  /** The agent's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
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
      // Info: a failing test's message tells the agent's story (joined, registered, …).
      '--log-level',
      'info',
      ...(options.args ?? []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: options.env ?? process.env },
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

/**
 * Waits for the Node to be Ready. Given the agent's process, fails at once if it exits, and
 * either way ends the message with the agent's last lines of stderr (what a user would read).
 */
export async function waitForNodeReady(client: Client, name: string, agent?: ChildProcess): Promise<void> {
  const ready = eventually(
    async () =>
      (await client.get('Node', name).catch(() => undefined))?.status?.conditions?.some(
        (c) => c.type === 'Ready' && c.status === 'True',
      ) ?? false,
    `node ${name} to be Ready`,
  );
  if (!agent) return void (await ready);
  const lastLines = () => `; the agent's last lines:\n${(agentLogs.get(agent) ?? []).slice(-20).join('\n')}`;
  let onExit: (() => void) | undefined;
  const exited = new Promise<never>((_, reject) => {
    onExit = () =>
      reject(
        new Error(`the agent exited (${agent.signalCode ?? agent.exitCode}) before node ${name} was Ready`),
      );
    if (agent.exitCode !== null || agent.signalCode !== null) onExit();
    else agent.once('exit', onExit);
  });
  try {
    await Promise.race([ready, exited]);
  } catch (err) {
    throw new Error(`${(err as Error).message}${lastLines()}`, { cause: err });
  } finally {
    agent.off('exit', onExit!);
    ready.catch(() => undefined);
  }
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

/** A Node as a small agent registers it (2 CPUs, 4 GiB, 10 pods), for a pod manager without its agent. */
export async function registerSmallNode(client: Client, name: string): Promise<void> {
  const resources = { cpu: '2', memory: '4Gi', pods: '10' };
  await client.create<Node>({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    status: { allocatable: resources, capacity: resources },
  });
}
