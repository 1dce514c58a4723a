import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { DaemonSet, Node, Pod } from '../../client/api/types.js';
import { clone } from '../../client/util/objects.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer();
});
afterEach(async () => t.close());

const daemonSet = (name: string, image = 'exporter:1'): DaemonSet => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image }] } },
  },
});

const node = (name: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  status: {
    capacity: { cpu: '4', memory: '8Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True' }],
  },
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected the request to fail');
}

describe('update', () => {
  it('bumps generation on spec changes only', async () => {
    const ds = await t.admin.create(daemonSet('exp'));
    const relabeled = await t.admin.update({
      ...clone(ds),
      metadata: { ...clone(ds.metadata), labels: { team: 'a' } },
    });
    expect(relabeled.metadata?.generation).toBe(1);
    expect(Number(relabeled.metadata?.resourceVersion)).toBeGreaterThan(Number(ds.metadata?.resourceVersion));
    const changed = clone(relabeled);
    changed.spec!.template!.spec!.containers![0].image = 'exporter:2';
    const bumped = await t.admin.update(changed);
    expect(bumped.metadata?.generation).toBe(2);
  });

  it('refuses a stale resourceVersion with a conflict, and accepts an unconditional update', async () => {
    const ds = await t.admin.create(daemonSet('exp'));
    await t.admin.update({ ...clone(ds), metadata: { ...clone(ds.metadata), labels: { v: '1' } } });
    const stale = await rejection(
      t.admin.update({ ...clone(ds), metadata: { ...clone(ds.metadata), labels: { v: '2' } } }),
    );
    expect(stale.reason).toBe('Conflict');
    expect(stale.code).toBe(10);
    expect(stale.message).toContain('the object has been modified');
    const unconditional = clone(ds);
    delete unconditional.metadata!.resourceVersion;
    unconditional.metadata!.labels = { v: '3' };
    expect((await t.admin.update(unconditional)).metadata?.labels).toEqual({ v: '3' });
  });

  it('does not write when nothing changed', async () => {
    const ds = await t.admin.create(daemonSet('exp'));
    const same = await t.admin.update(clone(ds));
    expect(same.metadata?.resourceVersion).toBe(ds.metadata?.resourceVersion);
  });

  it('keeps system metadata from the stored object', async () => {
    const ds = await t.admin.create(daemonSet('exp'));
    const forged = clone(ds);
    forged.metadata!.creationTimestamp = '1999-01-01T00:00:00Z';
    forged.metadata!.generation = 42;
    forged.metadata!.labels = { x: 'y' };
    const updated = await t.admin.update(forged);
    expect(updated.metadata?.creationTimestamp).toBe(ds.metadata?.creationTimestamp);
    expect(updated.metadata?.generation).toBe(1);
    expect(updated.metadata?.uid).toBe(ds.metadata?.uid);
  });

  it('treats status as a subresource', async () => {
    const ds = await t.admin.create(daemonSet('exp'));
    const withStatus = { ...clone(ds), status: { desiredNumberScheduled: 3 } };
    const mainUpdate = await t.admin.update<DaemonSet>(withStatus);
    expect(mainUpdate.status).toEqual({});

    const statusOnly = clone(mainUpdate);
    statusOnly.status = { desiredNumberScheduled: 3, numberReady: 2, observedGeneration: 1 };
    statusOnly.spec!.template!.spec!.containers![0].image = 'sneaky:9';
    statusOnly.metadata!.labels = { sneaky: 'yes' };
    const afterStatus = await t.admin.updateStatus(statusOnly);
    expect(afterStatus.status).toEqual({ desiredNumberScheduled: 3, numberReady: 2, observedGeneration: 1 });
    expect(afterStatus.spec?.template?.spec?.containers?.[0].image).toBe('exporter:1');
    expect(afterStatus.metadata?.labels).toBeUndefined();
    expect(afterStatus.metadata?.generation).toBe(1);
  });

  it('keeps a node status set at registration and lets UpdateStatus change it', async () => {
    const n = await t.admin.create(node('pi-1'));
    expect(n.status?.capacity).toEqual({ cpu: '4', memory: '8Gi', pods: '110' });
    const s = clone(n);
    s.status!.conditions = [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }];
    const updated = await t.admin.updateStatus(s);
    expect(updated.status?.conditions?.[0].status).toBe('False');
  });

  it('enforces immutable fields', async () => {
    const ds = await t.admin.create(daemonSet('exp'));
    const moved = clone(ds);
    moved.spec!.selector = { matchLabels: { app: 'other' } };
    moved.spec!.template!.metadata!.labels = { app: 'other' };
    const err = await rejection(t.admin.update(moved));
    expect(err.reason).toBe('Invalid');
    expect(err.causes).toEqual([
      expect.objectContaining({ field: 'spec.selector', message: 'field is immutable' }),
    ]);

    const p = await t.admin.create<Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'a:1' }] },
    });
    const newImage = clone(p);
    newImage.spec!.containers![0].image = 'a:2';
    expect((await t.admin.update(newImage)).spec?.containers?.[0].image).toBe('a:2');
    const newCommand = clone(await t.admin.get('Pod', 'p'));
    newCommand.spec!.containers![0].command = ['other'];
    expect((await rejection(t.admin.update(newCommand))).message).toContain(
      'pod updates may not change fields',
    );
  });

  it('returns NotFound for a missing object', async () => {
    const err = await rejection(t.admin.update(daemonSet('ghost')));
    expect(err.reason).toBe('NotFound');
    expect(err.message).toBe('DaemonSet "ghost" not found in namespace "default"');
  });
});

describe('patch', () => {
  it('applies a JSON merge patch', async () => {
    await t.admin.create(node('pi-1'));
    const patched = await t.admin.patch('Node', 'pi-1', {
      metadata: { labels: { zone: 'attic' } },
      spec: { unschedulable: true },
    });
    expect(patched.metadata?.labels).toEqual({ 'kubernetes.io/hostname': 'pi-1', zone: 'attic' });
    expect(patched.spec?.unschedulable).toBe(true);
    const removed = await t.admin.patch('Node', 'pi-1', { metadata: { labels: { zone: null } } });
    expect(removed.metadata?.labels).toEqual({ 'kubernetes.io/hostname': 'pi-1' });
  });

  it('applies a JSON patch', async () => {
    await t.admin.create(node('pi-1'));
    const patched = await t.admin.patch(
      'Node',
      'pi-1',
      [
        {
          op: 'add',
          path: '/spec/taints',
          value: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
        },
      ],
      { type: 'json' },
    );
    expect(patched.spec?.taints).toEqual([{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]);
    const failedTest = await rejection(
      t.admin.patch('Node', 'pi-1', [{ op: 'test', path: '/spec/unschedulable', value: true }], {
        type: 'json',
      }),
    );
    expect(failedTest.reason).toBe('BadRequest');
  });

  it('rejects a patch that breaks validation and leaves the object as it was', async () => {
    const before = await t.admin.create(node('pi-1'));
    const err = await rejection(
      t.admin.patch('Node', 'pi-1', { spec: { taints: [{ key: 'k', effect: 'Sometimes' }] } }),
    );
    expect(err.reason).toBe('Invalid');
    expect(err.causes[0]).toMatchObject({ field: 'spec.taints[0].effect', type: 'FieldValueNotSupported' });
    const unknown = await rejection(t.admin.patch('Node', 'pi-1', { spec: { unschedulabel: true } }));
    expect(unknown.causes[0]).toMatchObject({ field: 'spec.unschedulabel', type: 'FieldValueUnknown' });
    expect(await t.admin.get('Node', 'pi-1')).toEqual(before);
  });

  it('patches status through the status subresource only', async () => {
    await t.admin.create(node('pi-1'));
    const p = await t.admin.patch(
      'Node',
      'pi-1',
      { status: { capacity: { cpu: '8' } }, spec: { unschedulable: true } },
      { subresource: 'status' },
    );
    expect(p.status?.capacity?.cpu).toBe('8');
    expect(p.spec?.unschedulable).toBeUndefined();
    const main = await t.admin.patch('Node', 'pi-1', { status: { capacity: { cpu: '1' } } });
    expect(main.status?.capacity?.cpu).toBe('8');
  });

  it('honours a resourceVersion in a merge patch as a precondition', async () => {
    const n = await t.admin.create(node('pi-1'));
    await t.admin.patch('Node', 'pi-1', { metadata: { labels: { a: 'b' } } });
    const err = await rejection(
      t.admin.patch('Node', 'pi-1', {
        metadata: { resourceVersion: n.metadata?.resourceVersion, labels: { c: 'd' } },
      }),
    );
    expect(err.reason).toBe('Conflict');
  });

  it('rejects malformed patches', async () => {
    await t.admin.create(node('pi-1'));
    expect((await rejection(t.admin.patch('Node', 'pi-1', '{not json'))).reason).toBe('BadRequest');
    expect((await rejection(t.admin.patch('Node', 'pi-1', { metadata: { name: 'renamed' } }))).reason).toBe(
      'Invalid',
    );
  });
});
