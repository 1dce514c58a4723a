/**
 * labctl's node and rollout verbs against a real control plane with hollow nodes: cordon and
 * uncordon, taint (add, overwrite, remove), top nodes from NodeMetrics, rollout
 * status/history/undo/restart of a DaemonSet, and drain — refused while DaemonSet pods are
 * there without --ignore-daemonsets, then evicting everything else and leaving only them.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import { eventually } from '../support/wait.js';
import { daemonSetObject, isAligned, startCliCluster, tableCells, type CliCluster } from './support.js';

// Every labctl run is a fresh Node process: 1–3 s each on a busy machine, several per test.
vi.setConfig({ testTimeout: 90_000 });

let c: CliCluster;
const NODES = ['nd-0', 'nd-1', 'nd-2'];

const daemon = daemonSetObject('daemon', 'daemon:1');

const solo = (name: string, node: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { app: 'solo' } },
  spec: { nodeName: node, terminationGracePeriodSeconds: 5, containers: [{ name: 'app', image: 'solo:1' }] },
});

const dsStatus = async () => (await c.admin.get('DaemonSet', 'daemon', { namespace: 'default' })).status;
const podsOn = async (node: string) =>
  (await c.admin.list('Pod', { namespace: '', fieldSelector: `spec.nodeName=${node}` })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );

beforeAll(async () => {
  c = await startCliCluster({ hollowNodes: 3, prefix: 'nd' });
  await c.admin.create(daemon);
  await eventually(async () => (await dsStatus())?.numberAvailable === 3, 'daemon on every node');
}, 60_000);

afterAll(async () => {
  await c?.close();
});

it('cordons and uncordons nodes', async () => {
  const cordon = await c.run(['cordon', 'nd-2']);
  expect(cordon).toMatchObject({ code: 0, stdout: 'node/nd-2 cordoned\n' });
  const [again, table] = await Promise.all([c.run(['cordon', 'nd-2']), c.run(['get', 'nodes'])]);
  expect(again.stdout).toBe('node/nd-2 already cordoned\n');
  expect(tableCells(table.stdout)[3].slice(0, 2)).toEqual(['nd-2', 'Ready,SchedulingDisabled']);
  expect(isAligned(table.stdout)).toBe(true);
  expect((await c.run(['uncordon', 'nd-2'])).stdout).toBe('node/nd-2 uncordoned\n');
  expect((await c.admin.get('Node', 'nd-2')).spec?.unschedulable).toBeUndefined();
  expect((await c.run(['uncordon', '-l', 'kubelab.io/pool=nd'])).stdout).toBe(
    'node/nd-0 already uncordoned\nnode/nd-1 already uncordoned\nnode/nd-2 already uncordoned\n',
  );
});

it('taints: adds, refuses to overwrite without --overwrite, removes by key and effect or by key', async () => {
  expect(
    (await c.run(['taint', 'nodes', 'nd-0', 'dedicated=gpu:NoSchedule', 'team:PreferNoSchedule'])).stdout,
  ).toBe('node/nd-0 tainted\n');
  const taints = async () => (await c.admin.get('Node', 'nd-0')).spec?.taints;
  expect(await taints()).toEqual([
    { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
    { key: 'team', effect: 'PreferNoSchedule' },
  ]);
  const refused = await c.run(['taint', 'nodes', 'nd-0', 'dedicated=ml:NoSchedule']);
  expect(refused).toMatchObject({
    code: 1,
    stderr: 'error: node nd-0 already has dedicated taint(s) with same effect(s) and --overwrite is false\n',
  });
  expect((await c.run(['taint', 'node/nd-0', 'dedicated=ml:NoSchedule', '--overwrite'])).stdout).toBe(
    'node/nd-0 tainted\n',
  );
  expect((await taints())?.find((t) => t.key === 'dedicated')?.value).toBe('ml');
  expect((await c.run(['taint', 'nodes', 'nd-0', 'dedicated:NoSchedule-'])).stdout).toBe(
    'node/nd-0 untainted\n',
  );
  expect((await c.run(['taint', 'nodes', 'nd-0', 'team-'])).stdout).toBe('node/nd-0 untainted\n');
  expect(await taints()).toBeUndefined();
  const [missing, bad] = await Promise.all([
    c.run(['taint', 'nodes', 'nd-0', 'team-']),
    c.run(['taint', 'nodes', 'nd-0', 'x=y:Sometimes']),
  ]);
  expect(missing).toMatchObject({ code: 1, stderr: 'error: taint "team" not found\n' });
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('invalid taint effect "Sometimes"');
});

it('shows node usage from NodeMetrics with top nodes', async () => {
  await eventually(
    async () => (await c.admin.list('NodeMetrics')).items.length === 3,
    'metrics from every node',
  );
  const top = await c.run(['top', 'nodes']);
  expect(top.code).toBe(0);
  const rows = tableCells(top.stdout);
  expect(rows[0]).toEqual(['NAME', 'CPU(cores)', 'CPU(%)', 'MEMORY(bytes)', 'MEMORY(%)']);
  expect(
    rows
      .slice(1)
      .map((r) => r[0])
      .sort(),
  ).toEqual(NODES);
  for (const r of rows.slice(1)) {
    expect(r[1]).toMatch(/^\d+m?$/);
    expect(r[2]).toMatch(/^\d+%$/);
    expect(r[3]).toMatch(/^\d+Mi$/);
    expect(r[4]).toMatch(/^\d+%$/);
  }
  expect(isAligned(top.stdout)).toBe(true);
});

it('follows a DaemonSet rollout, lists its history, undoes and restarts it', async () => {
  await c.admin.patch(
    'DaemonSet',
    'daemon',
    { spec: { template: { spec: { containers: [{ name: 'agent', image: 'daemon:2' }] } } } },
    { namespace: 'default' },
  );
  const status = await c.run(['rollout', 'status', 'ds/daemon', '--timeout=50s']);
  expect(status.code).toBe(0);
  expect(status.stdout.trimEnd().split('\n').pop()).toBe('daemon set "daemon" successfully rolled out');
  expect(status.stdout).toMatch(
    /^(Waiting for daemon set (spec update to be observed|"daemon" rollout to finish: .*)\.\.\.\n)*daemon set "daemon" successfully rolled out\n$/,
  );

  const [history, revision1] = await Promise.all([
    c.run(['rollout', 'history', 'daemonset', 'daemon']),
    c.run(['rollout', 'history', 'ds/daemon', '--revision', '1']),
  ]);
  expect(history.stdout).toBe(
    'daemonset.apps/daemon \nREVISION   CHANGE-CAUSE\n1          <none>\n2          <none>\n\n',
  );
  expect(revision1.stdout).toMatch(
    /^daemonset\.apps\/daemon with revision #1\nPod Template:\n {2}Labels: +app=daemon\n {2}Containers:\n {3}agent:\n {4}Image: +daemon:1\n/,
  );

  expect((await c.run(['rollout', 'undo', 'ds/daemon'])).stdout).toBe('daemonset.apps/daemon rolled back\n');
  const image = async () =>
    (await c.admin.get('DaemonSet', 'daemon', { namespace: 'default' })).spec?.template?.spec?.containers?.[0]
      .image;
  expect(await image()).toBe('daemon:1');
  expect((await c.run(['rollout', 'undo', 'ds/daemon', '--to-revision', '3'])).stdout).toBe(
    'daemonset.apps/daemon skipped rollback (current template already matches revision 3)\n',
  );
  const missing = await c.run(['rollout', 'undo', 'ds/daemon', '--to-revision', '9']);
  expect(missing).toMatchObject({
    code: 1,
    stderr: 'error: unable to find the specified revision 9 of daemonset.apps/daemon\n',
  });

  const before = new Set(
    (await c.admin.list('Pod', { namespace: 'default', labelSelector: 'app=daemon' })).items.map(
      (p) => p.metadata?.uid,
    ),
  );
  expect((await c.run(['rollout', 'restart', 'daemonset/daemon'])).stdout).toBe(
    'daemonset.apps/daemon restarted\n',
  );
  const ds = await c.admin.get('DaemonSet', 'daemon', { namespace: 'default' });
  expect(
    Date.parse(ds.spec?.template?.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt'] ?? ''),
  ).toBeGreaterThan(Date.now() - 60_000);
  expect((await c.run(['rollout', 'status', 'ds/daemon', '--timeout=50s'])).code).toBe(0);
  const after = (await c.admin.list('Pod', { namespace: 'default', labelSelector: 'app=daemon' })).items;
  expect(after.filter((p) => !p.metadata?.deletionTimestamp).every((p) => !before.has(p.metadata?.uid))).toBe(
    true,
  );
}, 120_000);

it('drains a node: refuses while DaemonSet pods are there, then leaves only them', async () => {
  await c.admin.create(solo('solo-a', 'nd-1'));
  await c.admin.create(solo('solo-b', 'nd-1'));
  await c.admin.create(solo('stays', 'nd-0'));
  await eventually(
    async () =>
      (await podsOn('nd-1')).every((p) => p.status?.phase === 'Running') &&
      (await podsOn('nd-1')).length === 3,
    'pods running on nd-1',
  );

  const refused = await c.run(['drain', 'nd-1']);
  expect(refused.code).toBe(1);
  expect(refused.stdout).toBe('node/nd-1 cordoned\n');
  expect(refused.stderr).toMatch(
    /^error: unable to drain node "nd-1" \(it stays cordoned; `labctl uncordon nd-1` undoes that\):\ncannot delete DaemonSet-managed Pods \(use --ignore-daemonsets to ignore\): default\/daemon-\w+\ncannot delete Pods that declare no controller \(use --force to override\): default\/solo-a, default\/solo-b\n$/,
  );
  expect((await podsOn('nd-1')).length).toBe(3);

  const drained = await c.run(['drain', 'nd-1', '--ignore-daemonsets', '--force', '--timeout=50s']);
  expect(drained.code).toBe(0);
  const out = drained.stdout.split('\n');
  expect(out[0]).toBe('node/nd-1 already cordoned');
  expect(out).toContain('evicting pod default/solo-a');
  expect(out).toContain('evicting pod default/solo-b');
  expect(out).toContain('pod/solo-a evicted');
  expect(out).toContain('pod/solo-b evicted');
  expect(out.filter(Boolean).pop()).toBe('node/nd-1 drained');
  expect(drained.stderr).toMatch(
    /^Warning: ignoring DaemonSet-managed Pods: default\/daemon-\w+\nWarning: deleting Pods that declare no controller: default\/solo-a, default\/solo-b\n/,
  );
  const left = await podsOn('nd-1');
  expect(left.map((p) => p.metadata?.ownerReferences?.[0]?.kind)).toEqual(['DaemonSet']);
  expect((await c.admin.get('Node', 'nd-1')).spec?.unschedulable).toBe(true);
  expect((await podsOn('nd-0')).map((p) => p.metadata?.name)).toContain('stays');
}, 90_000);

it('marks a node whose agent is older than the control plane in labctl get nodes', async () => {
  await c.admin.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'nd-old' } });
  const created = await c.admin.get('Node', 'nd-old');
  await c.admin.updateStatus({
    ...created,
    kind: 'Node',
    status: { nodeInfo: { agentVersion: '0.0.9', kubeletVersion: 'v0.0.9-kubelab' } },
  });
  try {
    const table = await c.run(['get', 'nodes', '-o', 'wide']);
    const rows = tableCells(table.stdout);
    const version = rows[0].indexOf('VERSION');
    expect(rows.find((r) => r[0] === 'nd-old')?.[version]).toBe('v0.0.9-kubelab (older)');
    expect(rows.find((r) => r[0] === 'nd-0')?.[version]).toBe('v0.1.0-kubelab');
    expect(isAligned(table.stdout)).toBe(true);
  } finally {
    await c.admin.delete('Node', 'nd-old');
  }
});
