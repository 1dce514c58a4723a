/**
 * A real agent process while its control plane is away, as its log and `labctl logs` show it:
 * the outage is one warning (what failed, and that it keeps trying), however many retries
 * follow, and its end one line with its length; the log tunnel is back with the first call
 * that gets through, not when its own back-off ends; and an agent started before its control
 * plane waits for it, saying so once, then joins.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Client } from '../../client/client.js';
import {
  agentLogs,
  createJoinToken,
  killAgent,
  killProcessesWith,
  shellPod,
  startAgentProcess,
  waitForNodeReady,
} from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const NODE = 'lab-away';
const MARKER = `kubelab-away-${process.pid}`;
const WARN = 40;

let t: TestControlPlane | undefined;
let dir: string;
let port = 0;
let agent: ChildProcess | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kubelab-away-'));
  port = 0;
});

afterEach(async () => {
  if (agent) await killAgent(agent);
  killProcessesWith(MARKER);
  await t?.close();
  t = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** The control plane, on the same port and data folder each time (its CA and tokens stay). */
async function startControlPlane(): Promise<Client> {
  t = await startTestControlPlane({
    dataDir: join(dir, 'cp'),
    ...(port ? { listen: `127.0.0.1:${port}` } : {}),
  });
  port = t.cp.port;
  return t.client();
}

async function stopControlPlane(): Promise<void> {
  await t!.close();
  t = undefined;
}

const startAgent = (args: string[], token?: string) =>
  (agent = startAgentProcess({
    server: `127.0.0.1:${port}`,
    dataDir: join(dir, 'agent'),
    nodeName: NODE,
    token,
    args,
  }));

/** The agent's structured log lines from `from` on (its plain lines are skipped). */
function logLines(
  child: ChildProcess,
  from = 0,
): Array<{ level: number; msg: string; [k: string]: unknown }> {
  return (agentLogs.get(child) ?? [])
    .slice(from)
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string });
}

it('logs an outage once and its end with its length, and serves logs again with the first call that gets through', async () => {
  let admin = await startControlPlane();
  const a = startAgent(['--log-level', 'debug'], await createJoinToken(t!));
  await waitForNodeReady(admin, NODE, a);
  await admin.create(
    shellPod('talker', 'while true; do echo hello; sleep 0.2; done', { node: NODE, marker: MARKER }),
  );
  await eventually(
    async () => (await admin.get('Pod', 'talker', { namespace: 'default' })).status?.phase === 'Running',
    'the pod to run',
  );

  const before = (agentLogs.get(a) ?? []).length;
  await stopControlPlane();
  // Many retries: each loop's back-off has grown (the lease's from 200 ms) while it was away.
  await eventually(
    () => logLines(a, before).filter((l) => l.msg === 'failed to renew the node lease').length >= 5,
    'five failed lease renewals',
  );
  const warnings = logLines(a, before).filter((l) => l.level >= WARN);
  const told = () =>
    logLines(a, before)
      .filter((l) => l.level >= 30)
      .map((l) => `${l.level} ${l.msg} ${String(l.err ?? '')}`)
      .join('\n');
  expect(
    warnings.map((l) => l.msg),
    told(),
  ).toEqual([
    'lost contact with the control plane; the pods keep running, and the agent keeps trying to reach it (with back-off, up to 30 s apart) until it answers',
  ]);
  // What failed, and where: the control plane's own words, and its address.
  expect(warnings[0].servers).toEqual([`https://127.0.0.1:${port}`]);
  expect(String(warnings[0].err)).toMatch(/shutting down|cannot reach/);

  const away = Date.now();
  admin = await startControlPlane();
  const logsOnce = t!.client({ retry: { attempts: 1 } });
  const renewedAfter = new Date(away).toISOString();
  await eventually(
    async () =>
      ((await admin.get('Lease', NODE, { namespace: 'kube-node-lease' })).spec?.renewTime ?? '') >
      renewedAfter,
    'the lease to be renewed again',
  );
  // The tunnel is back with that call, not seconds later when its own back-off ends.
  await eventually(
    async () => {
      const stream = await logsOnce.logs('default', 'talker', { tailLines: 1 });
      for await (const chunk of stream) if (chunk.toString().includes('hello')) return true;
      return false;
    },
    'labctl logs to work',
    3_000,
    100,
  );
  const back = logLines(a, before).find((l) => l.msg.startsWith('the control plane answers again after'));
  expect(back?.msg).toMatch(/^the control plane answers again after \d+ s away; /);
  expect(back?.awayMs).toBeGreaterThan(0);
  expect(
    logLines(a, before).filter((l) => l.level >= WARN),
    told(),
  ).toHaveLength(1);
}, 90_000);

it('waits for a control plane that is not there yet at the first join, saying so once, then joins; a refused token still ends it at once', async () => {
  await startControlPlane();
  const token = await createJoinToken(t!);
  // Right CA, unknown secret: the control plane answers, and no wait would change its answer.
  const refused = startAgent([], token.replace(/\.[a-z0-9]{32}$/, `.${'a'.repeat(32)}`));
  await eventually(() => refused.exitCode !== null, 'the agent with a refused token to exit');
  expect(refused.exitCode).toBe(1);
  expect((agentLogs.get(refused) ?? []).join('\n')).toContain('the join token was refused');
  await stopControlPlane();

  const a = startAgent([], token);
  const waiting = () => (agentLogs.get(a) ?? []).filter((l) => l.startsWith('kubelab-agent: waiting for'));
  await eventually(() => waiting().length > 0 || a.exitCode !== null, 'the agent to wait');
  expect(a.exitCode).toBeNull();
  expect(waiting()[0]).toContain(`waiting for the control plane at https://127.0.0.1:${port} (`);
  expect(waiting()[0]).toContain('trying again with back-off until it answers');

  const admin = await startControlPlane();
  await waitForNodeReady(admin, NODE, a);
  expect(waiting()).toHaveLength(1);
}, 60_000);
