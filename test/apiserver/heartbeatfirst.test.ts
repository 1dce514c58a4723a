/**
 * Which writes the apiserver asks the store to commit ahead of the others waiting with them
 * (WriteOptions.urgent; sqlite.test.ts shows the store doing so): an agent's heartbeat — its
 * Lease, its Node — and nothing else, so that a flood of other writes cannot push a lease
 * renewal past the node's grace period.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lease, Node, Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { openSqliteStorage } from '../../main/storage/sqlite.js';
import type { Storage, WriteOptions } from '../../main/storage/types.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';

/** A store that notes, for each write, whether it was asked to commit it urgently. */
function noting(inner: Storage): { storage: Storage; urgent: Map<string, boolean | undefined> } {
  const urgent = new Map<string, boolean | undefined>();
  const note = (key: string, options?: WriteOptions) => urgent.set(key, options?.urgent);
  const storage: Storage = {
    backend: inner.backend,
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    create: (key, value, options) => (note(key, options), inner.create(key, value, options)),
    update: (key, value, rev, options) => (note(key, options), inner.update(key, value, rev, options)),
    delete: (key, rev) => inner.delete(key, rev),
    watch: (prefix, from, callbacks) => inner.watch(prefix, from, callbacks),
    currentRevision: () => inner.currentRevision(),
    compactedRevision: () => inner.compactedRevision(),
    compact: (rev) => inner.compact(rev),
    close: () => inner.close(),
  };
  return { storage, urgent };
}

let t: TestApiServer;
let store: ReturnType<typeof noting>;
let admin: Client;
let agent: Client;

const lease = (name: string, namespace = 'kube-node-lease'): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace },
  spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: '2026-12-07T10:00:00.000000Z' },
});

beforeAll(async () => {
  store = noting(await openSqliteStorage({ path: ':memory:', compactIntervalMs: 0 }));
  t = await startTestApiServer({ storage: store.storage });
  admin = t.admin;
  agent = t.as({ name: 'system:node:pi-1', role: 'node', nodeName: 'pi-1' });
});
afterAll(async () => t.close());

describe('heartbeats first', () => {
  it("asks the store to commit an agent's Lease and Node writes urgently", async () => {
    const created = await agent.create<Lease>(lease('pi-1'));
    expect(store.urgent.get('/registry/leases/kube-node-lease/pi-1')).toBe(true);
    store.urgent.clear();
    await agent.update<Lease>({
      ...created,
      spec: { ...created.spec, renewTime: '2026-12-07T10:00:10.000000Z' },
    });
    expect(store.urgent.get('/registry/leases/kube-node-lease/pi-1')).toBe(true);

    const node = await agent.create<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'pi-1' } });
    expect(store.urgent.get('/registry/nodes/pi-1')).toBe(true);
    store.urgent.clear();
    await agent.updateStatus<Node>({ ...node, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    expect(store.urgent.get('/registry/nodes/pi-1')).toBe(true);
  });

  it("leaves an agent's other writes, and anyone else's Lease or Node writes, in their turn", async () => {
    const pod = await admin.create<Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default' },
      spec: { nodeName: 'pi-1', containers: [{ name: 'c', image: 'busybox' }] },
    });
    store.urgent.clear();
    await agent.updateStatus<Pod>({ ...pod, status: { phase: 'Running' } });
    await admin.create<Lease>(lease('by-admin', 'default'));
    await admin.create<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'pi-2' } });
    expect([...store.urgent]).toEqual([
      ['/registry/pods/default/p', undefined],
      ['/registry/leases/default/by-admin', undefined],
      ['/registry/nodes/pi-2', undefined],
    ]);
  });
});
