/**
 * --node-ip as a user meets it: a real agent process refuses an address that is not this
 * machine's (exit 1, one line saying why and what to do) before it joins — no Node, no stored
 * credential — and publishes one that is as the Node's InternalIP. Hollow nodes are not checked.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import type { Client } from '../../client/client.js';
import { internalIPs } from '../../agent/machine/common.js';
import {
  agentLogs,
  createJoinToken,
  killAgent,
  startAgentProcess,
  waitForNodeReady,
} from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

let t: TestControlPlane;
let admin: Client;
let dir: string;
const agents: ChildProcess[] = [];

beforeAll(async () => {
  t = await startTestControlPlane();
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-nodeip-'));
});
afterAll(async () => {
  for (const a of agents) await killAgent(a, 'SIGTERM');
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(nodeName: string, token: string, args: string[]): ChildProcess {
  const child = startAgentProcess({
    server: `127.0.0.1:${t.cp.port}`,
    dataDir: join(dir, nodeName),
    nodeName,
    token,
    args,
  });
  agents.push(child);
  return child;
}

function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** An address of no interface here: TEST-NET-2, or the next one if this machine has it. */
function notMine(): string {
  const mine = new Set(
    Object.values(networkInterfaces())
      .flatMap((a) => a ?? [])
      .map((a) => a.address),
  );
  for (let i = 7; ; i++) if (!mine.has(`198.51.100.${i}`)) return `198.51.100.${i}`;
}

const mine = internalIPs().filter((a) => !a.startsWith('169.254.') && !/^fe[89ab]/i.test(a));

it('refuses a loopback, multicast, all-zeros or foreign --node-ip before joining: exit 1, one line naming the flag and what to do', async () => {
  const token = await createJoinToken(t);
  const foreign = notMine();
  const cases: Array<[string, string]> = [
    ['127.0.0.1', 'is a loopback address'],
    ['224.0.0.1', 'is a multicast address'],
    ['0.0.0.0', 'is the unspecified address'],
    [foreign, "is not an address of any of this machine's network interfaces"],
  ];
  // In parallel: each is a process start, and none of them joins.
  const children = cases.map(([ip], i) => start(`refused-${i}`, token, ['--node-ip', ip]));
  const codes = await Promise.all(children.map(exitCode));
  for (const [i, [ip, why]] of cases.entries()) {
    const lines = agentLogs.get(children[i])!;
    expect(codes[i], lines.join('\n')).toBe(1);
    const line = lines.find((l) => l.startsWith('kubelab-agent: --node-ip'));
    expect(line, lines.join('\n')).toContain(`kubelab-agent: --node-ip ${ip} ${why}`);
    expect(line).toContain(
      mine.length
        ? `: use one of this machine's addresses (${mine.join(', ')}), or leave --node-ip out to publish ${internalIPs()[0]}`
        : ': this machine has no other address to offer',
    );
    expect(lines.filter((l) => l.includes('--node-ip'))).toHaveLength(1);
    // Before joining: no Node, and no credential kept for a later start.
    expect(existsSync(join(dir, `refused-${i}`, 'credentials.json'))).toBe(false);
    await expect(admin.get('Node', `refused-${i}`)).rejects.toThrow();
  }
}, 60_000);

it.skipIf(mine.length === 0)(
  "publishes a --node-ip that is this machine's as the Node's InternalIP",
  async () => {
    const ip = mine[mine.length - 1];
    const agent = start('own-ip', await createJoinToken(t), ['--node-ip', ip]);
    await waitForNodeReady(admin, 'own-ip', agent);
    const node = await admin.get('Node', 'own-ip');
    expect(node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address).toBe(ip);
    await killAgent(agent, 'SIGTERM');
  },
  60_000,
);

it('does not check --node-ip for hollow nodes, whose addresses are made up', async () => {
  const agent = start('unused', await createJoinToken(t), [
    '--hollow',
    '1',
    '--hollow-prefix',
    'hollow-ip',
    '--node-ip',
    '127.0.0.1',
  ]);
  await eventually(
    async () =>
      (await admin.get('Node', 'hollow-ip-0').catch(() => undefined))?.status?.addresses?.find(
        (a) => a.type === 'InternalIP',
      )?.address === '127.0.0.1',
    'the hollow node to publish 127.0.0.1',
  );
  expect(agent.exitCode).toBeNull();
  await killAgent(agent, 'SIGTERM');
}, 60_000);
