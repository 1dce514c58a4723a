/**
 * Pods on a real agent process, as a user sees them through the API: a long-running shell
 * loop with its log followed through the control plane, restart policies with crash-loop
 * backoff, graceful deletion (SIGTERM, the grace period, then SIGKILL), readiness and liveness
 * probes, and a node credential kept to its own pods' logs.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isApiError } from '../../client/api/errors.js';
import type { Container, Pod, PodSpec } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { grpcClient } from '../../client/grpc/transport.js';
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

const NODE = 'lab-pods';
const MARKER = `kubelab-e2e-${process.pid}`;

let t: TestControlPlane;
let admin: Client;
let dir: string;
let agent: ChildProcess;

beforeAll(async () => {
  t = await startTestControlPlane();
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-pods-'));
  const token = await createJoinToken(t);
  agent = startAgentProcess({
    server: `127.0.0.1:${t.cp.port}`,
    dataDir: join(dir, 'agent'),
    nodeName: NODE,
    token,
  });
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
const condition = (p: Pod, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;
const main = (p: Pod) => p.status?.containerStatuses?.find((c) => c.name === 'main');

async function readLines(stream: AsyncIterable<Buffer>, n: number): Promise<string[]> {
  let text = '';
  for await (const chunk of stream) {
    text += chunk.toString();
    if (text.split('\n').length > n) break;
  }
  return text.split('\n').slice(0, n);
}

it('runs a shell loop: Running and Ready, with its log followed through the API', async () => {
  await admin.create(podHere('loop', 'while true; do echo "tick $(date +%s)"; sleep 1; done'));
  await eventually(async () => (await get('loop')).status?.phase === 'Running', 'the pod to be Running');
  const pod = await get('loop');
  expect(pod.status?.hostIP).toBeTruthy();
  expect(pod.status?.startTime).toBeTruthy();
  for (const type of ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready']) {
    expect(condition(pod, type), type).toBe('True');
  }
  expect(main(pod)?.state?.running?.startedAt).toBeTruthy();
  expect(main(pod)?.containerID).toMatch(/^process:\/\//);

  const stream = await admin.logs('default', 'loop', { follow: true, timestamps: true });
  const opened = Date.now();
  const lines = await readLines(stream, 4);
  stream.stop();
  // Following: the stream waited for lines written after it opened.
  expect(Date.now() - opened).toBeGreaterThanOrEqual(1_000);
  for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\S+Z tick \d+$/);

  const tail = await admin.logs('default', 'loop', { tailLines: 1 });
  const all: Buffer[] = [];
  for await (const chunk of tail) all.push(chunk);
  expect(Buffer.concat(all).toString()).toMatch(/^tick \d+\n$/);
}, 60_000);

it('OnFailure restarts a container exiting 3 with growing backoff; Never fails the pod with exit code 3', async () => {
  await admin.create(podHere('crash', 'echo "boom"; exit 3', { restartPolicy: 'OnFailure' }));
  await admin.create(podHere('once', 'echo "bye"; exit 3', { restartPolicy: 'Never' }));

  await eventually(async () => (await get('once')).status?.phase === 'Failed', 'the Never pod to fail');
  const once = main(await get('once'))!;
  expect(once.state?.terminated?.exitCode).toBe(3);
  expect(once.state?.terminated?.reason).toBe('Error');
  expect(once.restartCount).toBe(0);

  // restartCount as it changes, and when. As in Kubernetes the first restart is immediate;
  // then the waits grow: 10 s, 20 s, …
  const seen = new Map<number, number>();
  let backoffShown = false;
  const start = Date.now();
  await eventually(
    async () => {
      const c = main(await get('crash'));
      if (c?.state?.waiting?.reason === 'CrashLoopBackOff') backoffShown = true;
      const n = c?.restartCount ?? 0;
      if (!seen.has(n)) seen.set(n, Date.now() - start);
      return n >= 3;
    },
    'three restarts',
    70_000,
    100,
  );
  const first = seen.get(2)! - seen.get(1)!;
  const second = seen.get(3)! - seen.get(2)!;
  expect(backoffShown).toBe(true);
  expect(first).toBeGreaterThanOrEqual(8_000);
  expect(second).toBeGreaterThanOrEqual(first + 5_000);
  const crash = await get('crash');
  expect(crash.status?.phase).toBe('Running');
  // Between an exit and its restart the exit is the state; otherwise it is the last state.
  const lastExit = main(crash)?.lastState?.terminated ?? main(crash)?.state?.terminated;
  expect(lastExit?.exitCode).toBe(3);

  const previous = await admin.logs('default', 'crash', { previous: true });
  const text: Buffer[] = [];
  for await (const chunk of previous) text.push(chunk);
  expect(Buffer.concat(text).toString()).toBe('boom\n');
  await admin.delete('Pod', 'crash', { namespace: 'default' });
}, 100_000);

it('deleting a pod sends SIGTERM, waits the grace period, then SIGKILLs and removes the pod', async () => {
  const termFile = join(dir, 'term');
  // The trap records TERM and carries on: only SIGKILL ends it.
  await admin.create(
    podHere('graceful', `trap 'date +%s%N > ${termFile}' TERM; echo up; while true; do sleep 0.2; done`, {
      terminationGracePeriodSeconds: 3,
    }),
  );
  await eventually(async () => (await get('graceful')).status?.phase === 'Running', 'Running');
  expect(processesWith(`${MARKER}-graceful`).length).toBeGreaterThan(0);

  const deletedAt = Date.now();
  await admin.delete('Pod', 'graceful', { namespace: 'default' });
  await eventually(async () => existsSync(termFile), 'the process to record SIGTERM', 10_000);
  const termAt = Number(readFileSync(termFile, 'utf8').trim()) / 1e6;
  expect(termAt - deletedAt).toBeLessThan(3_000);

  await eventually(
    async () => {
      try {
        await get('graceful');
        return false;
      } catch (err) {
        return isApiError(err, 'NotFound');
      }
    },
    'the pod to be removed',
    20_000,
  );
  const goneAfter = Date.now() - deletedAt;
  expect(goneAfter).toBeGreaterThanOrEqual(3_000);
  expect(processesWith(`${MARKER}-graceful`)).toEqual([]);
}, 60_000);

it('readiness drives Ready; a failing liveness probe restarts the container', async () => {
  const ready = join(dir, 'ready');
  const alive = join(dir, 'alive');
  writeFileSync(alive, '');
  await admin.create(
    podHere(
      'probed',
      'while true; do sleep 0.5; done',
      {},
      {
        readinessProbe: { exec: { command: ['test', '-f', ready] }, periodSeconds: 1, failureThreshold: 1 },
        livenessProbe: { exec: { command: ['test', '-f', alive] }, periodSeconds: 1, failureThreshold: 2 },
      },
    ),
  );
  await eventually(async () => (await get('probed')).status?.phase === 'Running', 'Running');
  await new Promise((r) => setTimeout(r, 1_500));
  let pod = await get('probed');
  expect(condition(pod, 'Ready')).toBe('False');
  expect(main(pod)?.ready).toBe(false);

  writeFileSync(ready, '');
  await eventually(
    async () => condition(await get('probed'), 'Ready') === 'True',
    'Ready after the file appears',
  );
  unlinkSync(ready);
  await eventually(async () => condition(await get('probed'), 'Ready') === 'False', 'not Ready once it goes');

  unlinkSync(alive);
  await eventually(
    async () => (main(await get('probed'))?.restartCount ?? 0) >= 1,
    'a liveness restart',
    20_000,
  );
  writeFileSync(alive, '');
  pod = await get('probed');
  expect(main(pod)?.lastState?.terminated).toBeDefined();
  await admin.delete('Pod', 'probed', { namespace: 'default', gracePeriodSeconds: 1 });
}, 60_000);

it("a node credential reads its own pods' logs and is refused another node's", async () => {
  const creds = JSON.parse(readFileSync(join(dir, 'agent', 'credentials.json'), 'utf8')) as { token: string };
  const asNode = grpcClient({ server: `127.0.0.1:${t.cp.port}`, caPem: t.caPem, token: creds.token });
  try {
    const own = await asNode.logs('default', 'loop', { tailLines: 1 });
    for await (const chunk of own) expect(chunk.toString()).toMatch(/^tick/);
    await admin.create<Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'elsewhere', namespace: 'default' },
      spec: { nodeName: 'another-node', containers: [{ name: 'main', command: ['true'] }] },
    });
    const err = await asNode.logs('default', 'elsewhere').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isApiError(err, 'Forbidden')).toBe(true);
  } finally {
    asNode.close();
  }
}, 30_000);
