/**
 * Pods outlive what fails around them: SIGKILL the agent and start it again — nothing runs
 * twice, and an exit that happened while it was down is reported with its code; stop the
 * control plane for two minutes — the pods keep running, and once it is back their statuses
 * converge within 15 s.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Container, Pod, PodSpec } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import {
  createJoinToken,
  killAgent,
  killProcessesWith,
  processesWith,
  shellPod,
  startAgentProcess,
  waitForNodeReady,
} from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const NODE = 'lab-resilient';
const MARKER = `kubelab-e2e-res-${process.pid}`;
const OUTAGE_MS = 120_000;

let t: TestControlPlane;
let admin: Client;
let dir: string;
let port: number;
let agent: ChildProcess;

const startAgent = (token?: string) =>
  startAgentProcess({ server: `127.0.0.1:${port}`, dataDir: join(dir, 'agent'), nodeName: NODE, token });

async function startControlPlane(): Promise<void> {
  t = await startTestControlPlane({
    dataDir: join(dir, 'cp'),
    ...(port ? { listen: `127.0.0.1:${port}` } : {}),
  });
  port = t.cp.port;
  admin = t.client();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubelab-resilience-'));
  await startControlPlane();
  const token = await createJoinToken(t);
  agent = startAgent(token);
  await waitForNodeReady(admin, NODE, agent);
}, 60_000);

afterAll(async () => {
  await killAgent(agent);
  killProcessesWith(MARKER);
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const podHere = (name: string, script: string, spec?: Partial<PodSpec>, container?: Partial<Container>) =>
  shellPod(name, script, { node: NODE, marker: MARKER }, spec, container);
const get = (name: string) => admin.get('Pod', name, { namespace: 'default' });
const main = (p: Pod) => p.status?.containerStatuses?.find((c) => c.name === 'main');
const running = async (name: string) => (await get(name)).status?.phase === 'Running';

it('SIGKILL the agent and start it again: no second copy, and an exit while it was down is reported', async () => {
  await admin.create(podHere('steady', 'while true; do sleep 0.5; done'));
  await admin.create(podHere('short', 'sleep 4; exit 7', { restartPolicy: 'Never' }));
  await eventually(async () => (await running('steady')) && (await running('short')), 'both pods Running');
  const steadyBefore = main(await get('steady'))!;
  const pidsBefore = processesWith(`${MARKER}-steady`).sort();
  expect(pidsBefore.length).toBeGreaterThan(0);

  await killAgent(agent, 'SIGKILL');
  await eventually(
    async () => processesWith(`${MARKER}-short`).length === 0,
    'the short pod to exit',
    15_000,
  );
  // The agent is down: nobody has told the API yet.
  expect((await get('short')).status?.phase).toBe('Running');

  agent = startAgent();
  await eventually(async () => (await get('short')).status?.phase === 'Failed', 'the exit to be reported');
  const short = main(await get('short'))!;
  expect(short.state?.terminated?.exitCode).toBe(7);
  expect(short.restartCount).toBe(0);

  // Let the restarted agent settle, then check nothing ran twice.
  await new Promise((r) => setTimeout(r, 2_000));
  expect(processesWith(`${MARKER}-steady`).sort()).toEqual(pidsBefore);
  const steady = await get('steady');
  expect(steady.status?.phase).toBe('Running');
  expect(main(steady)?.containerID).toBe(steadyBefore.containerID);
  expect(main(steady)?.restartCount).toBe(0);
  expect(main(steady)?.state?.running?.startedAt).toBe(steadyBefore.state?.running?.startedAt);
}, 90_000);

it('stop the control plane for 2 minutes: pods keep running, and status converges within 15 s of its return', async () => {
  await admin.create(podHere('outage-loop', 'while true; do echo alive; sleep 1; done'));
  await admin.create(podHere('outage-exit', 'sleep 20; exit 4', { restartPolicy: 'Never' }));
  await eventually(
    async () => (await running('outage-loop')) && (await running('outage-exit')),
    'both pods Running',
  );
  const loopBefore = main(await get('outage-loop'))!;
  const loopPids = processesWith(`${MARKER}-outage-loop`).sort();

  await t.close();
  const stoppedAt = Date.now();
  while (Date.now() - stoppedAt < OUTAGE_MS) {
    await new Promise((r) => setTimeout(r, 10_000));
    expect(processesWith(`${MARKER}-outage-loop`).sort()).toEqual(loopPids);
  }
  expect(processesWith(`${MARKER}-outage-exit`)).toEqual([]);

  await startControlPlane();
  const convergedIn = await eventually(
    async () => (await get('outage-exit')).status?.phase === 'Failed',
    'the exit during the outage to be reported',
    15_000,
    100,
  );
  expect(convergedIn).toBeLessThanOrEqual(15_000);
  expect(main(await get('outage-exit'))?.state?.terminated?.exitCode).toBe(4);
  const loop = await get('outage-loop');
  expect(loop.status?.phase).toBe('Running');
  expect(main(loop)?.containerID).toBe(loopBefore.containerID);
  expect(main(loop)?.restartCount).toBe(0);
}, 240_000);
