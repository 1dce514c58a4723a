/**
 * The taint eviction controller on a fake clock, against a real apiserver: the test taints
 * nodes and edits pods through the API as a user would, moves the clock, and looks at which
 * pods are being deleted and at the events on them. Follows Kubernetes' taint eviction
 * controller: an eviction once scheduled keeps its time when tolerations change, the first
 * matching toleration of each taint counts, and deleting a Node cancels nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Node, Pod, Taint, Toleration } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client } from '../../client/client.js';
import { EventRecorder } from '../../client/events/recorder.js';
import { FakeClock } from '../../client/util/clock.js';
import { clone } from '../../client/util/objects.js';
import { TaintEvictionController } from '../../main/controllers/tainteviction/controller.js';
import { silentLogger } from '../../main/logging.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';
import { settleController } from '../support/settle.js';

const GPU: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoExecute' };
const MAINTENANCE: Taint = { key: 'maintenance', effect: 'NoExecute' };
const tolerateGpu = (seconds?: number): Toleration => ({
  key: 'dedicated',
  operator: 'Equal',
  value: 'gpu',
  effect: 'NoExecute',
  ...(seconds !== undefined ? { tolerationSeconds: seconds } : {}),
});

let t: TestApiServer;
let c: Client;
let clock: FakeClock;
let factory: SharedInformerFactory;
let controller: TaintEvictionController;
let recorder: EventRecorder;

beforeEach(async () => {
  t = await startTestApiServer();
  c = t.admin;
  clock = new FakeClock();
  factory = new SharedInformerFactory(c);
  controller = new TaintEvictionController({
    client: c,
    informers: factory,
    clock,
    logger: silentLogger(),
    recorder: (component) => (recorder = new EventRecorder(c, { component }, { clock })),
  });
  factory.start();
  await factory.waitForCacheSync(10_000);
  controller.run(1);
  await settle();
});

afterEach(async () => {
  await controller.stop();
  factory.shutdown();
  await t.close();
});

// --- what a user does ---------------------------------------------------------------------

async function node(name: string, taints: Taint[]): Promise<void> {
  await c.create<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { taints } });
  await settle();
}

async function taintNode(name: string, taints: Taint[]): Promise<void> {
  const n = clone(await c.get('Node', name));
  n.spec = { ...n.spec, taints };
  await c.update(n);
  await settle();
}

async function pod(name: string, nodeName: string, tolerations: Toleration[]): Promise<void> {
  await c.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }], tolerations },
  });
  await settle();
}

/** Replaces the pod's own tolerations (the default ones admission added stay as they are). */
async function setTolerations(name: string, tolerations: Toleration[]): Promise<void> {
  const p = clone(await c.get('Pod', name, { namespace: 'default' }));
  const defaults = (p.spec!.tolerations ?? []).filter((x) => x.key?.startsWith('node.kubernetes.io/'));
  p.spec!.tolerations = [...tolerations, ...defaults];
  await c.update(p);
  await settle();
}

// --- what a user sees ---------------------------------------------------------------------

/** Pods not being deleted (a deleted pod of a node stays Terminating until its agent ends it). */
const running = async () =>
  (await c.list('Pod', { namespace: 'default' })).items
    .filter((p) => !p.metadata!.deletionTimestamp)
    .map((p) => p.metadata!.name)
    .sort();

const events = async () =>
  (await c.list('Event', { namespace: 'default' })).items
    .filter((e) => e.reason === 'TaintManagerEviction')
    .sort((a, b) => Number(a.metadata!.resourceVersion) - Number(b.metadata!.resourceVersion))
    .map((e) => `${e.involvedObject?.name}: ${e.message}`);

// --- moving time --------------------------------------------------------------------------

/** Waits until the controller is idle, its events are written and its caches hold what the API holds. */
const settle = () =>
  settleController({
    name: 'taint eviction controller',
    idle: () => controller.idle(),
    flush: () => recorder.flush(),
    client: c,
    factory,
    kinds: ['Node', 'Pod'],
  });

/** Moves the fake clock `seconds` on (due evictions fire on the way) and lets the controller act. */
async function pass(seconds: number): Promise<void> {
  clock.advance(seconds * 1000);
  await settle();
}

// --- the tests ----------------------------------------------------------------------------

describe('taint eviction: changing tolerations while an eviction is scheduled', () => {
  it('a lengthened toleration does not postpone it', async () => {
    await node('lab-1', [GPU]);
    await pod('web', 'lab-1', [tolerateGpu(60)]);
    await pass(10);
    await setTolerations('web', [tolerateGpu(3600)]);
    await pass(49);
    expect(await running()).toEqual(['web']);
    await pass(1);
    expect(await running()).toEqual([]);
    expect(await events()).toEqual(['web: Marking for deletion Pod default/web']);
  });

  it('a shortened toleration does not bring it forward', async () => {
    await node('lab-1', [GPU]);
    await pod('web', 'lab-1', [tolerateGpu(300)]);
    await pass(10);
    await setTolerations('web', [tolerateGpu(10)]);
    await pass(289);
    expect(await running()).toEqual(['web']);
    await pass(1);
    expect(await running()).toEqual([]);
  });

  it('a toleration made forever cancels it, with an event', async () => {
    await node('lab-1', [GPU]);
    await pod('web', 'lab-1', [tolerateGpu(60)]);
    await pass(10);
    await setTolerations('web', [tolerateGpu()]);
    expect(await events()).toEqual(['web: Cancelling deletion of Pod default/web']);
    await pass(3600);
    expect(await running()).toEqual(['web']);
  });

  it('a taint the pod no longer tolerates evicts it at once', async () => {
    await node('lab-1', [GPU]);
    await pod('web', 'lab-1', [tolerateGpu(300)]);
    await pass(10);
    await taintNode('lab-1', [GPU, MAINTENANCE]);
    await pass(1);
    expect(await running()).toEqual([]);
    expect(await events()).toEqual(['web: Marking for deletion Pod default/web']);
  });
});

describe('taint eviction: several tolerations matching one taint', () => {
  it("the first matching toleration's seconds count, even when a later one is shorter", async () => {
    await node('lab-1', [GPU]);
    await pod('web', 'lab-1', [
      tolerateGpu(300),
      { operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }, // matches too, shorter
    ]);
    await pod('short-first', 'lab-1', [
      { operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
      tolerateGpu(300),
    ]);
    await pass(60);
    expect(await running()).toEqual(['web']);
    await pass(239);
    expect(await running()).toEqual(['web']);
    await pass(1);
    expect(await running()).toEqual([]);
  });

  it('with several taints, the shortest of the tolerations used counts', async () => {
    await node('lab-1', [GPU, MAINTENANCE]);
    await pod('web', 'lab-1', [
      tolerateGpu(),
      { key: 'maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
    ]);
    await pass(29);
    expect(await running()).toEqual(['web']);
    await pass(1);
    expect(await running()).toEqual([]);
  });
});

describe('taint eviction: deleting a Node', () => {
  it('keeps the evictions already scheduled for its pods, even when they change, until it registers again untainted', async () => {
    await node('lab-1', [GPU]);
    await pod('web', 'lab-1', [tolerateGpu(60)]);
    await pod('db', 'lab-1', [tolerateGpu(60)]);
    await pass(10);
    await c.delete('Node', 'lab-1');
    await settle();
    expect([...controller.scheduled().keys()].sort()).toEqual(['default/db', 'default/web']);
    // A change to a pod whose node is gone changes nothing either.
    await setTolerations('web', [tolerateGpu(60), { key: 'zone', operator: 'Exists', effect: 'NoSchedule' }]);
    await pass(20);
    expect(await events()).toEqual([]);

    // The same machine registers again, untainted: what was scheduled on its pods is cancelled.
    await node('lab-1', []);
    expect(await events()).toEqual(
      expect.arrayContaining([
        'web: Cancelling deletion of Pod default/web',
        'db: Cancelling deletion of Pod default/db',
      ]),
    );
    await pass(60);
    expect(await running()).toEqual(['db', 'web']);
  });

  it('deletes its pods when their toleration runs out', async () => {
    await node('lab-1', [GPU]);
    await pod('web', 'lab-1', [tolerateGpu(60)]);
    await pass(10);
    await c.delete('Node', 'lab-1');
    await settle();
    await pass(49);
    expect(await running()).toEqual(['web']);
    await pass(1);
    expect(await running()).toEqual([]);
    expect(await events()).toEqual(['web: Marking for deletion Pod default/web']);
  });
});
