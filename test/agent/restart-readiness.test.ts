/**
 * Readiness across an agent restart, with a real agent process, real container processes and
 * a real control plane (controllers on): the restarted agent adopts what runs, and a container
 * without a readiness probe is ready again as soon as the agent's first status round is
 * written — the pod Ready, its DaemonSet counting it — while a container with a readiness
 * probe is probed again and follows it.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isPodReady } from '../../client/api/pods.js';
import type { DaemonSet, Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import {
  agentLogs,
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

const NODE = 'lab-readiness';
const MARKER = `kubelab-readiness-${process.pid}`;

let t: TestControlPlane;
let admin: Client;
let dir: string;
let agent: ChildProcess;

const startAgent = (token?: string) =>
  startAgentProcess({ server: `127.0.0.1:${t.cp.port}`, dataDir: join(dir, 'agent'), nodeName: NODE, token });

beforeAll(async () => {
  t = await startTestControlPlane();
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-readiness-'));
  agent = startAgent(await createJoinToken(t));
  await waitForNodeReady(admin, NODE, agent);
}, 60_000);

afterAll(async () => {
  await killAgent(agent);
  killProcessesWith(MARKER);
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const loop = 'while true; do sleep 1; done';
const get = (name: string) => admin.get('Pod', name, { namespace: 'default' });
const dsStatus = async () => (await admin.get('DaemonSet', 'steady-ds', { namespace: 'default' })).status;
const dsPod = async () =>
  (await admin.list('Pod', { namespace: 'default', labelSelector: 'app=steady-ds' })).items[0];

function daemonSet(): DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'steady-ds', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'steady-ds' } },
      template: {
        metadata: { labels: { app: 'steady-ds' } },
        spec: {
          containers: [{ name: 'main', command: ['sh', '-c', `${loop} # ${MARKER}-ds`] }],
        },
      },
    },
  };
}

/**
 * Tells the API the pod is not ready, as an agent restarted before this fix left it: only the
 * restarted agent's own status round can make it Ready again, so seeing it Ready proves that
 * round computed it ready (a stale Ready from before the restart could not pass for it).
 */
async function reportNotReady(pod: Pod): Promise<void> {
  const status = structuredClone(pod.status!);
  for (const c of status.containerStatuses ?? []) {
    c.ready = false;
    c.started = false;
  }
  for (const c of status.conditions ?? []) {
    if (c.type === 'Ready' || c.type === 'ContainersReady') {
      c.status = 'False';
      c.reason = 'ContainersNotReady';
    }
  }
  await admin.updateStatus({ ...pod, status });
}

it('after the agent restarts, pods without probes are Ready again at its first status round, and probed pods follow their probes', async () => {
  const readyFile = join(dir, 'probed-is-ready');
  writeFileSync(readyFile, '');
  await admin.create(daemonSet());
  await admin.create(shellPod('steady', loop, { node: NODE, marker: MARKER }));
  await admin.create(
    shellPod(
      'probed',
      loop,
      { node: NODE, marker: MARKER },
      {},
      { readinessProbe: { exec: { command: ['test', '-f', readyFile] }, periodSeconds: 1 } },
    ),
  );
  await eventually(
    async () =>
      isPodReady(await get('steady')) &&
      isPodReady(await get('probed')) &&
      (await dsStatus())?.numberReady === 1,
    'both pods and the DaemonSet pod Ready',
  );

  const pids = () => ['steady', 'probed', 'ds'].map((name) => processesWith(`${MARKER}-${name}`).sort());
  const pidsBefore = pids();
  expect(pidsBefore.every((p) => p.length > 0)).toBe(true);

  // What `systemctl restart kubelab-agent` does; the containers run on (KillMode=process).
  await killAgent(agent, 'SIGTERM');
  for (const pod of [await get('steady'), await get('probed'), await dsPod()]) await reportNotReady(pod);
  await eventually(async () => (await dsStatus())?.numberReady === 0, 'the DaemonSet to count 0 ready');

  agent = startAgent();
  await eventually(
    () => (agentLogs.get(agent) ?? []).some((l) => l.includes('adopted a running container')),
    'the restarted agent to adopt the containers',
  );
  // One status round: the agent writes the pods' statuses once it has listed them (the pod
  // status manager's resync, 5 s, is the longest it may take), well within this.
  await eventually(
    async () => isPodReady(await get('steady')) && isPodReady(await dsPod()),
    'the pods without probes to be Ready again',
    10_000,
  );
  const steady = (await get('steady')).status!.containerStatuses![0];
  expect(steady.ready).toBe(true);
  expect(steady.started).toBe(true);
  expect(steady.restartCount).toBe(0);
  await eventually(
    async () => (await dsStatus())?.numberReady === 1,
    'the DaemonSet to count 1 ready',
    10_000,
  );
  // Adopted, not started again: the same processes run.
  expect(pids()).toEqual(pidsBefore);
  expect((await dsPod()).status!.containerStatuses![0].restartCount).toBe(0);

  // The probed pod is probed again: Ready once its probe passes, not ready once it fails.
  await eventually(async () => isPodReady(await get('probed')), 'the probed pod to be Ready again', 10_000);
  unlinkSync(readyFile);
  await eventually(async () => !isPodReady(await get('probed')), 'the failing probe to make it not ready');
  expect((await get('probed')).status!.containerStatuses![0].ready).toBe(false);
}, 90_000);
