/**
 * A pod deleted while the agent starts its containers, with real processes on a real control
 * plane: the container being started when the deletion arrives is stopped, and the ones after
 * it are never started — no process, no Started event — as the kubelet cancels a pod's sync
 * once it starts terminating.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { quietLogger } from '../../agent/logger.js';
import { PodManager } from '../../agent/pods/manager.js';
import { machineRuntimes, type PodRuntimes } from '../../agent/pods/runtimes.js';
import type { Runtime } from '../../agent/runtime/types.js';
import { isNotFound } from '../../client/api/errors.js';
import type { Event, Pod } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client } from '../../client/client.js';
import { EventRecorder } from '../../client/events/recorder.js';
import { inProcessClient } from '../../client/inprocess.js';
import { realClock } from '../../client/util/clock.js';
import { killProcessesWith, processesWith, registerSmallNode } from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const NODE = 'lab-midsync';
const MARKER = `kubelab-midsync-${process.pid}`;

let t: TestControlPlane;
let admin: Client;
let dataDir: string;
let runtimes: PodRuntimes;
let informers: SharedInformerFactory;
let manager: PodManager;

beforeEach(async () => {
  t = await startTestControlPlane({ controllers: false });
  admin = t.cp.client();
  await registerSmallNode(admin, NODE);
  dataDir = mkdtempSync(join(tmpdir(), 'kubelab-midsync-'));
});

afterEach(async () => {
  await manager?.stop();
  informers?.shutdown();
  runtimes?.close();
  killProcessesWith(MARKER);
  await t.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it('starts no further container of a pod deleted while one was being started', async () => {
  const logger = quietLogger();
  runtimes = await machineRuntimes({ dataDir, logger, images: false });
  const real = runtimes.processes.runtime;
  // The start of `first` is held until the agent has heard of the deletion.
  const started: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const gated: Runtime = {
    start: async (spec) => {
      started.push(spec.name);
      if (spec.name === 'first') await held;
      return real.start(spec);
    },
    stop: (c, grace) => real.stop(c, grace),
    recover: () => real.recover(),
    removePod: (uid) => real.removePod(uid),
  };
  const node = inProcessClient(t.cp.api, { name: `system:node:${NODE}`, role: 'node', nodeName: NODE });
  informers = new SharedInformerFactory(node, { clock: realClock, logger });
  manager = new PodManager({
    client: node,
    nodeName: NODE,
    clock: realClock,
    logger,
    recorder: new EventRecorder(node, { component: 'kubelab-agent', host: NODE }),
    processes: { runtime: gated, scheme: 'process' },
    hostIP: () => '10.0.0.9',
    informers,
  });
  await manager.start();
  // Registered after the manager's handler: it hears of each change after the manager did;
  // the next turn lets the manager's handling of that change finish.
  informers.informerFor('Pod', { fieldSelector: `spec.nodeName=${NODE}` }).addEventHandler({
    onUpdate: (_old, p) => {
      if (p.metadata?.name === 'two' && p.metadata.deletionTimestamp) setImmediate(release);
    },
  });

  // A loop, so that the shell (whose command line has the marker) stays the container's process.
  const sleeper = (name: string) => ({
    name,
    command: ['sh', '-c', `while :; do sleep 1; done # ${MARKER}-${name}`],
  });
  await admin.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'two', namespace: 'default' },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 5,
      containers: [sleeper('first'), sleeper('second')],
    },
  });
  await eventually(() => started.includes('first'), 'the agent to start the first container');
  await admin.delete('Pod', 'two', { namespace: 'default' });

  await eventually(
    async () =>
      await admin.get('Pod', 'two', { namespace: 'default' }).then(
        () => false,
        (err: unknown) => isNotFound(err),
      ),
    'the pod to be gone',
  );
  expect(started).toEqual(['first']);
  expect(processesWith(`${MARKER}-second`)).toEqual([]);
  expect(processesWith(`${MARKER}-first`)).toEqual([]);
  // What the pod's events tell: the first container started and was stopped; the second,
  // nothing at all.
  const events = async () =>
    (await admin.list('Event', { namespace: 'default' })).items.filter(
      (e: Event) => e.involvedObject?.name === 'two',
    );
  await eventually(
    async () => (await events()).some((e) => e.message === 'Stopping container first'),
    'the Killing event of the first container',
  );
  expect((await events()).filter((e) => e.message?.includes('second'))).toEqual([]);
}, 30_000);
