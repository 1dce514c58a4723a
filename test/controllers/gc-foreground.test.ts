/**
 * The garbage collector on its own against a real apiserver: the test edits objects through
 * the API as a user would, waits until the collector has nothing left to do, and looks at what
 * is left. Two things Kubernetes users rely on: an owner deleted in the foreground goes as soon
 * as no dependent blocks it any more — also when a dependent lets go of it rather than going
 * itself — and an ownerReference names an owner in the dependent's own namespace (or a
 * cluster-scoped one), never an object that merely has the same uid elsewhere.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KINDS } from '../../client/api/kinds.js';
import type { DaemonSet, KubeObject, Node, OwnerReference, Pod } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client } from '../../client/client.js';
import { EventRecorder } from '../../client/events/recorder.js';
import { realClock } from '../../client/util/clock.js';
import { clone } from '../../client/util/objects.js';
import { GarbageCollector } from '../../main/controllers/gc/controller.js';
import { silentLogger } from '../../main/logging.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';
import { eventually } from '../support/wait.js';
import { settleController } from '../support/settle.js';

/** Each outcome comes within a second here; a generous limit still fails before the test does. */
const WAIT_MS = 15_000;

let t: TestApiServer;
let c: Client;
let factory: SharedInformerFactory;
let gc: GarbageCollector;
let recorder: EventRecorder;

beforeEach(async () => {
  t = await startTestApiServer();
  c = t.admin;
  factory = new SharedInformerFactory(c);
  recorder = new EventRecorder(c, { component: 'garbage-collector-controller' });
  gc = new GarbageCollector({
    client: c,
    informers: factory,
    // Real time: the collector's clock only paces retries, which must not stall.
    clock: realClock,
    logger: silentLogger(),
    recorder: () => recorder,
  });
  factory.start();
  await factory.waitForCacheSync(10_000);
  gc.run(2);
  await settle();
});

afterEach(async () => {
  await gc.stop();
  factory.shutdown();
  await t.close();
});

// --- what a user makes --------------------------------------------------------------------

const ds = (name: string, namespace = 'default'): DaemonSet => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name, namespace },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'c', command: ['sleep', '1'] }] },
    },
  },
});

function ownedBy(owner: KubeObject, block = true): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata!.name,
    uid: owner.metadata!.uid,
    controller: true,
    blockOwnerDeletion: block,
  };
}

const pod = (
  name: string,
  owners: OwnerReference[],
  opts: { namespace?: string; hold?: boolean } = {},
): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: opts.namespace ?? 'default',
    ownerReferences: owners,
    // A finalizer of someone else's keeps the pod Terminating once deleted, as a pod whose
    // agent has not finished it yet would stay.
    ...(opts.hold ? { finalizers: ['example.com/hold'] } : {}),
  },
  spec: { containers: [{ name: 'c', command: ['sleep', '1'] }] },
});

async function getOrUndefined(kind: 'DaemonSet' | 'Pod' | 'Node', name: string, namespace?: string) {
  return c.get(kind, name, { namespace }).catch(() => undefined);
}

async function deleteForeground(name: string): Promise<void> {
  const res = await c.delete('DaemonSet', name, { namespace: 'default', propagationPolicy: 'Foreground' });
  expect(res.deleted).toBe(false);
}

/** Deletes the owner in the foreground and waits until it waits on its held dependent. */
async function deleteAndWaitOn(owner: string, dependent: string): Promise<void> {
  await deleteForeground(owner);
  await eventually(
    async () =>
      (await getOrUndefined('Pod', dependent, 'default'))?.metadata?.deletionTimestamp !== undefined,
    'the held dependent to be deleted',
    WAIT_MS,
  );
  await settle();
  const waiting = await c.get('DaemonSet', owner, { namespace: 'default' });
  expect(waiting.metadata?.finalizers).toContain('foregroundDeletion');
}

const gcEvents = async (namespace: string) =>
  (await c.list('Event', { namespace })).items
    .filter((e) => e.source?.component === 'garbage-collector-controller')
    .map((e) => ({
      type: e.type,
      reason: e.reason,
      object: `${e.involvedObject?.kind}/${e.involvedObject?.name}`,
      message: e.message,
    }));

// --- waiting for the collector ------------------------------------------------------------

/** Waits until the controller is idle, its events are written and its caches hold what the API holds. */
const settle = () =>
  settleController({
    name: 'garbage collector',
    idle: () => gc.idle(),
    flush: () => recorder.flush(),
    client: c,
    factory,
    kinds: KINDS.map((k) => k.kind).filter((k) => k !== 'Event' && k !== 'NodeMetrics'),
  });

// --- the tests ----------------------------------------------------------------------------

describe('foreground deletion, when a blocking dependent lets go of its owner', () => {
  it('finishes once the dependent drops its ownerReference', async () => {
    const owner = await c.create(ds('web'));
    await c.create(pod('held', [ownedBy(owner)], { hold: true }));
    await settle();
    await deleteAndWaitOn('web', 'held');

    const held = clone(await c.get('Pod', 'held', { namespace: 'default' }));
    held.metadata!.ownerReferences = [];
    await c.update(held);

    await eventually(
      async () => !(await getOrUndefined('DaemonSet', 'web', 'default')),
      'the owner to go',
      WAIT_MS,
    );
    // The pod it let go of is none of the owner's business any more: it stays as it was.
    const after = await c.get('Pod', 'held', { namespace: 'default' });
    expect(after.metadata?.finalizers).toEqual(['example.com/hold']);
    expect(after.metadata?.ownerReferences ?? []).toEqual([]);
  });

  it('finishes once the dependent sets blockOwnerDeletion to false', async () => {
    const owner = await c.create(ds('web'));
    await c.create(pod('held', [ownedBy(owner)], { hold: true }));
    await settle();
    await deleteAndWaitOn('web', 'held');

    const held = clone(await c.get('Pod', 'held', { namespace: 'default' }));
    held.metadata!.ownerReferences = held.metadata!.ownerReferences!.map((r) => ({
      ...r,
      blockOwnerDeletion: false,
    }));
    await c.update(held);

    await eventually(
      async () => !(await getOrUndefined('DaemonSet', 'web', 'default')),
      'the owner to go',
      WAIT_MS,
    );
  });

  it('finishes once the collector itself takes the reference off a dependent another owner keeps', async () => {
    const owner = await c.create(ds('web'));
    const other = await c.create(ds('other'));
    await c.create(pod('shared', [ownedBy(owner), { ...ownedBy(other, false), controller: false }]));
    await settle();

    await deleteForeground('web');

    await eventually(
      async () => !(await getOrUndefined('DaemonSet', 'web', 'default')),
      'the owner to go',
      WAIT_MS,
    );
    // The dependent still has an owner, so it stays, without the reference to the one gone.
    const shared = await c.get('Pod', 'shared', { namespace: 'default' });
    expect(shared.metadata?.deletionTimestamp).toBeUndefined();
    expect(shared.metadata?.ownerReferences?.map((r) => r.name)).toEqual(['other']);
  });

  it('keeps waiting while another dependent still blocks it', async () => {
    const owner = await c.create(ds('web'));
    await c.create(pod('held', [ownedBy(owner)], { hold: true }));
    await c.create(pod('also-held', [ownedBy(owner)], { hold: true }));
    await settle();
    await deleteAndWaitOn('web', 'held');

    const held = clone(await c.get('Pod', 'held', { namespace: 'default' }));
    held.metadata!.ownerReferences = [];
    await c.update(held);
    await settle();
    expect((await c.get('DaemonSet', 'web', { namespace: 'default' })).metadata?.finalizers).toContain(
      'foregroundDeletion',
    );

    const alsoHeld = clone(await c.get('Pod', 'also-held', { namespace: 'default' }));
    alsoHeld.metadata!.finalizers = [];
    await c.update(alsoHeld);
    await eventually(
      async () => !(await getOrUndefined('DaemonSet', 'web', 'default')),
      'the owner to go',
      WAIT_MS,
    );
  });
});

describe('ownerReferences name an owner in the dependent’s own namespace', () => {
  it('collects a dependent whose owner is in another namespace, with an event saying why', async () => {
    await c.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } });
    const owner = await c.create(ds('web'));
    await c.create(pod('kept', [ownedBy(owner)]));
    await settle();

    await c.create(pod('stray', [ownedBy(owner)], { namespace: 'lab' }));
    await eventually(
      async () => (await c.list('Pod', { namespace: 'lab' })).items.length === 0,
      'the pod in another namespace than its owner to be deleted',
      WAIT_MS,
    );
    await settle();

    expect(await gcEvents('lab')).toEqual([
      {
        type: 'Warning',
        reason: 'OwnerRefInvalidNamespace',
        object: 'Pod/stray',
        message: `ownerRef [apps/v1/DaemonSet, namespace: lab, name: web, uid: ${owner.metadata!.uid}] does not exist in namespace "lab"`,
      },
    ]);
    // The owner and its real dependent are untouched.
    expect(await getOrUndefined('DaemonSet', 'web', 'default')).toBeDefined();
    expect(await getOrUndefined('Pod', 'kept', 'default')).toBeDefined();
    expect(await gcEvents('default')).toEqual([]);
  });

  it('collects it also when an owner of that name exists in its namespace with another uid', async () => {
    await c.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } });
    const owner = await c.create(ds('web'));
    await c.create(ds('web', 'lab'));
    await settle();

    await c.create(pod('stray', [ownedBy(owner)], { namespace: 'lab' }));
    await eventually(
      async () => (await c.list('Pod', { namespace: 'lab' })).items.length === 0,
      'the pod in another namespace than its owner to be deleted',
      WAIT_MS,
    );
    expect(await getOrUndefined('DaemonSet', 'web', 'lab')).toBeDefined();
  });

  it('leaves a cluster-scoped object referring to a namespaced owner alone, with an event', async () => {
    const owner = await c.create(ds('web'));
    await settle();
    await c.create<Node>({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', ownerReferences: [ownedBy(owner)] },
    });
    await settle();
    expect(await gcEvents('default')).toEqual([
      {
        type: 'Warning',
        reason: 'OwnerRefInvalidNamespace',
        object: 'Node/n1',
        message: `ownerRef [apps/v1/DaemonSet, name: web, uid: ${owner.metadata!.uid}] names a namespaced kind, which cannot own the cluster-scoped Node n1`,
      },
    ]);

    // The reference can never be resolved, so the owner's going does not make the node garbage.
    await c.delete('DaemonSet', 'web', { namespace: 'default' });
    await settle();
    const node = await c.get('Node', 'n1');
    expect(node.metadata?.deletionTimestamp).toBeUndefined();
  });

  it('does not let such an object hold up its would-be owner’s foreground deletion', async () => {
    const owner = await c.create(ds('web'));
    await c.create<Node>({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', ownerReferences: [ownedBy(owner)] },
    });
    await settle();

    await deleteForeground('web');
    await eventually(
      async () => !(await getOrUndefined('DaemonSet', 'web', 'default')),
      'the owner to go',
      WAIT_MS,
    );
    await settle();
    const node = await c.get('Node', 'n1');
    expect(node.metadata?.deletionTimestamp).toBeUndefined();
  });
});
