/**
 * The agent's final delete of a pod (grace 0, once its containers have stopped) against a
 * control plane that goes away at that very moment: the delete fails, and the agent must try
 * it again until the pod is gone — while it runs on, and after a restart of its own (the pod
 * is terminal by then, and nothing of it runs). Otherwise the pod stays Terminating for ever,
 * and a namespace deletion waiting for it with it.
 *
 * The pod manager runs in this process on the hollow runtime, with the node's own credential
 * over gRPC, so the control plane can be stopped and started again on the same port and data
 * folder under it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { quietLogger } from '../../agent/logger.js';
import { PodManager } from '../../agent/pods/manager.js';
import { HollowRuntime } from '../../agent/runtime/hollow.js';
import { isNotFound } from '../../client/api/errors.js';
import type { Pod, PodSpec } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { EventRecorder } from '../../client/events/recorder.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { realClock } from '../../client/util/clock.js';
import { registerSmallNode } from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const NODE = 'lab-final';

let dir: string;
let port = 0;
let t: TestControlPlane | undefined;
let nodeToken = '';
let caPem = '';
const managers = new Set<PodManager>();
const clients = new Set<Client>();

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubelab-final-delete-'));
  port = 0;
  const admin = await startControlPlane();
  await registerSmallNode(admin, NODE);
  nodeToken = t!.cp.tokens.create({ name: `system:node:${NODE}`, role: 'node', nodeName: NODE }).token;
  caPem = t!.caPem;
});

afterEach(async () => {
  for (const m of managers) await m.stop();
  managers.clear();
  for (const c of clients) c.close();
  clients.clear();
  await t?.close();
  t = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** The control plane, on the same port and data folder each time (its CA and tokens stay). */
async function startControlPlane(): Promise<Client> {
  t = await startTestControlPlane({
    dataDir: join(dir, 'cp'),
    controllers: false,
    ...(port ? { listen: `127.0.0.1:${port}` } : {}),
  });
  port = t.cp.port;
  return t.cp.client();
}

async function stopControlPlane(): Promise<void> {
  const stopping = t!;
  t = undefined;
  await stopping.close();
}

/** The node's client; `onFinalDelete` runs just before each delete with a zero grace period. */
function nodeClient(onFinalDelete?: () => Promise<void>): {
  client: Client;
  failures: () => number;
  close: () => void;
} {
  const inner = grpcClient({ server: `127.0.0.1:${port}`, caPem, token: nodeToken });
  clients.add(inner);
  let failures = 0;
  const client = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'delete') {
        return async (...args: Parameters<Client['delete']>) => {
          if (args[2]?.gracePeriodSeconds === 0) await onFinalDelete?.();
          try {
            return await target.delete(...args);
          } catch (err) {
            if (args[2]?.gracePeriodSeconds === 0) failures++;
            throw err;
          }
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const close = () => {
    clients.delete(inner);
    inner.close();
  };
  return { client, failures: () => failures, close };
}

async function startAgentPods(client: Client): Promise<PodManager> {
  const manager = new PodManager({
    client,
    nodeName: NODE,
    clock: realClock,
    logger: quietLogger(),
    recorder: new EventRecorder(client, { component: 'kubelab-agent', host: NODE }),
    processes: { runtime: new HollowRuntime(realClock), scheme: 'hollow' },
    hostIP: () => '10.0.0.7',
    finalDeleteBackoff: { initialMs: 200, maxMs: 1_000 },
  });
  managers.add(manager);
  await manager.start();
  return manager;
}

async function stopAgentPods(manager: PodManager): Promise<void> {
  managers.delete(manager);
  await manager.stop();
}

function pod(name: string, spec: Partial<PodSpec> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName: NODE, containers: [{ name: 'main', command: ['serve'] }], ...spec },
  };
}

/** Whether the pod is gone from the API, as `labctl get pod` would say. */
async function gone(admin: Client, name: string): Promise<boolean> {
  try {
    await admin.get('Pod', name, { namespace: 'default' });
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

it('tries the final delete again, with back-off, until the pod is gone: a control plane away at that moment leaves nothing Terminating', async () => {
  let admin = t!.cp.client();
  let injected = false;
  const node = nodeClient(async () => {
    if (injected) return;
    injected = true;
    await stopControlPlane();
  });
  await startAgentPods(node.client);
  await admin.create(pod('web'));
  await eventually(
    async () => (await admin.get('Pod', 'web', { namespace: 'default' })).status?.phase === 'Running',
    'the pod to run',
  );

  await admin.delete('Pod', 'web', { namespace: 'default' });
  // The agent stops the container, and its final delete finds no control plane.
  await eventually(() => node.failures() >= 1, 'the final delete to fail');

  admin = await startControlPlane();
  // Still there, Terminating, until the agent's next try.
  await eventually(() => gone(admin, 'web'), 'the pod to be gone', 20_000);
  expect((await admin.list('Pod', { namespace: 'default' })).items).toEqual([]);
}, 60_000);

it('a restarted agent makes the final delete an earlier run could not: the terminal pod with a deletionTimestamp goes', async () => {
  let admin = t!.cp.client();
  let injected = false;
  const node = nodeClient(async () => {
    if (injected) return;
    injected = true;
    // The pod's last status (Failed) has reached the API by now: it is terminal when the
    // agent comes back.
    await eventually(
      async () => (await admin.get('Pod', 'job', { namespace: 'default' })).status?.phase === 'Failed',
      'the final status to be written',
    );
    await stopControlPlane();
  });
  const first = await startAgentPods(node.client);
  // restartPolicy Never: stopped by the deletion, it ends Failed — terminal, nothing running.
  await admin.create(pod('job', { restartPolicy: 'Never' }));
  await eventually(
    async () => (await admin.get('Pod', 'job', { namespace: 'default' })).status?.phase === 'Running',
    'the pod to run',
  );

  await admin.delete('Pod', 'job', { namespace: 'default' });
  await eventually(() => node.failures() >= 1, 'the final delete to fail');
  // The agent stops (restarts) while the control plane is away. Its last try ends first, and
  // its connection is closed: only the next run of the agent can remove the pod.
  await stopAgentPods(first);
  await first.settled();
  node.close();

  admin = await startControlPlane();
  const left = await admin.get('Pod', 'job', { namespace: 'default' });
  expect(left.metadata?.deletionTimestamp).toBeTruthy();
  expect(left.status?.phase).toBe('Failed');

  await startAgentPods(nodeClient().client);
  await eventually(() => gone(admin, 'job'), 'the pod to be gone', 20_000);
}, 60_000);
