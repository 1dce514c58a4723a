/**
 * The node authorizer and NodeRestriction: node A's credential against every write on node B's
 * objects and on kinds that are not a node's business is PERMISSION_DENIED; A's own writes pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Event, Lease, Node, NodeMetrics, Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { clone } from '../../client/util/objects.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';

let t: TestApiServer;
let a: Client;
let admin: Client;

const node = (name: string, labels: Record<string, string> = {}): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
});
const lease = (name: string): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace: 'kube-node-lease' },
  spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: '2026-11-29T10:00:00.000000Z' },
});
const metrics = (name: string): NodeMetrics => ({
  apiVersion: 'metrics.k8s.io/v1beta1',
  kind: 'NodeMetrics',
  metadata: { name },
  timestamp: '2026-11-29T10:00:00Z',
  window: '10s',
  usage: { cpu: '250m', memory: '1Gi' },
});
const pod = (name: string, nodeName?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', command: ['sleep', '1'] }], ...(nodeName ? { nodeName } : {}) },
});
const event = (name: string, involved: Event['involvedObject']): Event => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  involvedObject: involved,
  reason: 'Test',
  message: 'm',
  type: 'Normal',
});

beforeAll(async () => {
  t = await startTestApiServer();
  admin = t.admin;
  a = t.as({ name: 'system:node:node-a', role: 'node', nodeName: 'node-a' });
  await admin.create(node('node-b'));
  await admin.create(lease('node-b'));
  await admin.create(metrics('node-b'));
  await admin.create(pod('on-b', 'node-b'));
  await admin.create(pod('on-a', 'node-a'));
  await admin.create(pod('unscheduled'));
  await admin.create(event('about-b', { kind: 'Node', name: 'node-b' }));
  await admin.create(event('about-b-patched', { kind: 'Node', name: 'node-b' }));
  await admin.create(event('about-pod-on-b', { kind: 'Pod', name: 'on-b', namespace: 'default' }));
});
afterAll(async () => t.close());

async function denied(p: Promise<unknown>): Promise<void> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err, 'expected PERMISSION_DENIED').toBeInstanceOf(ApiError);
  expect((err as ApiError).reason, (err as Error).message).toBe('Forbidden');
  expect((err as ApiError).code).toBe(7);
}

describe("node A against node B's objects and other kinds", () => {
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['create Node B', () => a.create(node('node-b2'))],
    [
      'update Node B',
      async () =>
        a.update({
          ...clone(await admin.get('Node', 'node-b')),
          metadata: { ...clone((await admin.get('Node', 'node-b')).metadata), labels: { x: 'y' } },
        }),
    ],
    ['update status of Node B', async () => a.updateStatus(clone(await admin.get('Node', 'node-b')))],
    ['patch Node B', () => a.patch('Node', 'node-b', { metadata: { labels: { x: 'y' } } })],
    [
      'patch status of Node B',
      () => a.patch('Node', 'node-b', { status: { conditions: [] } }, { subresource: 'status' }),
    ],
    ['delete Node B', () => a.delete('Node', 'node-b')],
    ['delete its own Node', () => a.delete('Node', 'node-a')],
    ['get Node B', () => a.get('Node', 'node-b')],
    ['list all Nodes', () => a.list('Node')],
    ['watch all Nodes', () => a.watch('Node')],
    ['create Lease B', () => a.create(lease('node-b-2'))],
    [
      'update Lease B',
      async () => a.update(clone(await admin.get('Lease', 'node-b', { namespace: 'kube-node-lease' }))),
    ],
    [
      'a lease outside kube-node-lease',
      () => a.create({ ...lease('node-a'), metadata: { name: 'node-a', namespace: 'default' } }),
    ],
    ['create NodeMetrics B', () => a.create(metrics('node-b3'))],
    ['update NodeMetrics B', async () => a.update(clone(await admin.get('NodeMetrics', 'node-b')))],
    ['get a pod on B', () => a.get('Pod', 'on-b')],
    ['read the logs of a pod on B', () => a.logs('default', 'on-b')],
    ['read the logs of an unscheduled pod', () => a.logs('default', 'unscheduled')],
    [
      'update status of a pod on B',
      async () => a.updateStatus({ ...clone(await admin.get('Pod', 'on-b')), status: { phase: 'Running' } }),
    ],
    [
      'patch status of a pod on B',
      () => a.patch('Pod', 'on-b', { status: { phase: 'Running' } }, { subresource: 'status' }),
    ],
    ['delete a pod on B', () => a.delete('Pod', 'on-b')],
    ['delete an unscheduled pod', () => a.delete('Pod', 'unscheduled')],
    [
      'update the spec of its own pod',
      async () =>
        a.update({
          ...clone(await admin.get('Pod', 'on-a')),
          spec: { ...clone((await admin.get('Pod', 'on-a')).spec), activeDeadlineSeconds: 5 },
        }),
    ],
    ['create a pod', () => a.create(pod('sneaky', 'node-a'))],
    ['list all pods', () => a.list('Pod')],
    ['list pods on B', () => a.list('Pod', { fieldSelector: 'spec.nodeName=node-b' })],
    ['watch all pods', () => a.watch('Pod')],
    ['an event about Node B', () => a.create(event('ev-b', { kind: 'Node', name: 'node-b' }))],
    [
      'an event about a pod on B',
      () => a.create(event('ev-pb', { kind: 'Pod', name: 'on-b', namespace: 'default' })),
    ],
    [
      'an event about a DaemonSet',
      () => a.create(event('ev-ds', { kind: 'DaemonSet', name: 'x', namespace: 'default' })),
    ],
    [
      'rewrite an event about Node B into one about itself',
      async () =>
        a.update({
          ...clone(await admin.get('Event', 'about-b')),
          involvedObject: { kind: 'Node', name: 'node-a' },
        }),
    ],
    [
      'patch an event about Node B into one about itself',
      () => a.patch('Event', 'about-b-patched', { involvedObject: { kind: 'Node', name: 'node-a' } }),
    ],
    [
      'rewrite an event about a pod on B into one about its own pod',
      async () =>
        a.update({
          ...clone(await admin.get('Event', 'about-pod-on-b')),
          involvedObject: { kind: 'Pod', name: 'on-a', namespace: 'default' },
        }),
    ],
    ['list events', () => a.list('Event')],
    [
      'create a Namespace',
      () => a.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'mine' } }),
    ],
    ['delete a Namespace', () => a.delete('Namespace', 'default')],
    [
      'create a DaemonSet',
      () =>
        a.createManifest(
          'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, command: [x]}]}}}\n',
        ),
    ],
    ['list DaemonSets', () => a.list('DaemonSet')],
    [
      'create a ControllerRevision',
      () =>
        a.create({
          apiVersion: 'apps/v1',
          kind: 'ControllerRevision',
          metadata: { name: 'r' },
          revision: 1,
          data: {},
        }),
    ],
    ['list ControllerRevisions', () => a.list('ControllerRevision')],
  ];
  it.each(cases)('%s: PERMISSION_DENIED', async (_name, attempt) => {
    await denied(attempt());
  });

  it("leaves node B's events as they were", async () => {
    for (const name of ['about-b', 'about-b-patched'])
      expect((await admin.get('Event', name)).involvedObject).toEqual({ kind: 'Node', name: 'node-b' });
    expect((await admin.get('Event', 'about-pod-on-b')).involvedObject?.name).toBe('on-b');
  });
});

describe('node A on its own objects', () => {
  it('registers, reports status, renews its lease, reports metrics, runs its pods and records events', async () => {
    const registered = await a.create(
      node('node-a', { 'kubernetes.io/os': 'linux', 'example.com/rack': '3' }),
    );
    expect(registered.metadata?.name).toBe('node-a');
    const s = clone(registered);
    s.status!.conditions = [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }];
    expect((await a.updateStatus(s)).status?.conditions?.[0].status).toBe('False');
    expect(
      (await a.patch('Node', 'node-a', { metadata: { labels: { 'example.com/rack': '4' } } })).metadata
        ?.labels?.['example.com/rack'],
    ).toBe('4');
    expect((await a.get('Node', 'node-a')).metadata?.name).toBe('node-a');
    expect((await a.list('Node', { fieldSelector: 'metadata.name=node-a' })).items).toHaveLength(1);

    const l = await a.create(lease('node-a'));
    await a.update({ ...clone(l), spec: { ...clone(l.spec), renewTime: '2026-11-29T10:00:10.000000Z' } });
    const m = await a.create(metrics('node-a'));
    await a.update({ ...clone(m), usage: { cpu: '500m', memory: '1Gi' } });

    expect(
      (await a.list('Pod', { fieldSelector: 'spec.nodeName=node-a' })).items.map((p) => p.metadata?.name),
    ).toEqual(['on-a']);
    (await a.watch('Pod', { fieldSelector: 'spec.nodeName=node-a' })).stop();
    expect((await a.get('Pod', 'on-a')).metadata?.name).toBe('on-a');
    // Its own pods' logs pass authorization (this apiserver has no agent tunnels to go further).
    await expect(a.logs('default', 'on-a')).rejects.toMatchObject({ reason: 'FailedPrecondition' });
    await a.patch('Pod', 'on-a', { status: { phase: 'Running' } }, { subresource: 'status' });
    const ev = await a.create(event('ev-a', { kind: 'Node', name: 'node-a' }));
    await a.update({ ...clone(ev), count: 2 });
    await a.patch('Event', 'ev-a', { count: 3 });
    await a.create(event('ev-pa', { kind: 'Pod', name: 'on-a', namespace: 'default' }));
    expect((await a.list('Namespace')).items.length).toBeGreaterThan(0);
    const gone = await a.delete('Pod', 'on-a', { gracePeriodSeconds: 0 });
    expect(gone.deleted).toBe(true);
  });

  it('may not give itself reserved labels or change its own spec', async () => {
    await denied(
      a.patch('Node', 'node-a', { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } }),
    );
    await denied(a.patch('Node', 'node-a', { spec: { taints: [], unschedulable: true } }));
  });
});
