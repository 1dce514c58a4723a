/**
 * The node lifecycle and taint eviction controllers on a fake clock, against a real control
 * plane: the test plays the agents (posting status and renewing leases at fake times), moves
 * the clock a second at a time, and looks at what a user of the API would see.
 */
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  KubeObject,
  Lease,
  Node,
  NodeCondition,
  Pod,
  Taint,
  Toleration,
} from '../../client/api/types.js';
import { NODE_LEASE_NAMESPACE } from '../../client/api/wellknown.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client } from '../../client/client.js';
import { EventRecorder } from '../../client/events/recorder.js';
import { FakeClock, rfc3339, rfc3339Micro } from '../../client/util/clock.js';
import { retryOnConflict } from '../../client/util/retryonconflict.js';
import {
  DEFAULT_NODE_LIFECYCLE,
  type NodeLifecycleConfig,
} from '../../main/controllers/nodelifecycle/config.js';
import { NodeLifecycleController } from '../../main/controllers/nodelifecycle/controller.js';
import { TaintEvictionController } from '../../main/controllers/tainteviction/controller.js';
import type { ControllerContext } from '../../main/controllers/types.js';
import { silentLogger } from '../../main/logging.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';

let t: TestControlPlane;
let c: Client;
let clock: FakeClock;
let factory: SharedInformerFactory;
let lifecycle: NodeLifecycleController;
let eviction: TaintEvictionController;
let registry: Registry;
let recorders: EventRecorder[] = [];
/** Nodes whose "agent" is alive: they heartbeat every 10 s of fake time. */
const alive = new Set<string>();
let lastBeat = 0;

/** Starts the controllers; `client` is what they write through (the informers read with `c`). */
async function start(config: Partial<NodeLifecycleConfig> = {}, client: Client = c): Promise<void> {
  registry = new Registry();
  recorders = [];
  factory = new SharedInformerFactory(c);
  const ctx: ControllerContext = {
    client,
    informers: factory,
    clock,
    logger: silentLogger(),
    metrics: registry,
    config: { nodeLifecycle: config },
    recorder: (component) => {
      const recorder = new EventRecorder(c, { component }, { clock });
      recorders.push(recorder);
      return recorder;
    },
  };
  lifecycle = new NodeLifecycleController(ctx);
  eviction = new TaintEvictionController(ctx);
  factory.start();
  await factory.waitForCacheSync(10_000);
  lifecycle.run(1);
  eviction.run(1);
  await settle();
}

beforeEach(async () => {
  t = await startTestControlPlane({ controllers: false });
  c = t.cp.client();
  clock = new FakeClock(Date.now());
  alive.clear();
  lastBeat = clock.now();
});

afterEach(async () => {
  await lifecycle?.stop();
  await eviction?.stop();
  factory?.shutdown();
  await t.close();
});

// --- playing the agents -------------------------------------------------------------------

function condition(type: string, status: string, previous?: NodeCondition): NodeCondition {
  const now = rfc3339(clock.now());
  return {
    type,
    status,
    reason: status === 'True' && type === 'Ready' ? 'KubeletReady' : `Kubelet${type}`,
    message: `${type} is ${status}`,
    lastHeartbeatTime: now,
    lastTransitionTime: previous && previous.status === status ? previous.lastTransitionTime : now,
  };
}

/** Registers a node the way the agent does: the Node with its status, then its Lease. */
async function register(name: string, labels: Record<string, string> = {}, conditions = true): Promise<void> {
  await c.create<Node>({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
    status: conditions
      ? {
          conditions: [
            condition('Ready', 'True'),
            condition('MemoryPressure', 'False'),
            condition('DiskPressure', 'False'),
            condition('PIDPressure', 'False'),
          ],
        }
      : {},
  });
  if (conditions) {
    await c.create<Lease>({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: NODE_LEASE_NAMESPACE },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: rfc3339Micro(clock.now()) },
    });
    alive.add(name);
  }
}

async function renewLease(name: string): Promise<void> {
  const lease = await c.get('Lease', name, { namespace: NODE_LEASE_NAMESPACE });
  await c.update<Lease>({ ...lease, spec: { ...lease.spec, renewTime: rfc3339Micro(clock.now()) } });
}

/** Posts status as the agent would: every listed condition with a fresh heartbeat. */
async function postStatus(name: string, statuses: Record<string, string>): Promise<void> {
  await retryOnConflict(10, async () => {
    const node = await c.get('Node', name);
    const existing = node.status?.conditions ?? [];
    const types = new Set([...existing.map((x) => x.type!), ...Object.keys(statuses)]);
    const conditions = [...types].map((type) => {
      const prev = existing.find((x) => x.type === type);
      return condition(
        type,
        statuses[type] ?? (prev?.status === 'Unknown' ? defaultStatus(type) : prev!.status!),
        prev,
      );
    });
    await c.updateStatus<Node>({ ...node, status: { ...node.status, conditions } });
  });
}

const defaultStatus = (type: string) => (type === 'Ready' ? 'True' : 'False');

async function pod(name: string, nodeName: string, tolerations?: Toleration[]): Promise<void> {
  const created = await c.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName,
      containers: [{ name: 'c', image: 'busybox' }],
      ...(tolerations ? { tolerations } : {}),
    },
  });
  await c.updateStatus<Pod>({
    ...created,
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: rfc3339(clock.now()) }],
    },
  });
}

// --- moving time --------------------------------------------------------------------------

/** Waits until the controllers are idle and their caches hold what the API holds. */
async function settle(): Promise<void> {
  for (let round = 0; round < 200; round++) {
    await lifecycle.idle();
    await eviction.idle();
    for (const r of recorders) await r.flush();
    if (await cachesCaughtUp()) {
      await lifecycle.idle();
      await eviction.idle();
      if (await cachesCaughtUp()) return;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('controllers did not settle');
}

async function cachesCaughtUp(): Promise<boolean> {
  for (const kind of ['Node', 'Pod', 'Lease'] as const) {
    const informer = factory.informerFor(kind, kind === 'Lease' ? { namespace: NODE_LEASE_NAMESPACE } : {});
    const { items } = await c.list(kind, kind === 'Lease' ? { namespace: NODE_LEASE_NAMESPACE } : {});
    const cached = informer.list();
    if (cached.length !== items.length) return false;
    for (const o of items as KubeObject[]) {
      if (
        informer.get(o.metadata!.name!, o.metadata!.namespace)?.metadata?.resourceVersion !==
        o.metadata!.resourceVersion
      ) {
        return false;
      }
    }
  }
  return true;
}

/**
 * Moves the clock `seconds` seconds, one at a time; the live agents renew their leases every
 * 10 s. Calls `each` after every second (to watch for a moment).
 */
async function pass(seconds: number, each?: (elapsed: number) => Promise<boolean | void>): Promise<number> {
  for (let s = 1; s <= seconds; s++) {
    clock.advance(1000);
    if (clock.now() - lastBeat >= 10_000) {
      lastBeat = clock.now();
      for (const name of alive) await renewLease(name);
    }
    await settle();
    if (each && (await each(s))) return s;
  }
  return seconds;
}

/** Seconds until `check` holds (failing after `limit`). */
async function until(limit: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const s = await pass(limit, check);
  if (!(await check())) throw new Error(`${what} did not happen within ${limit} s`);
  return s;
}

const node = (name: string) => c.get('Node', name);
const ready = async (name: string) => (await node(name)).status?.conditions?.find((x) => x.type === 'Ready');
const noExecute = async (name: string) =>
  ((await node(name)).spec?.taints ?? []).filter((x) => x.effect === 'NoExecute').map((x) => x.key);
const noSchedule = async (name: string) =>
  ((await node(name)).spec?.taints ?? [])
    .filter((x) => x.effect === 'NoSchedule')
    .map((x) => x.key)
    .sort();
/** Pods not being deleted: a pod bound to a silent node stays Terminating until its agent (or an admin) finishes it. */
const podNames = async () =>
  (await c.list('Pod', { namespace: 'default' })).items
    .filter((p) => !p.metadata!.deletionTimestamp)
    .map((p) => p.metadata!.name)
    .sort();
const labels = async (name: string) => (await node(name)).metadata?.labels;
const events = async (reason: string) =>
  (await c.list('Event', {})).items
    .filter((e) => e.reason === reason)
    .map((e) => `${e.involvedObject?.name}: ${e.message}`);

// --- the tests ----------------------------------------------------------------------------

describe('node lifecycle: a node that stops heartbeating', () => {
  it('goes Unknown at the grace period, is tainted unreachable, and loses the pods that do not tolerate it forever', async () => {
    await start();
    for (const n of ['lab-1', 'lab-2', 'lab-3']) await register(n);
    await pod('web', 'lab-1'); // default tolerations: 300 s
    await pod('short', 'lab-1', [
      { key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
    ]);
    await pod('agent', 'lab-1', [{ operator: 'Exists' }]); // tolerates everything, forever
    await pod('elsewhere', 'lab-2');
    await pass(12);
    expect(await events('RegisteredNode')).toEqual(
      expect.arrayContaining([
        'lab-1: Registered Node lab-1 in Controller',
        'lab-2: Registered Node lab-2 in Controller',
      ]),
    );

    alive.delete('lab-1');
    const stoppedAt = clock.now() - ((clock.now() - lastBeat) % 10_000);
    const unknownAfter = await until(
      70,
      'Ready=Unknown',
      async () => (await ready('lab-1'))?.status === 'Unknown',
    );
    const silentMs = clock.now() - stoppedAt;
    expect(silentMs).toBeGreaterThan(DEFAULT_NODE_LIFECYCLE.monitorGracePeriodMs);
    expect(silentMs).toBeLessThanOrEqual(
      DEFAULT_NODE_LIFECYCLE.monitorGracePeriodMs + DEFAULT_NODE_LIFECYCLE.monitorPeriodMs + 1000,
    );
    expect(unknownAfter).toBeGreaterThan(0);
    const r = await ready('lab-1');
    expect(r).toMatchObject({ reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' });
    for (const type of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      expect((await node('lab-1')).status?.conditions?.find((x) => x.type === type)?.status).toBe('Unknown');
    }
    expect(await events('NodeNotReady')).toContain('lab-1: Node lab-1 status is now: NodeNotReady');
    const webStatus = (await c.get('Pod', 'web', { namespace: 'default' })).status;
    expect(webStatus?.conditions?.find((x) => x.type === 'Ready')?.status).toBe('False');
    expect((await c.get('Pod', 'elsewhere', { namespace: 'default' })).status?.conditions?.[0]?.status).toBe(
      'True',
    );

    const taintedAfter = await until(7, 'unreachable taint', async () =>
      (await noExecute('lab-1')).includes(UNREACHABLE),
    );
    expect(taintedAfter).toBeLessThanOrEqual(DEFAULT_NODE_LIFECYCLE.monitorPeriodMs / 1000 + 1);
    expect(await noSchedule('lab-1')).toEqual([UNREACHABLE]);
    const taint = (await node('lab-1')).spec!.taints!.find(
      (x) => x.key === UNREACHABLE && x.effect === 'NoExecute',
    )!;
    expect(Math.abs(Date.parse(taint.timeAdded!) - clock.now())).toBeLessThanOrEqual(2000);

    const shortGone = await until(
      35,
      'the 30 s pod evicted',
      async () => !(await podNames()).includes('short'),
    );
    expect(shortGone).toBeGreaterThanOrEqual(29);
    expect(shortGone).toBeLessThanOrEqual(31);
    expect(await podNames()).toEqual(['agent', 'elsewhere', 'web']);

    const webGone = await until(
      300,
      'the default-tolerating pod evicted',
      async () => !(await podNames()).includes('web'),
    );
    expect(shortGone + webGone).toBeGreaterThanOrEqual(299);
    expect(shortGone + webGone).toBeLessThanOrEqual(301);
    expect(await events('TaintManagerEviction')).toEqual(
      expect.arrayContaining([
        'short: Marking for deletion Pod default/short',
        'web: Marking for deletion Pod default/web',
      ]),
    );
    await pass(60);
    expect(await podNames()).toEqual(['agent', 'elsewhere']);
    const text = await registry.metrics();
    expect(text).toMatch(/node_collector_evictions_total\{zone=""\} 1/);
    expect(text).toMatch(/taint_eviction_controller_pod_deletions_total 2/);
    expect(text).toMatch(/node_collector_unhealthy_nodes_in_zone\{zone=""\} 1/);
  }, 120_000);

  it('coming back in time removes the taints and cancels the pending evictions', async () => {
    await start();
    for (const n of ['lab-1', 'lab-2']) await register(n);
    await pod('web', 'lab-1');
    await pass(10);
    alive.delete('lab-1');
    await until(70, 'unreachable taint', async () => (await noExecute('lab-1')).includes(UNREACHABLE));
    expect(eviction.scheduled().has('default/web')).toBe(true);
    await pass(100);

    alive.add('lab-1');
    await renewLease('lab-1');
    await postStatus('lab-1', { Ready: 'True' });
    await until(6, 'taints removed', async () => (await noExecute('lab-1')).length === 0);
    expect((await ready('lab-1'))?.status).toBe('True');
    expect(await noSchedule('lab-1')).toEqual([]);
    expect(eviction.scheduled().size).toBe(0);
    expect(await events('TaintManagerEviction')).toEqual(['web: Cancelling deletion of Pod default/web']);
    await pass(400);
    expect(await podNames()).toEqual(['web']);
  }, 120_000);

  it('a node that reports Ready=False gets not-ready, swapped from unreachable in one write', async () => {
    await start();
    for (const n of ['lab-1', 'lab-2']) await register(n);
    await pass(10);
    alive.delete('lab-1');
    await until(70, 'unreachable taint', async () => (await noExecute('lab-1')).includes(UNREACHABLE));

    // Watch every version of the node from here on.
    const seen: string[][] = [];
    const from = (await node('lab-1')).metadata!.resourceVersion!;
    const watch = await c.watch('Node', { resourceVersion: from, fieldSelector: 'metadata.name=lab-1' });
    const collecting = (async () => {
      for await (const ev of watch) {
        if (ev.type === 'MODIFIED') {
          seen.push(
            ((ev.object as Node).spec?.taints ?? [])
              .filter((x: Taint) => x.effect === 'NoExecute')
              .map((x: Taint) => x.key!),
          );
        }
      }
    })();

    alive.add('lab-1');
    await renewLease('lab-1');
    await postStatus('lab-1', { Ready: 'False' });
    await until(6, 'not-ready taint', async () => (await noExecute('lab-1')).includes(NOT_READY));
    expect(await noExecute('lab-1')).toEqual([NOT_READY]);
    expect(await noSchedule('lab-1')).toEqual([NOT_READY]);
    await pass(2);
    watch.stop();
    await collecting;
    // Never both, never neither: the swap is a single update.
    expect(seen.length).toBeGreaterThan(0);
    for (const taints of seen)
      expect(taints.length === 1 && [UNREACHABLE, NOT_READY].includes(taints[0])).toBe(true);

    await postStatus('lab-1', { Ready: 'True' });
    await until(6, 'taints removed', async () => (await noExecute('lab-1')).length === 0);
  }, 120_000);

  it('gives a node that never posted status the startup grace period', async () => {
    await start();
    await register('lab-1');
    await register('new', {}, false);
    const unknownAfter = await until(
      70,
      'Ready=Unknown',
      async () => (await ready('new'))?.status === 'Unknown',
    );
    expect(unknownAfter).toBeGreaterThanOrEqual(DEFAULT_NODE_LIFECYCLE.startupGracePeriodMs / 1000);
    expect(unknownAfter).toBeLessThanOrEqual(
      (DEFAULT_NODE_LIFECYCLE.startupGracePeriodMs + DEFAULT_NODE_LIFECYCLE.monitorPeriodMs) / 1000 + 1,
    );
    expect(await ready('new')).toMatchObject({
      reason: 'NodeStatusNeverUpdated',
      message: 'Kubelet never posted node status.',
    });
    await until(7, 'unreachable taint', async () => (await noExecute('new')).includes(UNREACHABLE));
    expect((await ready('lab-1'))?.status).toBe('True');
  }, 120_000);

  it('after the control plane itself was asleep, nodes get a fresh grace period instead of going Unknown at once', async () => {
    await start();
    await register('lab-1');
    await register('lab-2');
    await pass(20);
    // lab-2's agent dies while the laptop hosting the control plane sleeps for 10 minutes.
    alive.delete('lab-2');
    clock.advance(10 * 60_000);
    lastBeat = clock.now() - 10_000;
    await settle();
    const unknownAfter = await until(
      70,
      'lab-2 Ready=Unknown',
      async () => (await ready('lab-2'))?.status === 'Unknown',
    );
    expect(unknownAfter).toBeGreaterThanOrEqual(DEFAULT_NODE_LIFECYCLE.monitorGracePeriodMs / 1000);
    expect(unknownAfter).toBeLessThanOrEqual(
      (DEFAULT_NODE_LIFECYCLE.monitorGracePeriodMs + DEFAULT_NODE_LIFECYCLE.monitorPeriodMs) / 1000 + 1,
    );
    expect((await ready('lab-1'))?.status).toBe('True');
    expect(await noExecute('lab-1')).toEqual([]);
    expect(await events('NodeNotReady')).toEqual(['lab-2: Node lab-2 status is now: NodeNotReady']);
  }, 120_000);

  it('a node renewing its lease stays Ready even when its status is not rewritten', async () => {
    await start();
    await register('lab-1');
    await pass(200);
    expect((await ready('lab-1'))?.status).toBe('True');
    expect(await noExecute('lab-1')).toEqual([]);
  }, 120_000);

  it('taints the nodes of a zone one at a time, at the eviction rate', async () => {
    await start();
    for (let i = 0; i < 10; i++) await register(`n${i}`, { 'topology.kubernetes.io/zone': 'rack-a' });
    await pass(10);
    for (const n of ['n0', 'n1', 'n2']) alive.delete(n);
    const taintedAt: Record<string, number> = {};
    let elapsed = 0;
    await pass(90, async (s) => {
      elapsed = s;
      for (const n of ['n0', 'n1', 'n2']) {
        if (!taintedAt[n] && (await noExecute(n)).includes(UNREACHABLE)) taintedAt[n] = s;
      }
      return Object.keys(taintedAt).length === 3;
    });
    expect(Object.keys(taintedAt)).toHaveLength(3);
    const times = Object.values(taintedAt).sort((a, b) => a - b);
    // 0.1 nodes per second: ten seconds apart.
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(9);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(9);
    expect(times[2] - times[1]).toBeLessThanOrEqual(11);
    expect(elapsed).toBe(times[2]);
    expect(lifecycle.zones().get('rack-a')).toBe('Normal');
  }, 120_000);
});

describe('node lifecycle: zones', () => {
  async function silence(names: string[]): Promise<void> {
    for (const n of names) alive.delete(n);
    await pass(62);
  }

  it('small zone in partial disruption stops tainting; a large one slows to the secondary rate', async () => {
    await start();
    const small = Array.from({ length: 5 }, (_, i) => `s${i}`);
    const large = Array.from({ length: 60 }, (_, i) => `l${i}`);
    for (const n of small) await register(n, { 'topology.kubernetes.io/zone': 'small' });
    for (const n of large) await register(n, { 'topology.kubernetes.io/zone': 'large' });
    await pass(10);
    expect(lifecycle.zones()).toEqual(
      new Map([
        ['small', 'Normal'],
        ['large', 'Normal'],
      ]),
    );
    expect(lifecycle.zoneRate('small')).toBe(0.1);
    // 3 of 5 (60 %) and 34 of 60 (57 %) are at least 55 % and at least 3.
    await silence([...small.slice(0, 3), ...large.slice(0, 34)]);
    expect(lifecycle.zones()).toEqual(
      new Map([
        ['small', 'PartialDisruption'],
        ['large', 'PartialDisruption'],
      ]),
    );
    expect(lifecycle.zoneRate('small')).toBe(0);
    expect(lifecycle.zoneRate('large')).toBe(0.01);
    const text = await registry.metrics();
    expect(text).toMatch(/node_collector_zone_state\{zone="small",state="PartialDisruption"\} 1/);
    expect(text).toMatch(/node_collector_zone_size\{zone="large"\} 60/);
  }, 180_000);

  it('a fully disrupted zone keeps the normal rate while another zone is healthy', async () => {
    await start();
    for (const n of ['a0', 'a1', 'a2']) await register(n, { 'topology.kubernetes.io/zone': 'a' });
    for (const n of ['b0', 'b1']) await register(n, { 'topology.kubernetes.io/zone': 'b' });
    await pass(10);
    await silence(['a0', 'a1', 'a2']);
    expect(lifecycle.zones()).toEqual(
      new Map([
        ['a', 'FullDisruption'],
        ['b', 'Normal'],
      ]),
    );
    expect(lifecycle.zoneRate('a')).toBe(0.1);
    await until(30, 'zone a tainted', async () => {
      for (const n of ['a0', 'a1', 'a2']) if (!(await noExecute(n)).includes(UNREACHABLE)) return false;
      return true;
    });
  }, 120_000);

  it('when every zone is down, stops evicting and lifts the taints, and starts afresh when nodes return', async () => {
    await start();
    for (const n of ['a0', 'a1']) await register(n, { 'topology.kubernetes.io/zone': 'a' });
    for (const n of ['b0', 'b1']) await register(n, { 'topology.kubernetes.io/zone': 'b' });
    await pod('web', 'a0');
    await pass(10);
    // Zone a goes first and is tainted...
    alive.delete('a0');
    alive.delete('a1');
    await until(
      80,
      'zone a tainted',
      async () =>
        (await noExecute('a0')).includes(UNREACHABLE) && (await noExecute('a1')).includes(UNREACHABLE),
    );
    // ...then zone b too: the control plane is more likely cut off than every machine dead.
    alive.delete('b0');
    alive.delete('b1');
    await until(70, 'every zone fully disrupted', async () =>
      [...lifecycle.zones().values()].every((s) => s === 'FullDisruption'),
    );
    await until(
      6,
      'taints lifted',
      async () => (await noExecute('a0')).length === 0 && (await noExecute('a1')).length === 0,
    );
    expect(lifecycle.zoneRate('a')).toBe(0);
    expect(lifecycle.zoneRate('b')).toBe(0);
    await pass(400);
    for (const n of ['a0', 'a1', 'b0', 'b1']) expect(await noExecute(n)).toEqual([]);
    expect(await podNames()).toEqual(['web']);

    // One node returns: the rates are normal again, and the nodes still down are tainted anew.
    alive.add('b0');
    await renewLease('b0');
    await postStatus('b0', { Ready: 'True' });
    await until(6, 'zone b normal again', async () => lifecycle.zones().get('b') === 'Normal');
    expect(lifecycle.zoneRate('a')).toBe(0.1);
    await until(30, 'zone a tainted again', async () => (await noExecute('a0')).includes(UNREACHABLE));
  }, 180_000);
});

describe('node lifecycle: nodes excluded from disruption checks', () => {
  it('a node labelled exclude-disruption with an empty value is left out of its zone, so the rest of it down is a full disruption', async () => {
    await start();
    for (const n of ['lab-1', 'lab-2']) await register(n);
    // `kubectl label node gateway node.kubernetes.io/exclude-disruption=`: the label's presence
    // counts, not its value. Here it is a node that keeps heartbeating when the lab's network
    // fails (it shares the control plane's machine), and must not make that look like a few
    // dead nodes in a healthy zone.
    await register('gateway', { 'node.kubernetes.io/exclude-disruption': '' });
    await pod('web', 'lab-1');
    await pass(10);

    alive.delete('lab-1');
    alive.delete('lab-2');
    await until(70, 'the zone fully disrupted', async () => lifecycle.zones().get('') === 'FullDisruption');
    expect(lifecycle.zoneRate('')).toBe(0);
    await pass(400);
    // Every counted node is down: the control plane is presumed cut off, and nothing is evicted.
    expect((await ready('lab-1'))?.status).toBe('Unknown');
    expect((await ready('gateway'))?.status).toBe('True');
    for (const n of ['lab-1', 'lab-2', 'gateway']) expect(await noExecute(n)).toEqual([]);
    expect(await podNames()).toEqual(['web']);
    const text = await registry.metrics();
    expect(text).toMatch(/node_collector_zone_state\{zone="",state="FullDisruption"\} 1/);
    expect(text).toMatch(/node_collector_zone_size\{zone=""\} 2\n/);
    expect(text).toMatch(/node_collector_unhealthy_nodes_in_zone\{zone=""\} 2\n/);
  }, 120_000);
});

describe('node lifecycle: NoSchedule taints from conditions', () => {
  it('follow memory, disk and PID pressure, network and spec.unschedulable', async () => {
    await start();
    await register('lab-1');
    await pass(2);
    expect(await noSchedule('lab-1')).toEqual([]);
    await postStatus('lab-1', { MemoryPressure: 'True', DiskPressure: 'True' });
    await pass(1);
    expect(await noSchedule('lab-1')).toEqual([
      'node.kubernetes.io/disk-pressure',
      'node.kubernetes.io/memory-pressure',
    ]);
    await postStatus('lab-1', { MemoryPressure: 'False', PIDPressure: 'True', NetworkUnavailable: 'True' });
    await pass(1);
    expect(await noSchedule('lab-1')).toEqual([
      'node.kubernetes.io/disk-pressure',
      'node.kubernetes.io/network-unavailable',
      'node.kubernetes.io/pid-pressure',
    ]);
    await retryOnConflict(10, async () => {
      const n = await node('lab-1');
      await c.update<Node>({
        ...n,
        spec: {
          ...n.spec,
          unschedulable: true,
          taints: [...(n.spec?.taints ?? []), { key: 'gpu', effect: 'NoSchedule' }],
        },
      });
    });
    await postStatus('lab-1', { DiskPressure: 'False', PIDPressure: 'False', NetworkUnavailable: 'False' });
    await pass(1);
    // Taints it does not manage are left alone.
    expect(await noSchedule('lab-1')).toEqual(['gpu', 'node.kubernetes.io/unschedulable']);
  }, 60_000);
});

describe('node lifecycle: beta OS and architecture labels', () => {
  const OS = 'kubernetes.io/os';
  const ARCH = 'kubernetes.io/arch';
  const BETA_OS = 'beta.kubernetes.io/os';
  const BETA_ARCH = 'beta.kubernetes.io/arch';

  it('mirrors the stable labels onto the beta ones: adds, overwrites, never removes, never makes up a stable label', async () => {
    await start();
    await register('lab-1', { [OS]: 'linux', [ARCH]: 'arm64' });
    // A beta label that disagrees is overwritten; a beta label alone is left as it is.
    await register('old', { [OS]: 'linux', [BETA_OS]: 'windows', [BETA_ARCH]: 'amd64' });
    // An empty value is a value.
    await register('odd', { [OS]: '' });
    await pass(1);
    expect(await labels('lab-1')).toEqual({
      'kubernetes.io/hostname': 'lab-1',
      [OS]: 'linux',
      [ARCH]: 'arm64',
      [BETA_OS]: 'linux',
      [BETA_ARCH]: 'arm64',
    });
    expect(await labels('old')).toEqual({
      'kubernetes.io/hostname': 'old',
      [OS]: 'linux',
      [BETA_OS]: 'linux',
      [BETA_ARCH]: 'amd64',
    });
    expect(await labels('odd')).toEqual({ 'kubernetes.io/hostname': 'odd', [OS]: '', [BETA_OS]: '' });

    // The machine is reinstalled on another architecture: the beta label follows.
    await c.patch('Node', 'lab-1', { metadata: { labels: { [ARCH]: 'amd64' } } });
    await pass(1);
    expect((await labels('lab-1'))?.[BETA_ARCH]).toBe('amd64');
    // Someone edits the beta label by hand: it is put back.
    await c.patch('Node', 'lab-1', { metadata: { labels: { [BETA_OS]: 'windows' } } });
    await pass(1);
    expect((await labels('lab-1'))?.[BETA_OS]).toBe('linux');
    // The stable label is removed: the beta label stays.
    await c.patch('Node', 'lab-1', { metadata: { labels: { [OS]: null } } });
    await pass(1);
    expect(await labels('lab-1')).toEqual({
      'kubernetes.io/hostname': 'lab-1',
      [ARCH]: 'amd64',
      [BETA_OS]: 'linux',
      [BETA_ARCH]: 'amd64',
    });
  }, 60_000);

  it('never mirrors a value the stable label no longer has: a write raced by a change fails and is retried', async () => {
    await register('lab-1', { [OS]: 'linux', [ARCH]: 'amd64' });
    const seen: Array<Record<string, string>> = [];
    const from = (await node('lab-1')).metadata!.resourceVersion!;
    const watch = await c.watch('Node', { resourceVersion: from, fieldSelector: 'metadata.name=lab-1' });
    const collecting = (async () => {
      for await (const ev of watch) {
        if (ev.type === 'MODIFIED') seen.push({ ...(ev.object as Node).metadata?.labels });
      }
    })();
    // Just before the controller's first label write reaches the server, an admin changes the
    // stable OS label: the controller decided from the old value.
    let raced = false;
    const racing = new Proxy(c, {
      get(target, prop, receiver) {
        if (prop !== 'patch') return Reflect.get(target, prop, receiver) as unknown;
        return async (...args: Parameters<Client['patch']>) => {
          if (!raced && args[0] === 'Node' && args[3]?.type === 'json') {
            raced = true;
            await c.patch('Node', args[1], { metadata: { labels: { [OS]: 'windows' } } });
          }
          return target.patch(...args);
        };
      },
    });
    await start({}, racing);
    await pass(2);
    watch.stop();
    await collecting;
    expect(raced).toBe(true);
    expect(await labels('lab-1')).toEqual({
      'kubernetes.io/hostname': 'lab-1',
      [OS]: 'windows',
      [ARCH]: 'amd64',
      [BETA_OS]: 'windows',
      [BETA_ARCH]: 'amd64',
    });
    for (const l of seen) if (BETA_OS in l) expect(l[BETA_OS]).toBe(l[OS]);
  }, 60_000);
});
