/**
 * The events an agent records about its Node, as the kubelet's status setters record them, read
 * back through the API as `labctl get events` and the GUI read them: a new node reports its
 * pressure conditions but not its first Ready; every later change of a condition is one Normal
 * event (pressure too: the node's conditions say it is under pressure, not an event's type); and
 * a machine that rebooted since its Node was last written is one Warning Rebooted.
 *
 * In-process agents with a made-up machine (the hollow reader, under the test's control) on a
 * fake clock, against a real control plane over gRPC.
 */
import { afterEach, expect, it } from 'vitest';
import type { Event, Node } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { FakeClock } from '../../client/util/clock.js';
import { NodeAgent } from '../../agent/agent.js';
import { defaultConfig } from '../../agent/config.js';
import { quietLogger } from '../../agent/logger.js';
import { HollowMachineReader } from '../../agent/machine/hollow.js';
import { joinedNode, startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

async function controlPlane(): Promise<TestControlPlane> {
  const t = await startTestControlPlane();
  cleanups.push(() => t.close());
  return t;
}

/** A node credential for `nodeName`, as the agent gets it by joining. */
async function nodeClient(t: TestControlPlane, nodeName: string): Promise<Client> {
  return (await joinedNode(t, nodeName, cleanups)).client;
}

function startAgent(
  client: Client,
  nodeName: string,
  reader: HollowMachineReader,
  clock: FakeClock,
  health?: () => string[],
): NodeAgent {
  const agent = new NodeAgent({
    client,
    reader,
    config: defaultConfig(nodeName),
    logger: quietLogger(),
    clock,
    health,
  });
  cleanups.push(() => agent.stop());
  agent.start();
  return agent;
}

/** Polls `get` until `ok`, moving the agent's clock on 1 s a poll so its 10 s rounds come. */
async function eventually<T>(
  get: () => Promise<T>,
  ok: (v: T) => boolean,
  what: string,
  clock: FakeClock,
): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await get().catch(() => undefined);
    if (v !== undefined && ok(v)) return v;
    clock.advance(1000);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const status = (n: Node, type: string) => n.status?.conditions?.find((c) => c.type === type)?.status;

/** The events the agent recorded about its Node, oldest first, once its recorder has written them. */
async function agentEvents(admin: Client, agent: NodeAgent): Promise<Event[]> {
  await agent.recorder.flush();
  return (await admin.list('Event')).items
    .filter((e) => e.involvedObject?.kind === 'Node' && e.involvedObject.name === agent.nodeName)
    .filter((e) => e.source?.component === 'kubelab-agent')
    .sort(
      (a, b) =>
        (a.eventTime ?? '').localeCompare(b.eventTime ?? '') ||
        (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
    );
}

const summary = (events: Event[]) => events.map((e) => `${e.type} ${e.reason}`);

/**
 * Waits until the agent's events are exactly `expected` ("Type Reason", oldest first). Polled: a
 * status write is visible through the API a moment before the agent, having its answer, records
 * the events of that round.
 */
async function expectEvents(
  admin: Client,
  agent: NodeAgent,
  expected: string[],
  clock: FakeClock,
): Promise<Event[]> {
  let events: Event[] = [];
  for (let i = 0; i < 100; i++) {
    events = await agentEvents(admin, agent);
    if (JSON.stringify(summary(events)) === JSON.stringify(expected)) return events;
    clock.advance(1000);
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(summary(events)).toEqual(expected);
  return events;
}

it("reports a new node's pressure conditions but not its first Ready; every later change is one Normal event", async () => {
  const t = await controlPlane();
  const admin = t.client();
  const clock = new FakeClock(Date.now());
  const reader = new HollowMachineReader({ name: 'ev-1', now: () => clock.now() });
  let notReady: string[] = [];
  const agent = startAgent(await nodeClient(t, 'ev-1'), 'ev-1', reader, clock, () => notReady);

  await eventually(
    () => admin.get('Node', 'ev-1'),
    (n) => status(n, 'Ready') === 'True',
    'the node to be Ready',
    clock,
  );
  await expectEvents(
    admin,
    agent,
    [
      'Normal Starting',
      'Normal NodeHasSufficientMemory',
      'Normal NodeHasNoDiskPressure',
      'Normal NodeHasSufficientPID',
    ],
    clock,
  );

  // Memory, disk and PIDs run short: each is a Normal event, and the conditions tell it.
  reader.set({
    memoryAvailableBytes: 10 * MiB,
    nodefsAvailableBytes: 1 * GiB,
    processes: 32_700,
    processLimit: 32_768,
  });
  const pressured = await eventually(
    () => admin.get('Node', 'ev-1'),
    (n) => ['MemoryPressure', 'DiskPressure', 'PIDPressure'].every((c) => status(n, c) === 'True'),
    'the three pressure conditions',
    clock,
  );
  expect(status(pressured, 'Ready')).toBe('True');

  // The node stops being ready, then is ready again: NodeNotReady, then NodeReady, both Normal.
  notReady = ['the pod runtime does not answer'];
  await eventually(
    () => admin.get('Node', 'ev-1'),
    (n) => status(n, 'Ready') === 'False',
    'NotReady',
    clock,
  );
  notReady = [];
  await eventually(
    () => admin.get('Node', 'ev-1'),
    (n) => status(n, 'Ready') === 'True',
    'Ready again',
    clock,
  );

  const events = await expectEvents(
    admin,
    agent,
    [
      'Normal Starting',
      'Normal NodeHasSufficientMemory',
      'Normal NodeHasNoDiskPressure',
      'Normal NodeHasSufficientPID',
      'Normal NodeHasInsufficientMemory',
      'Normal NodeHasDiskPressure',
      'Normal NodeHasInsufficientPID',
      'Normal NodeNotReady',
      'Normal NodeReady',
    ],
    clock,
  );
  expect(events.every((e) => e.count === 1)).toBe(true);
  expect(events.find((e) => e.reason === 'NodeReady')?.message).toBe('Node ev-1 status is now: NodeReady');
}, 60_000);

it('takes over a Node that has no conditions yet: Starting (as at every start), no NodeReady', async () => {
  const t = await controlPlane();
  const admin = t.client();
  // Registered by someone else (an admin, a script) before the agent's first start.
  await admin.create<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'ev-2' } });
  const clock = new FakeClock(Date.now());
  const reader = new HollowMachineReader({ name: 'ev-2', now: () => clock.now() });
  const agent = startAgent(await nodeClient(t, 'ev-2'), 'ev-2', reader, clock);
  await eventually(
    () => admin.get('Node', 'ev-2'),
    (n) => status(n, 'Ready') === 'True',
    'the node to be Ready',
    clock,
  );
  await expectEvents(
    admin,
    agent,
    [
      'Normal Starting',
      'Normal NodeHasSufficientMemory',
      'Normal NodeHasNoDiskPressure',
      'Normal NodeHasSufficientPID',
    ],
    clock,
  );
}, 60_000);

it("records one Warning Rebooted when the machine's boot ID differs from the Node's, and none for a mere restart", async () => {
  const t = await controlPlane();
  const admin = t.client();
  const client = await nodeClient(t, 'ev-3');
  const clock = new FakeClock(Date.now());
  const bootedOnce = new HollowMachineReader({ name: 'ev-3', now: () => clock.now() });
  const firstBoot = (await bootedOnce.info()).bootID;

  // First start, then an agent restart on the same boot: no Rebooted.
  for (let run = 0; run < 2; run++) {
    const agent = startAgent(client, 'ev-3', bootedOnce, clock);
    await eventually(
      async () => agent.status.writes,
      (w) => w >= 1,
      'a status update',
      clock,
    );
    expect((await admin.get('Node', 'ev-3')).status?.nodeInfo?.bootID).toBe(firstBoot);
    await agent.stop();
    const reasons = (await agentEvents(admin, agent)).map((e) => e.reason);
    expect(reasons).not.toContain('Rebooted');
    // Every start says so, as the kubelet's "Starting kubelet." does.
    expect(reasons.filter((r) => r === 'Starting')).toHaveLength(run + 1);
  }

  // The machine rebooted: a new boot ID when the agent starts again.
  const rebooted = new HollowMachineReader({ name: 'ev-3', now: () => clock.now() });
  rebooted.setInfo({ bootID: '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9' });
  const agent = startAgent(client, 'ev-3', rebooted, clock);
  await eventually(
    () => admin.get('Node', 'ev-3'),
    (n) => n.status?.nodeInfo?.bootID === '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9',
    'the new boot ID on the Node',
    clock,
  );
  await eventually(
    async () => agent.status.writes,
    (w) => w >= 1,
    'the agent to have its answer',
    clock,
  );
  // Once: later rounds, and the periodic report 5 minutes on, find the Node's boot ID current.
  const writes = agent.status.writes;
  await eventually(
    async () => agent.status.writes,
    (w) => w > writes,
    'the periodic status report',
    clock,
  );
  const rebootEvents = (await agentEvents(admin, agent)).filter((e) => e.reason === 'Rebooted');
  expect(rebootEvents).toHaveLength(1);
  expect(rebootEvents[0]).toMatchObject({
    type: 'Warning',
    count: 1,
    message: 'Node ev-3 has been rebooted, boot id: 0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9',
    involvedObject: { kind: 'Node', name: 'ev-3' },
  });
}, 60_000);
