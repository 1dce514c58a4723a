/**
 * A DaemonSet's template generation, through a real control plane (apiserver, DaemonSet
 * controller, scheduler) and hollow nodes that run the pods, as a user observes it through
 * the API: the `deprecated.daemonset.template.generation` annotation is "1" at create and one
 * more on each template change, whatever an update sends; the controller's pods carry it as
 * the `pod-template-generation` label; and a pod adopted from another controller with the
 * current generation but a hash in another format is not replaced by a rolling update, while
 * one with an old generation and an old hash is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../agent/config.js';
import { HollowFleet } from '../../agent/hollow.js';
import { quietLogger } from '../../agent/logger.js';
import { isApiError } from '../../client/api/errors.js';
import { isPodReady } from '../../client/api/pods.js';
import type { DaemonSet, Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { createJoinToken } from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const GEN = 'deprecated.daemonset.template.generation';
const GEN_LABEL = 'pod-template-generation';
const HASH_LABEL = 'controller-revision-hash';
const NODES = ['tg-0', 'tg-1'];

let t: TestControlPlane;
let admin: Client;
let dir: string;
let fleet: HollowFleet;

beforeAll(async () => {
  t = await startTestControlPlane();
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-tg-'));
  fleet = new HollowFleet({
    count: NODES.length,
    prefix: 'tg',
    servers: [`https://127.0.0.1:${t.cp.port}`],
    dataDir: join(dir, 'fleet'),
    joinToken: await createJoinToken(t),
    config: (name) => defaultConfig(name),
    logger: quietLogger(),
    spreadMs: 50,
  });
  await fleet.start();
  await eventually(
    async () =>
      (await admin.list('Node')).items.filter((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length === NODES.length,
    'the hollow nodes to be Ready',
  );
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

function daemonSet(name: string, image: string, annotations?: Record<string, string>): DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}) },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'exporter', image }] },
      },
    },
  };
}

const getDs = (name: string) => admin.get('DaemonSet', name, { namespace: 'default' });
const generationOf = (ds: DaemonSet) => ds.metadata?.annotations?.[GEN];

/** Live (not being deleted) pods of the DaemonSet, by node. */
async function podsByNode(app: string): Promise<Map<string, Pod>> {
  const pods = (await admin.list('Pod', { namespace: 'default', labelSelector: `app=${app}` })).items;
  const byNode = new Map<string, Pod>();
  for (const p of pods) {
    if (p.metadata?.deletionTimestamp) continue;
    if (byNode.has(p.spec?.nodeName ?? '')) throw new Error(`two live pods on ${p.spec?.nodeName}`);
    byNode.set(p.spec?.nodeName ?? '', p);
  }
  return byNode;
}

/** The hash of the DaemonSet's newest ControllerRevision (the current template's). */
async function currentHash(name: string): Promise<string | undefined> {
  const revisions = (await admin.list('ControllerRevision', { namespace: 'default' })).items
    .filter((r) => r.metadata?.name?.startsWith(`${name}-`))
    .sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0));
  return revisions[0]?.metadata?.labels?.[HASH_LABEL];
}

/** Every node runs one ready pod with this image, generation label and the current hash. */
async function rolledOut(name: string, image: string, generation: string): Promise<boolean> {
  const hash = await currentHash(name);
  const byNode = await podsByNode(name);
  return NODES.every((n) => {
    const p = byNode.get(n);
    return (
      !!p &&
      isPodReady(p) &&
      p.spec?.containers?.[0]?.image === image &&
      p.metadata?.labels?.[GEN_LABEL] === generation &&
      p.metadata?.labels?.[HASH_LABEL] === hash
    );
  });
}

/** Read, change, update: again when the controller's status write got in between. */
async function change(name: string, edit: (ds: DaemonSet) => DaemonSet): Promise<DaemonSet> {
  for (;;) {
    try {
      return await admin.update<DaemonSet>(edit(await getDs(name)));
    } catch (err) {
      if (!isApiError(err, 'Conflict')) throw err;
    }
  }
}

async function refusal(write: Promise<unknown>): Promise<unknown> {
  try {
    await write;
  } catch (err) {
    return err;
  }
  throw new Error('the write was accepted');
}

it('keeps the template generation: 1 at create, one more per template change, never what an update sends', async () => {
  const created = await admin.create(daemonSet('gen', 'exporter:1'));
  expect(generationOf(created)).toBe('1');
  expect(generationOf(await getDs('gen'))).toBe('1');
  await eventually(() => rolledOut('gen', 'exporter:1', '1'), 'a pod labelled generation 1 on every node');

  // A spec change outside the template bumps metadata.generation, not the template generation;
  // the annotation an update sends is not taken.
  const updated = await change('gen', (ds) => ({
    ...ds,
    metadata: { ...ds.metadata, annotations: { ...ds.metadata?.annotations, [GEN]: '7' } },
    spec: { ...ds.spec, revisionHistoryLimit: 5 },
  }));
  expect(updated.metadata?.generation).toBe(2);
  expect(generationOf(updated)).toBe('1');

  // Removing it does not remove it.
  const patched = await admin.patch(
    'DaemonSet',
    'gen',
    { metadata: { annotations: { [GEN]: null } } },
    { namespace: 'default' },
  );
  expect(generationOf(patched)).toBe('1');

  // A value that is not a number is refused, naming the field.
  const err = await refusal(
    change('gen', (ds) => ({
      ...ds,
      metadata: { ...ds.metadata, annotations: { ...ds.metadata?.annotations, [GEN]: 'two' } },
    })),
  );
  expect(isApiError(err, 'Invalid'), String(err)).toBe(true);
  expect(String((err as Error).message)).toContain(`metadata.annotations[${GEN}]`);

  // A template change: generation 2, whatever the update says, and the pods follow.
  const rolled = await change('gen', (ds) => ({
    ...ds,
    metadata: { ...ds.metadata, annotations: { ...ds.metadata?.annotations, [GEN]: '1' } },
    spec: {
      ...ds.spec,
      template: { ...ds.spec!.template, spec: { containers: [{ name: 'exporter', image: 'exporter:2' }] } },
    },
  }));
  expect(generationOf(rolled)).toBe('2');
  expect(rolled.metadata?.generation).toBe(3);
  await eventually(() => rolledOut('gen', 'exporter:2', '2'), 'every pod replaced by one of generation 2');
  await eventually(
    async () => (await getDs('gen')).status?.updatedNumberScheduled === NODES.length,
    'status to count them up to date',
  );
  // The controller's status writes leave it alone.
  expect(generationOf(await getDs('gen'))).toBe('2');
}, 90_000);

it('on create keeps a generation of 1 or more, starts one below 1 at 1, and refuses one that is not a number', async () => {
  // No node matches: these DaemonSets only show what the apiserver stores.
  const nowhere = (name: string, generation: string) => {
    const ds = daemonSet(name, 'exporter:1', { [GEN]: generation });
    ds.spec!.template!.spec!.nodeSelector = { 'kubelab.test/none': 'true' };
    return ds;
  };
  expect(generationOf(await admin.create(nowhere('restored', '5')))).toBe('5');
  expect(generationOf(await admin.create(nowhere('padded', '+007')))).toBe('7');
  expect(generationOf(await admin.create(nowhere('zero', '0')))).toBe('1');
  expect(generationOf(await admin.create(nowhere('negative', '-3')))).toBe('1');
  const err = await refusal(admin.create(nowhere('word', 'five')));
  expect(isApiError(err, 'Invalid'), String(err)).toBe(true);
  expect(String((err as Error).message)).toContain(`metadata.annotations[${GEN}]`);
  expect(isApiError(await refusal(getDs('word')), 'NotFound')).toBe(true);
});

it('leaves an adopted pod of the current generation with a foreign hash, replaces one of an old generation and hash', async () => {
  // Pods another controller made (a restore, a migration): the same template, hashes of that
  // controller (none of kubelab's revisions), and their generation labels.
  const orphan = (name: string, nodeName: string, generation: string, hash: string): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      labels: { app: 'adopt', [GEN_LABEL]: generation, [HASH_LABEL]: hash },
    },
    spec: { nodeName, containers: [{ name: 'exporter', image: 'exporter:2' }] },
  });
  const current = await admin.create(orphan('adopt-current', 'tg-0', '2', '5d8f7b9c6'));
  const stale = await admin.create(orphan('adopt-stale', 'tg-1', '1', '7c9d4f6b8'));
  await eventually(async () => {
    const byNode = await podsByNode('adopt');
    return NODES.every((n) => byNode.get(n) && isPodReady(byNode.get(n)!));
  }, 'the orphan pods to run');

  // The DaemonSet comes back at generation 2 (a create keeps it) with that same template.
  const ds = await admin.create(daemonSet('adopt', 'exporter:2', { [GEN]: '2' }));
  expect(generationOf(ds)).toBe('2');

  await eventually(async () => {
    const replacement = (await podsByNode('adopt')).get('tg-1');
    const status = (await getDs('adopt')).status;
    return (
      !!replacement &&
      replacement.metadata?.uid !== stale.metadata?.uid &&
      isPodReady(replacement) &&
      status?.updatedNumberScheduled === NODES.length &&
      status.numberAvailable === NODES.length
    );
  }, 'the stale pod to be replaced and every pod counted up to date');

  const byNode = await podsByNode('adopt');
  const kept = byNode.get('tg-0')!;
  expect(kept.metadata?.uid).toBe(current.metadata?.uid);
  expect(kept.metadata?.labels).toMatchObject({ [GEN_LABEL]: '2', [HASH_LABEL]: '5d8f7b9c6' });
  expect(kept.metadata?.ownerReferences).toEqual([
    expect.objectContaining({ kind: 'DaemonSet', uid: ds.metadata?.uid, controller: true }),
  ]);
  const replacement = byNode.get('tg-1')!;
  expect(replacement.metadata?.labels).toMatchObject({
    [GEN_LABEL]: '2',
    [HASH_LABEL]: await currentHash('adopt'),
  });
  const gone = await refusal(admin.get('Pod', 'adopt-stale', { namespace: 'default' }));
  expect(isApiError(gone, 'NotFound'), String(gone)).toBe(true);
}, 90_000);
