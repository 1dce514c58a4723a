/**
 * The garbage collector and the namespace controller, running inside a real control plane:
 * background, foreground and orphan deletion as Kubernetes users know them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  ControllerRevision,
  DaemonSet,
  KubeObject,
  Namespace,
  OwnerReference,
  Pod,
} from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { clone } from '../../client/util/objects.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

let t: TestControlPlane;
let c: Client;
beforeEach(async () => {
  // DaemonSets serve as owners here; their own controller would release these hand-made pods.
  t = await startTestControlPlane({ controllers: ['*', '-daemonset'] });
  c = t.cp.client();
});
afterEach(async () => t.close());

const ds = (name: string): DaemonSet => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name },
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

const pod = (name: string, owners: OwnerReference[] = [], finalizers?: string[]): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'x' }, ownerReferences: owners, ...(finalizers ? { finalizers } : {}) },
  spec: { containers: [{ name: 'c', command: ['sleep', '1'] }] },
});

const podNames = async () => (await c.list('Pod')).items.map((p) => p.metadata?.name).sort();
const exists = async (kind: 'DaemonSet' | 'Namespace', name: string) =>
  c.get(kind, name).then(
    () => true,
    () => false,
  );

describe('garbage collector', () => {
  it('background (the default): the owner goes at once, then its dependents', async () => {
    const owner = await c.create(ds('exporter'));
    await c.create(pod('a', [ownedBy(owner)]));
    await c.create(pod('b', [ownedBy(owner)]));
    await c.create<ControllerRevision>({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'exporter-1', ownerReferences: [ownedBy(owner)] },
      revision: 1,
      data: {},
    });
    await c.create(pod('unrelated'));
    const res = await c.delete('DaemonSet', 'exporter');
    expect(res.deleted).toBe(true);
    await eventually(async () => (await podNames()).join() === 'unrelated', 'the dependents to be deleted');
    await eventually(
      async () => (await c.list('ControllerRevision')).items.length === 0,
      'the revision to be deleted',
    );
  });

  it('deletes dependents whose owner never existed or was replaced', async () => {
    await c.create(
      pod('orphaned', [
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          name: 'ghost',
          uid: '00000000-0000-0000-0000-000000000000',
          controller: true,
        },
      ]),
    );
    const owner = await c.create(ds('real'));
    await c.create(pod('kept', [ownedBy(owner)]));
    await eventually(
      async () => (await podNames()).join() === 'kept',
      'the pod with a missing owner to be deleted',
    );
    // Still owned: it stays.
    await new Promise((r) => setTimeout(r, 200));
    expect(await podNames()).toEqual(['kept']);
  });

  it('foreground: the owner waits, marked, until its blocking dependents are gone', async () => {
    const owner = await c.create(ds('web'));
    await c.create(pod('held', [ownedBy(owner)], ['example.com/hold']));
    await c.create(pod('quick', [ownedBy(owner, false)]));
    const res = await c.delete('DaemonSet', 'web', { propagationPolicy: 'Foreground' });
    expect(res.deleted).toBe(false);
    expect(res.object.metadata?.finalizers).toContain('foregroundDeletion');

    await eventually(
      async () => (await c.get('Pod', 'held')).metadata?.deletionTimestamp !== undefined,
      'the held pod to be marked for deletion',
    );
    await eventually(async () => !(await podNames()).includes('quick'), 'the non-blocking dependent to go');
    await new Promise((r) => setTimeout(r, 200));
    expect(await exists('DaemonSet', 'web')).toBe(true);

    const held = clone(await c.get('Pod', 'held'));
    held.metadata!.finalizers = [];
    await c.update(held);
    await eventually(
      async () => !(await exists('DaemonSet', 'web')),
      'the owner to go once its dependents are gone',
    );
    expect(await podNames()).toEqual([]);
  });

  it('orphan: the owner goes and its dependents stay, without the reference', async () => {
    const owner = await c.create(ds('keepme'));
    await c.create(pod('a', [ownedBy(owner)]));
    await c.create(pod('b', [ownedBy(owner)]));
    await c.delete('DaemonSet', 'keepme', { propagationPolicy: 'Orphan' });
    await eventually(async () => !(await exists('DaemonSet', 'keepme')), 'the owner to be deleted');
    await new Promise((r) => setTimeout(r, 200));
    const pods = (await c.list('Pod')).items;
    expect(pods.map((p) => p.metadata?.name).sort()).toEqual(['a', 'b']);
    for (const p of pods) expect(p.metadata?.ownerReferences).toBeUndefined();
  });
});

describe('namespace controller', () => {
  it('empties a deleted namespace, then lets it go', async () => {
    await c.create<Namespace>({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } });
    await c.create(pod('a'), { namespace: 'lab' });
    await c.create(ds('agent'), { namespace: 'lab' });
    await c.create(pod('outside'));
    await c.delete('Namespace', 'lab');
    await eventually(async () => !(await exists('Namespace', 'lab')), 'the namespace to be deleted');
    expect((await c.list('Pod', { namespace: 'lab' })).items).toEqual([]);
    expect((await c.list('DaemonSet', { namespace: 'lab' })).items).toEqual([]);
    expect(await podNames()).toEqual(['outside']);
  });
});
