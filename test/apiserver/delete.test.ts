import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Namespace, Pod } from '../../client/api/types.js';
import { clone } from '../../client/util/objects.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer();
});
afterEach(async () => t.close());

const pod = (name: string, nodeName?: string, extra: Partial<Pod['spec']> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', command: ['sleep', '1'] }], ...(nodeName ? { nodeName } : {}), ...extra },
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected the request to fail');
}

describe('graceful deletion of pods', () => {
  it('marks a running pod with a deletionTimestamp, then removes it on a delete with grace 0', async () => {
    await t.admin.create(pod('web', 'pi-1', { terminationGracePeriodSeconds: 45 }));
    const first = await t.admin.delete('Pod', 'web');
    expect(first.deleted).toBe(false);
    expect(first.object.metadata?.deletionTimestamp).toBe('2026-11-29T10:00:45Z');
    expect(first.object.metadata?.deletionGracePeriodSeconds).toBe(45);
    expect((await t.admin.get('Pod', 'web')).metadata?.deletionTimestamp).toBe('2026-11-29T10:00:45Z');

    // A second delete with the same grace changes nothing; a shorter one shortens it.
    t.clock.advance(5_000);
    const again = await t.admin.delete('Pod', 'web');
    expect(again.object.metadata?.resourceVersion).toBe(first.object.metadata?.resourceVersion);
    const shorter = await t.admin.delete('Pod', 'web', { gracePeriodSeconds: 10 });
    expect(shorter.object.metadata?.deletionGracePeriodSeconds).toBe(10);
    expect(shorter.object.metadata?.deletionTimestamp).toBe('2026-11-29T10:00:15Z');

    const final = await t.admin.delete('Pod', 'web', { gracePeriodSeconds: 0 });
    expect(final.deleted).toBe(true);
    await expect(t.admin.get('Pod', 'web')).rejects.toMatchObject({ reason: 'NotFound' });
  });

  it('deletes an unscheduled or finished pod at once', async () => {
    await t.admin.create(pod('pending'));
    expect((await t.admin.delete('Pod', 'pending')).deleted).toBe(true);
    const done = await t.admin.create(pod('done', 'pi-1'));
    await t.admin.updateStatus({ ...clone(done), status: { phase: 'Succeeded' } });
    expect((await t.admin.delete('Pod', 'done')).deleted).toBe(true);
  });

  it('refuses a negative grace period', async () => {
    await t.admin.create(pod('web', 'pi-1'));
    expect((await rejection(t.admin.delete('Pod', 'web', { gracePeriodSeconds: -1 }))).reason).toBe(
      'BadRequest',
    );
  });
});

describe('finalizers', () => {
  it('hold an object until they are removed, and refuse new ones once deleting', async () => {
    const created = await t.admin.create(pod('held', undefined, {}));
    const withFinalizer = await t.admin.update({
      ...clone(created),
      metadata: { ...clone(created.metadata), finalizers: ['example.com/cleanup'] },
    });
    const res = await t.admin.delete('Pod', 'held');
    expect(res.deleted).toBe(false);
    expect(res.object.metadata?.deletionTimestamp).toBe('2026-11-29T10:00:00Z');
    expect(res.object.metadata?.finalizers).toEqual(['example.com/cleanup']);

    const sneaky = clone(res.object);
    sneaky.metadata!.finalizers = ['example.com/cleanup', 'example.com/more'];
    expect((await rejection(t.admin.update(sneaky))).message).toContain('no new finalizers can be added');

    const released = clone(res.object);
    released.metadata!.finalizers = [];
    const gone = await t.admin.update(released);
    expect(gone.metadata?.name).toBe('held');
    await expect(t.admin.get('Pod', 'held')).rejects.toMatchObject({ reason: 'NotFound' });
    expect(withFinalizer.metadata?.finalizers).toEqual(['example.com/cleanup']);
  });

  it('adds the orphan or foregroundDeletion finalizer for those propagation policies', async () => {
    await t.admin.create(pod('a'));
    await t.admin.create(pod('b'));
    expect(
      (await t.admin.delete('Pod', 'a', { propagationPolicy: 'Orphan' })).object.metadata?.finalizers,
    ).toEqual(['orphan']);
    expect(
      (await t.admin.delete('Pod', 'b', { propagationPolicy: 'Foreground' })).object.metadata?.finalizers,
    ).toEqual(['foregroundDeletion']);
    expect(
      (await rejection(t.admin.delete('Pod', 'b', { propagationPolicy: 'Sideways' as 'Orphan' }))).reason,
    ).toBe('BadRequest');
  });
});

describe('preconditions', () => {
  it('checks uid and resourceVersion before deleting', async () => {
    const p = await t.admin.create(pod('p'));
    const wrongUid = await rejection(t.admin.delete('Pod', 'p', { preconditions: { uid: 'someone-else' } }));
    expect(wrongUid.reason).toBe('Conflict');
    expect(wrongUid.message).toContain('precondition failed');
    const wrongRv = await rejection(t.admin.delete('Pod', 'p', { preconditions: { resourceVersion: '1' } }));
    expect(wrongRv.reason).toBe('Conflict');
    const ok = await t.admin.delete('Pod', 'p', {
      preconditions: { uid: p.metadata?.uid, resourceVersion: p.metadata?.resourceVersion },
    });
    expect(ok.deleted).toBe(true);
    expect((await rejection(t.admin.delete('Pod', 'p'))).reason).toBe('NotFound');
  });
});

describe('namespaces', () => {
  it('terminate: marked Terminating, and gone once their finalizers are cleared', async () => {
    await t.admin.create<Namespace>({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } });
    const res = await t.admin.delete('Namespace', 'lab');
    expect(res.deleted).toBe(false);
    expect(res.object.status?.phase).toBe('Terminating');
    expect(res.object.spec?.finalizers).toEqual(['kubernetes']);
    const finalized = clone(res.object as Namespace);
    finalized.spec!.finalizers = [];
    await t.admin.update(finalized);
    await expect(t.admin.get('Namespace', 'lab')).rejects.toMatchObject({ reason: 'NotFound' });
  });
});
