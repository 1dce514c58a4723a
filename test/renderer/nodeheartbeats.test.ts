/**
 * The Nodes table's heartbeat column against a real control plane through the bridge: the
 * node and lease stores as the app starts them, joined so that a renewed lease re-sorts its
 * node's row although the Node object did not change — a table sorted by heartbeat stays in
 * order as leases are renewed, and a node without a lease sorts by its status heartbeat.
 */
import { createPinia, setActivePinia } from 'pinia';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Lease, Node } from '../../client/api/types.js';
import { NODE_LEASE_NAMESPACE } from '../../client/api/wellknown.js';
import { rfc3339, rfc3339Micro } from '../../client/util/clock.js';
import { heartbeat, nodeLeaseKey } from '../../renderer/src/node/heartbeat.js';
import { useNodeLeases, useNodes } from '../../renderer/src/stores/kinds.js';
import { joinedSource } from '../../renderer/src/table/joinedsource.js';
import { SortedRows } from '../../renderer/src/table/sortedrows.js';
import { timeSortValue } from '../../renderer/src/util/format.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';
import { loopbackBridge } from './loopback.js';

let t: TestControlPlane;

beforeEach(async () => {
  setActivePinia(createPinia());
  t = await startTestControlPlane({ controllers: false });
});
afterEach(async () => {
  await t.close();
});

it('re-sorts a node by heartbeat when its lease is renewed, its Node unchanged', async () => {
  const admin = t.cp.client();
  const now = Date.now();
  const node = (name: string, statusHeartbeat: number): Node => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: rfc3339(statusHeartbeat) }] },
  });
  const lease = (name: string, renewed: number): Lease => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: NODE_LEASE_NAMESPACE },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: rfc3339Micro(renewed) },
  });
  // Status heartbeats say a, b, c (youngest first); the leases say otherwise; d has no lease.
  await admin.create(node('a', now - 60_000));
  await admin.create(node('b', now - 120_000));
  await admin.create(node('c', now - 180_000));
  await admin.create(node('d', now - 90_000));
  await admin.create(lease('a', now - 30_000));
  await admin.create(lease('b', now - 20_000));
  const c = await admin.create(lease('c', now - 10_000));

  const { bridge } = loopbackBridge(t);
  const nodes = useNodes();
  const leases = useNodeLeases();
  nodes.start(bridge);
  leases.start(bridge, { namespace: NODE_LEASE_NAMESPACE });
  const lastHeartbeat = (n: Node) => heartbeat(n, leases.get(nodeLeaseKey(n.metadata!.name!)));
  const source = joinedSource(nodes, leases, (l) => l.metadata?.name);
  const rows = new SortedRows<Node>(() => source.values(), {
    value: (n) => timeSortValue(lastHeartbeat(n)),
    descending: false,
  });
  source.onBatch((changes) => rows.apply(changes));
  const order = () => rows.all().map((n) => n.metadata!.name);

  await eventually(() => order().join() === 'c,b,a,d', `sorted by lease (${order()})`, 10_000);
  const nodeC = nodes.get('c');

  await admin.update({ ...c, spec: { ...c.spec, renewTime: rfc3339Micro(now - 100_000) } });
  await eventually(() => order().join() === 'b,a,d,c', `c's old renewal sorts it last (${order()})`, 10_000);
  expect(nodes.get('c')).toBe(nodeC);
});
