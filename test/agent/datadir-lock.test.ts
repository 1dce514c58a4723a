/**
 * One agent per data folder, with real agent processes: a second `kubelab-agent` on the folder
 * of a running one is refused at once, naming the folder and the running agent's pid, and the
 * running one is left alone; the lock of an agent that was killed does not stop the next one.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client } from '../../client/client.js';
import {
  agentLogs,
  createJoinToken,
  killAgent,
  startAgentProcess,
  waitForNodeReady,
} from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const NODE = 'lab-locked';

let t: TestControlPlane;
let admin: Client;
let dir: string;
const agents: ChildProcess[] = [];

beforeAll(async () => {
  t = await startTestControlPlane({ controllers: false });
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-datadir-lock-'));
});

afterAll(async () => {
  for (const a of agents) await killAgent(a);
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const dataDir = () => join(dir, 'agent');

function startAgent(token?: string): ChildProcess {
  const child = startAgentProcess({
    server: `127.0.0.1:${t.cp.port}`,
    dataDir: dataDir(),
    nodeName: NODE,
    token,
  });
  agents.push(child);
  return child;
}

it('refuses a second agent on the data folder of a running one, naming the folder and its pid', async () => {
  const first = startAgent(await createJoinToken(t));
  await waitForNodeReady(admin, NODE, first);

  const second = startAgent();
  await eventually(() => second.exitCode !== null, 'the second agent to give up');
  expect(second.exitCode).toBe(1);
  const said = (agentLogs.get(second) ?? []).join('\n');
  expect(said).toContain(
    `kubelab-agent: the data folder ${dataDir()} is in use by another kubelab-agent (pid ${first.pid})`,
  );
  expect(said).toContain('or give this one its own --data-dir');
  expect(said).not.toContain('reporting to');

  // The running agent goes on: its lease is still renewed after the refusal.
  const refusedAt = new Date().toISOString();
  await eventually(
    async () =>
      ((await admin.get('Lease', NODE, { namespace: 'kube-node-lease' })).spec?.renewTime ?? '') > refusedAt,
    'the first agent to renew its lease',
    20_000,
  );
  expect(first.exitCode).toBeNull();

  // Killed, it leaves its lock behind; the next agent starts anyway (the pid is gone).
  await killAgent(first, 'SIGKILL');
  const next = startAgent();
  await eventually(
    () =>
      (agentLogs.get(next) ?? []).some((l) => l.includes('"msg":"node already registered; taking it over"')),
    'the next agent to take over the node',
  );
  expect(next.exitCode).toBeNull();
}, 60_000);
