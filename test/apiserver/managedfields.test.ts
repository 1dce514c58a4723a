/**
 * managedFields and server-side apply over the gRPC API: who each write is recorded for
 * (the request's fieldManager, the client's, or the credential's), apply through Patch with
 * patchType "apply" — conflicts as errors whose causes name each field and its owner — and a
 * status apply that owns status only.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { ConfigMap, KubeObject, Node } from '../../client/api/types.js';
import { FakeClock } from '../../client/util/clock.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

const clock = new FakeClock(Date.parse('2026-12-06T08:00:00Z'));
let t: TestControlPlane;
beforeAll(async () => {
  t = await startTestControlPlane({ clock });
});
afterAll(async () => {
  await t?.close();
});

const owners = (o: KubeObject) =>
  (o.metadata?.managedFields ?? []).map(
    (e) => `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`,
  );

it('records each write for its manager: the one named, the client default, else the credential', async () => {
  const admin = t.client();
  const labctl = t.client({ fieldManager: 'labctl' });
  const cm = await admin.create<ConfigMap>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'owners', namespace: 'default' },
    data: { a: '1' },
  });
  expect(cm.metadata?.managedFields).toEqual([
    {
      manager: 'admin',
      operation: 'Update',
      apiVersion: 'v1',
      time: '2026-12-06T08:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { 'f:a': {} } },
    },
  ]);
  clock.advance(60_000);
  const patched = await labctl.patch(
    'ConfigMap',
    'owners',
    { data: { a: '2', b: '1' } },
    { namespace: 'default' },
  );
  expect(owners(patched)).toEqual(['labctl/Update']);
  expect(patched.metadata?.managedFields?.[0]).toMatchObject({
    time: '2026-12-06T08:01:00Z',
    fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } },
  });
  const named = await labctl.update(
    { ...patched, data: { ...patched.data, c: '1' } },
    { fieldManager: 'backup-restore' },
  );
  expect(owners(named).sort()).toEqual(['backup-restore/Update', 'labctl/Update']);
  // An update that changes nothing records nothing.
  const again = await labctl.update(named);
  expect(again.metadata?.resourceVersion).toBe(named.metadata?.resourceVersion);
  const bad = await labctl.update(named, { fieldManager: 'x'.repeat(200) }).catch((e: unknown) => e);
  expect((bad as ApiError).message).toContain('longer than 128 characters');
});

it('applies through Patch: creates, refuses a conflict naming each field and owner, and takes fields when forced', async () => {
  const ci = t.client();
  const apply = (data: Record<string, string>, force = false) =>
    ci.patch(
      'ConfigMap',
      'applied',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data },
      { namespace: 'default', type: 'apply', fieldManager: 'ci', force },
    );
  const created = await apply({ mode: 'a', size: '1' });
  expect(owners(created)).toEqual(['ci/Apply']);
  await t
    .client({ fieldManager: 'ops' })
    .patch('ConfigMap', 'applied', { data: { mode: 'b', size: '2' } }, { namespace: 'default' });
  const err = await apply({ mode: 'a', size: '1' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).reason).toBe('Conflict');
  expect((err as ApiError).message).toMatch(
    /^Apply failed with 2 conflicts: conflicts with "ops" using v1 at \S+:\n- \.data\.mode\n- \.data\.size$/,
  );
  expect((err as ApiError).causes.map((c) => c.field)).toEqual(['.data.mode', '.data.size']);
  const forced = await apply({ mode: 'a', size: '1' }, true);
  expect(forced.data).toEqual({ mode: 'a', size: '1' });
  expect(owners(forced)).toEqual(['ci/Apply']);
  const noManager = await ci
    .patch(
      'ConfigMap',
      'applied',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' } },
      { namespace: 'default', type: 'apply' },
    )
    .catch((e: unknown) => e);
  expect((noManager as ApiError).causes.map((c) => c.field)).toEqual(['fieldManager']);
});

it('applies status through the status subresource, owning status only, beside the agent and the controllers', async () => {
  const admin = t.client();
  await admin.create<Node>({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'managed-node', labels: { zone: 'a' } },
  });
  const applied = await admin.patch(
    'Node',
    'managed-node',
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'managed-node', labels: { zone: 'b' } },
      status: { conditions: [{ type: 'Example', status: 'True' }] },
    },
    { type: 'apply', fieldManager: 'probe', subresource: 'status' },
  );
  expect(applied.metadata?.labels).toEqual({ zone: 'a' });
  expect(applied.status?.conditions).toEqual([{ type: 'Example', status: 'True' }]);
  const entry = applied.metadata?.managedFields?.find((e) => e.manager === 'probe');
  expect(entry).toMatchObject({
    operation: 'Apply',
    subresource: 'status',
    fieldsV1: {
      'f:status': { 'f:conditions': { 'k:{"type":"Example"}': { '.': {}, 'f:status': {}, 'f:type': {} } } },
    },
  });
});

it('keeps no managedFields on NodeMetrics, as Kubernetes’ metrics API serves them, whoever writes them and however', async () => {
  const admin = t.client();
  await admin.create<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'metered-node' } });
  const sample = (cpu: string): KubeObject =>
    ({
      apiVersion: 'metrics.k8s.io/v1beta1',
      kind: 'NodeMetrics',
      metadata: {
        name: 'metered-node',
        managedFields: [
          {
            manager: 'sneaky',
            operation: 'Update',
            apiVersion: 'metrics.k8s.io/v1beta1',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:usage': {} },
          },
        ],
      },
      timestamp: '2026-12-06T08:00:00Z',
      window: '10s',
      usage: { cpu, memory: '1024Ki' },
    }) as KubeObject;
  const created = await admin.create(sample('100m'));
  expect(created.metadata?.managedFields).toBeUndefined();
  const updated = await admin.update({
    ...sample('200m'),
    metadata: { ...sample('200m').metadata, resourceVersion: created.metadata?.resourceVersion },
  });
  expect(updated.metadata?.managedFields).toBeUndefined();
  const { managedFields: _sent, ...appliedMeta } = sample('300m').metadata!;
  const applied = await admin.patch(
    'NodeMetrics',
    'metered-node',
    { ...sample('300m'), metadata: appliedMeta },
    {
      type: 'apply',
      fieldManager: 'probe',
      force: true,
    },
  );
  expect((applied as { usage?: Record<string, string> }).usage?.cpu).toBe('300m');
  expect(applied.metadata?.managedFields).toBeUndefined();
  expect((await admin.get('NodeMetrics', 'metered-node')).metadata?.managedFields).toBeUndefined();
});
