/**
 * The pod garbage collector on a fake clock, against a real control plane: the test plays the
 * agents (registering nodes, posting pod status), moves the clock, and looks at what a user of
 * the API would see — which pods are left, and how the last of them looked.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client } from '../../client/client.js';
import { EventRecorder } from '../../client/events/recorder.js';
import { FakeClock } from '../../client/util/clock.js';
import type { PodGCConfig } from '../../main/controllers/podgc/config.js';
import { PodGCController } from '../../main/controllers/podgc/controller.js';
import { silentLogger } from '../../main/logging.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { settleController } from '../support/settle.js';

const QUARANTINE_S = 40;

let t: TestControlPlane;
let c: Client;
let clock: FakeClock;
let factory: SharedInformerFactory;
let podgc: PodGCController;
/** How each pod looked when it went, by name. */
let lastSeen: Map<string, Pod>;

async function start(config: Partial<PodGCConfig> = {}): Promise<void> {
  factory = new SharedInformerFactory(c);
  lastSeen = new Map();
  factory.informerFor('Pod').addEventHandler({ onDelete: (p) => void lastSeen.set(p.metadata!.name!, p) });
  podgc = new PodGCController({
    client: c,
    informers: factory,
    clock,
    logger: silentLogger(),
    config: { podGC: config },
    recorder: (component) => new EventRecorder(c, { component }, { clock }),
  });
  factory.start();
  await factory.waitForCacheSync(10_000);
  podgc.run(1);
  await settle();
}

beforeEach(async () => {
  t = await startTestControlPlane({ controllers: false });
  c = t.cp.client();
  clock = new FakeClock(Date.now());
});

afterEach(async () => {
  await podgc?.stop();
  factory?.shutdown();
  await t.close();
});

// --- playing the agents -------------------------------------------------------------------

async function register(name: string, ready = 'True', taints: Node['spec'] = {}): Promise<void> {
  await c.create<Node>({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: taints,
    status: { conditions: [{ type: 'Ready', status: ready }] },
  });
}

async function pod(
  name: string,
  opts: { nodeName?: string; phase?: string; finalizers?: string[] } = {},
): Promise<Pod> {
  const created = await c.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', ...(opts.finalizers ? { finalizers: opts.finalizers } : {}) },
    spec: {
      ...(opts.nodeName ? { nodeName: opts.nodeName } : {}),
      containers: [{ name: 'c', image: 'busybox' }],
    },
  });
  if (!opts.phase) return created;
  return c.updateStatus<Pod>({ ...created, status: { ...created.status, phase: opts.phase } });
}

async function finish(name: string, phase = 'Succeeded'): Promise<void> {
  const p = await c.get('Pod', name, { namespace: 'default' });
  await c.updateStatus<Pod>({ ...p, status: { ...p.status, phase } });
}

/** Waits for the wall clock's next second, so that the next pod is created a second later. */
async function nextSecond(): Promise<void> {
  const second = Math.floor(Date.now() / 1000);
  while (Math.floor(Date.now() / 1000) === second) await new Promise((r) => setTimeout(r, 20));
}

// --- moving time --------------------------------------------------------------------------

/** Waits until the controller is idle, its events are written and its caches hold what the API holds. */
const settle = () =>
  settleController({
    name: 'pod garbage collector',
    idle: () => podgc.idle(),
    client: c,
    factory,
    kinds: ['Node', 'Pod'],
  });

async function pass(seconds: number): Promise<void> {
  for (let s = 0; s < seconds; s++) {
    clock.advance(1000);
    await settle();
  }
}

const podNames = async () =>
  (await c.list('Pod', { namespace: 'default' })).items.map((p) => p.metadata!.name).sort();

// --- the tests ----------------------------------------------------------------------------

describe('pod GC: pods of a deleted node', () => {
  it('are removed once the node has been gone for the quarantine — not before, nor while it exists', async () => {
    await start();
    await register('lab-1');
    await register('lab-2');
    await pod('web', { nodeName: 'lab-1', phase: 'Running' });
    // Deleted while its machine was already off: Terminating, waiting for an agent that is gone.
    await pod('exporter', { nodeName: 'lab-1', phase: 'Running' });
    await c.delete('Pod', 'exporter', { namespace: 'default' });
    await pod('elsewhere', { nodeName: 'lab-2', phase: 'Running' });

    await pass(2 * QUARANTINE_S);
    expect(await podNames()).toEqual(['elsewhere', 'exporter', 'web']);

    await c.delete('Node', 'lab-1');
    await settle();
    await pass(QUARANTINE_S - 1);
    expect(await podNames()).toEqual(['elsewhere', 'exporter', 'web']);

    await pass(1);
    expect(await podNames()).toEqual(['elsewhere']);
    // What a user watching saw last: the pod failed, and why.
    for (const name of ['web', 'exporter']) {
      const last = lastSeen.get(name)!;
      expect(last.status?.phase).toBe('Failed');
      expect(last.status?.conditions?.find((x) => x.type === 'DisruptionTarget')).toMatchObject({
        status: 'True',
        reason: 'DeletionByPodGC',
        message: 'PodGC: node no longer exists',
      });
    }
  });

  it('stay when the node comes back within the quarantine', async () => {
    await start();
    await register('lab-1');
    await pod('web', { nodeName: 'lab-1', phase: 'Running' });
    await c.delete('Node', 'lab-1');
    await settle();
    await pass(QUARANTINE_S / 2);
    await register('lab-1');
    await settle();
    await pass(2 * QUARANTINE_S);
    expect(await podNames()).toEqual(['web']);
  });

  it('bound to a node that never existed, are removed after the quarantine too', async () => {
    await start();
    await pod('typo', { nodeName: 'no-such-node' });
    await pass(QUARANTINE_S - 1);
    expect(await podNames()).toEqual(['typo']);
    await pass(1);
    expect(await podNames()).toEqual([]);
  });
});

describe('pod GC: terminating pods no agent will finish', () => {
  it('a terminating pod that was never scheduled is marked Failed, and goes as soon as its finalizers do', async () => {
    await start();
    await pod('pending', { finalizers: ['example.com/hold'] });
    await c.delete('Pod', 'pending', { namespace: 'default' });
    await settle();
    const held = await c.get('Pod', 'pending', { namespace: 'default' });
    expect(held.metadata?.deletionTimestamp).toBeDefined();
    expect(held.status?.phase).toBe('Failed');

    await c.update<Pod>({ ...held, metadata: { ...held.metadata, finalizers: [] } });
    await settle();
    expect(await podNames()).toEqual([]);
  });

  it('terminating pods of a node tainted out-of-service are removed; those of a healthy node stay', async () => {
    await start();
    await register('dead', 'Unknown', {
      taints: [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }],
    });
    await register('healthy');
    for (const [name, nodeName] of [
      ['stuck', 'dead'],
      ['stopping', 'healthy'],
    ]) {
      await pod(name, { nodeName, phase: 'Running' });
      await c.delete('Pod', name, { namespace: 'default' });
    }
    // Not being deleted: the taint eviction controller decides about it, not pod GC.
    await pod('untouched', { nodeName: 'dead', phase: 'Running' });
    await settle();
    expect(await podNames()).toEqual(['stopping', 'untouched']);
    expect(lastSeen.get('stuck')?.status?.phase).toBe('Failed');
  });
});

describe('pod GC: finished pods beyond --terminated-pod-gc-threshold', () => {
  it('are removed oldest first until the threshold remain; running pods are never counted', async () => {
    await start({ terminatedPodThreshold: 2 });
    await register('lab-1');
    // Named against their age, so that oldest first is not alphabetical.
    for (const name of ['c', 'b', 'a']) {
      await pod(name, { nodeName: 'lab-1', phase: 'Running' });
      await nextSecond();
    }
    await pod('d', { nodeName: 'lab-1', phase: 'Running' });
    await pod('server', { nodeName: 'lab-1', phase: 'Running' });

    await finish('a');
    await finish('b', 'Failed');
    await settle();
    expect(await podNames()).toEqual(['a', 'b', 'c', 'd', 'server']);

    await finish('c');
    await settle();
    expect(await podNames()).toEqual(['a', 'b', 'd', 'server']);

    await finish('d');
    await settle();
    expect(await podNames()).toEqual(['a', 'd', 'server']);
  });

  it('are all kept with a threshold of 0', async () => {
    await start({ terminatedPodThreshold: 0 });
    await register('lab-1');
    for (const name of ['a', 'b', 'c']) await pod(name, { nodeName: 'lab-1', phase: 'Succeeded' });
    await settle();
    expect(await podNames()).toEqual(['a', 'b', 'c']);
  });
});
