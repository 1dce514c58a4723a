/**
 * End to end with a real agent process: SIGKILL it and the control plane marks its node
 * Unknown and taints it unreachable after the grace period, as seen through the API; start it
 * again and the node is Ready, the taint gone, and its pod was not evicted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Node, Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const AGENT = join(import.meta.dirname, '..', '..', 'bin', 'kubelab-agent.mjs');
const GRACE_MS = 6_000;
const PERIOD_MS = 500;
const RENEW_MS = 1_000;

let t: TestControlPlane;
let admin: Client;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  t = await startTestControlPlane({
    controllerConfig: {
      nodeLifecycle: {
        monitorPeriodMs: PERIOD_MS,
        monitorGracePeriodMs: GRACE_MS,
        startupGracePeriodMs: GRACE_MS,
      },
    },
  });
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-lifecycle-'));
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

function startAgent(token?: string, name = 'lab-e2e'): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      AGENT,
      '--server',
      `https://127.0.0.1:${t.cp.port}`,
      ...(token ? ['--token', token] : []),
      '--data-dir',
      join(dir, name),
      '--node-name',
      name,
      '--node-lease-duration',
      `${(RENEW_MS * 4) / 1000}s`,
      '--node-status-update-frequency',
      '1s',
      '--log-level',
      'warn',
    ],
    { stdio: 'ignore' },
  );
  children.push(child);
  return child;
}

const ready = async () =>
  (await admin.get('Node', 'lab-e2e')).status?.conditions?.find((c) => c.type === 'Ready')?.status;
const noExecute = async () =>
  ((await admin.get('Node', 'lab-e2e')).spec?.taints ?? [])
    .filter((x) => x.effect === 'NoExecute')
    .map((x) => x.key);

it('a killed agent makes its node Unknown and unreachable; a restarted one brings it back with its pod', async () => {
  const tokens = new TokensClient({
    server: `127.0.0.1:${t.cp.port}`,
    token: t.cp.adminToken,
    caPem: t.caPem,
  });
  const token = (await tokens.create()).token!;
  tokens.close();

  // Two machines: with only one, its loss would look like the control plane's own network
  // failing (every zone down), and Kubernetes then taints nothing.
  startAgent(token, 'lab-other');
  const agent = startAgent(token);
  await eventually(async () => (await ready()) === 'True', 'the node to be Ready');
  await eventually(
    async () =>
      (await admin.get('Node', 'lab-other')).status?.conditions?.some(
        (c) => c.type === 'Ready' && c.status === 'True',
      ) ?? false,
    'the other node to be Ready',
  );
  await admin.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: { nodeName: 'lab-e2e', containers: [{ name: 'web', image: 'nginx' }] },
  });
  // Healthy for longer than the grace period: no false alarm.
  await new Promise((r) => setTimeout(r, GRACE_MS + 1_000));
  expect(await ready()).toBe('True');
  expect(await noExecute()).toEqual([]);

  agent.kill('SIGKILL');
  const unknownAfter = await eventually(async () => (await ready()) === 'Unknown', 'Ready=Unknown');
  // Its last heartbeat was at most one renew interval before the kill.
  expect(unknownAfter).toBeGreaterThanOrEqual(GRACE_MS - RENEW_MS);
  expect(unknownAfter).toBeLessThanOrEqual(GRACE_MS + PERIOD_MS + 2_000);
  const node = await admin.get('Node', 'lab-e2e');
  expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.message).toBe(
    'Kubelet stopped posting node status.',
  );
  await eventually(
    async () => (await noExecute()).includes('node.kubernetes.io/unreachable'),
    'the unreachable taint',
    PERIOD_MS + 3_000,
  );
  const pod = await admin.get('Pod', 'web', { namespace: 'default' });
  expect(pod.metadata?.deletionTimestamp).toBeUndefined();

  startAgent();
  await eventually(async () => (await ready()) === 'True', 'the node to be Ready again');
  await eventually(async () => (await noExecute()).length === 0, 'the taint to go');
  const after = await admin.get('Node', 'lab-e2e');
  expect((after as Node).spec?.taints ?? []).toEqual([]);
  const survivor = await admin.get('Pod', 'web', { namespace: 'default' });
  expect(survivor.metadata?.deletionTimestamp).toBeUndefined();
  expect(survivor.metadata?.uid).toBe(pod.metadata?.uid);
  await eventually(
    async () =>
      (await admin.list('Event', { namespace: 'default' })).items.some(
        (e) => e.reason === 'TaintManagerEviction' && e.message === 'Cancelling deletion of Pod default/web',
      ),
    'the cancellation event',
    5_000,
  );
}, 90_000);
