/**
 * An agent restart as its pods see it, with real processes on a real control plane: a new
 * pod manager on the same data directory carries on counting a crash-looping container's
 * restarts (the kubelet reads them back from the runtime's dead containers).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { quietLogger } from '../../agent/logger.js';
import { PodManager } from '../../agent/pods/manager.js';
import { machineRuntimes, type PodRuntimes } from '../../agent/pods/runtimes.js';
import type { Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { EventRecorder } from '../../client/events/recorder.js';
import { inProcessClient } from '../../client/inprocess.js';
import { realClock } from '../../client/util/clock.js';
import { killProcessesWith, registerSmallNode, shellPod } from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const NODE = 'lab-restart';
const MARKER = `kubelab-restart-${process.pid}`;

let t: TestControlPlane;
let admin: Client;
let dataDir: string;
let running: Array<{ manager: PodManager; runtimes: PodRuntimes }>;

beforeEach(async () => {
  t = await startTestControlPlane({ controllers: false });
  admin = t.cp.client();
  await registerSmallNode(admin, NODE);
  dataDir = mkdtempSync(join(tmpdir(), 'kubelab-pods-restart-'));
  running = [];
});

afterEach(async () => {
  for (const { manager, runtimes } of running) {
    await manager.stop();
    runtimes.close();
  }
  killProcessesWith(MARKER);
  await t.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** One run of the agent's pod manager: real processes, the node's own credential. */
async function startAgentPods(): Promise<PodManager> {
  const logger = quietLogger();
  const runtimes = await machineRuntimes({ dataDir, logger, images: false });
  const client = inProcessClient(t.cp.api, { name: `system:node:${NODE}`, role: 'node', nodeName: NODE });
  const manager = new PodManager({
    client,
    nodeName: NODE,
    clock: realClock,
    logger,
    recorder: new EventRecorder(client, { component: 'kubelab-agent', host: NODE }),
    processes: runtimes.processes,
    hostIP: () => '10.0.0.9',
    crashLoopBackoff: { initialMs: 500, maxMs: 5_000 },
  });
  running.push({ manager, runtimes });
  await manager.start();
  return manager;
}

async function stopAgentPods(manager: PodManager): Promise<void> {
  const i = running.findIndex((r) => r.manager === manager);
  const [{ runtimes }] = running.splice(i, 1);
  await manager.stop();
  runtimes.close();
}

const get = (name: string) => admin.get('Pod', name, { namespace: 'default' });
const main = (p: Pod) => p.status?.containerStatuses?.find((c) => c.name === 'main');
const restarts = async (name: string) => main(await get(name))?.restartCount ?? 0;

it('goes on counting the restarts of a crash-looping container after the agent restarts', async () => {
  const first = await startAgentPods();
  await admin.create(shellPod('crashy', 'exit 3', { node: NODE, marker: MARKER }));
  // Stopped while the container waits out its backoff: no instance runs, the last one ended.
  await eventually(async () => {
    const status = main(await get('crashy'));
    return (status?.restartCount ?? 0) >= 2 && status?.state?.waiting?.reason === 'CrashLoopBackOff';
  }, 'two restarts, then the backoff');
  await stopAgentPods(first);
  const before = await restarts('crashy');

  await startAgentPods();
  await eventually(async () => (await restarts('crashy')) > before, 'a restart by the new agent');
  const crashy = main(await get('crashy'))!;
  expect(crashy.restartCount).toBe(before + 1);
  expect(crashy.lastState?.terminated?.exitCode).toBe(3);
});
