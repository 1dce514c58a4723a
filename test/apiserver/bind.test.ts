/**
 * Binding a pod to a node (Kubernetes' pods/binding): the one way a pod's spec.nodeName is
 * set after creation, exactly once, by someone allowed to schedule.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Pod } from '../../client/api/types.js';
import { startTestApiServer, VIEWER, type TestApiServer } from '../support/apiserver.js';
import { startTestControlPlane } from '../support/controlplane.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer();
});
afterEach(async () => t.close());

const pending = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected the request to fail');
}

describe('binding', () => {
  it('sets spec.nodeName and PodScheduled=True once', async () => {
    const created = await t.admin.create(pending('web'));
    const bound = await t.admin.bind('default', 'web', 'lab-1', { uid: created.metadata!.uid });
    expect(bound.spec?.nodeName).toBe('lab-1');
    expect(bound.status?.conditions).toContainEqual({
      type: 'PodScheduled',
      status: 'True',
      lastTransitionTime: '2026-11-29T10:00:00Z',
    });
    expect((await t.admin.get('Pod', 'web', { namespace: 'default' })).spec?.nodeName).toBe('lab-1');

    const again = await rejection(t.admin.bind('default', 'web', 'lab-2'));
    expect(again.reason).toBe('Conflict');
    expect(again.message).toContain('pod web is already assigned to node "lab-1"');
    expect((await t.admin.get('Pod', 'web', { namespace: 'default' })).spec?.nodeName).toBe('lab-1');
  });

  it('only the pod it was meant for, and not one being deleted', async () => {
    await t.admin.create(pending('web'));
    const stale = await rejection(t.admin.bind('default', 'web', 'lab-1', { uid: 'not-this-one' }));
    expect(stale.reason).toBe('Conflict');
    expect(stale.message).toContain('deleted and created again');

    const other = await t.admin.create({
      ...pending('held'),
      metadata: { ...pending('held').metadata, finalizers: ['example.com/hold'] },
    });
    await t.admin.delete('Pod', 'held', { namespace: 'default' });
    const deleting = await rejection(t.admin.bind('default', 'held', 'lab-1', { uid: other.metadata!.uid }));
    expect(deleting.reason).toBe('Conflict');
    expect(deleting.message).toContain('pod held is being deleted, cannot be assigned to a host');

    expect((await rejection(t.admin.bind('default', 'missing', 'lab-1'))).reason).toBe('NotFound');
  });

  it('refuses a bad target, naming the field, and changes nothing', async () => {
    await t.admin.create(pending('web'));
    const bad = await rejection(t.admin.bind('default', 'web', 'Not_A_Node'));
    expect(bad.reason).toBe('Invalid');
    expect(bad.message).toContain('target.name');
    const empty = await rejection(t.admin.bind('default', 'web', ''));
    expect(empty.message).toContain('target.name');
    expect((await t.admin.get('Pod', 'web', { namespace: 'default' })).spec?.nodeName).toBeUndefined();
  });

  it('is forbidden to viewers and to nodes', async () => {
    await t.admin.create(pending('web'));
    expect((await rejection(t.as(VIEWER).bind('default', 'web', 'lab-1'))).reason).toBe('Forbidden');
    const node = t.as({ name: 'system:node:lab-1', role: 'node', nodeName: 'lab-1' });
    const denied = await rejection(node.bind('default', 'web', 'lab-1'));
    expect(denied.reason).toBe('Forbidden');
    expect(denied.message).toContain('pods/binding');
    expect((await t.admin.get('Pod', 'web', { namespace: 'default' })).spec?.nodeName).toBeUndefined();
  });

  it('works over gRPC with TLS and a token', async () => {
    const cp = await startTestControlPlane({ controllers: false });
    try {
      const c = cp.client();
      await c.create(pending('web'));
      const bound = await c.bind('default', 'web', 'lab-1');
      expect(bound.spec?.nodeName).toBe('lab-1');
      expect((await rejection(c.bind('default', 'web', 'lab-1'))).reason).toBe('Conflict');
    } finally {
      await cp.close();
    }
  });
});
