/**
 * The node and DaemonSet pages in headless Chromium against browser mode on a real control
 * plane with hollow agents (reporting every half second): a node's page draws its agent's
 * NodeMetrics live, and — for a node written through the API as an agent would — every
 * retained sample, the heartbeat of its lease and conditions whose labels and chips do not
 * collide; labels and taints are edited there, with the server's validation errors
 * at the field; drain shows each pod's progress and leaves only DaemonSet pods; a DaemonSet
 * is restarted, rolled back and edited as YAML. Screenshots (light and dark) go to
 * test-artifacts/.
 */
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { HollowFleet } from '../../agent/hollow.js';
import type { DaemonSet, Lease, Node, NodeMetrics, Pod } from '../../client/api/types.js';
import { NODE_LEASE_NAMESPACE } from '../../client/api/wellknown.js';
import { rfc3339, rfc3339Micro } from '../../client/util/clock.js';
import { eventually } from '../support/wait.js';
import { fillEditor, startGui, type Gui } from './support.js';

const GiB = 1024 ** 3;
let gui: Gui;
let fleet: HollowFleet;

const node = (name: string) => gui.admin.get('Node', name) as Promise<Node>;
const podsOn = async (nodeName: string) =>
  (await gui.admin.list('Pod', { fieldSelector: `spec.nodeName=${nodeName}` })).items
    .map((p) => p.metadata!.name!)
    .sort();

beforeAll(async () => {
  gui = await startGui();
  fleet = await gui.startFleet('lab', 2, { config: { statusUpdateMs: 500, metricsMs: 500 } });
  await gui.page.click('[data-view="nodes"]');
  await eventually(
    async () => (await gui.text('[data-node="lab-1"] [data-col="status"]')) === 'Ready',
    'lab-1 Ready',
  );
}, 60_000);

afterAll(async () => {
  await gui?.close();
});

async function openNode(name: string): Promise<void> {
  await gui.page.click('[data-view="nodes"]');
  await gui.page.click(`[data-node="${name}"] [data-col="name"] button`);
  await expect.poll(() => gui.text('[data-testid="node-page"] h2')).toContain(name);
}

it("a node's page shows its facts and draws its NodeMetrics live", async () => {
  const { page, text } = gui;
  await openNode('lab-0');
  expect(await text('[data-testid="node-state"]')).toBe('Ready');
  expect(await text('[data-testid="addresses"]')).toContain('10.0.0.1');
  expect(await text('[data-testid="node-info"]')).toContain('Hollow Linux');
  expect(await text('[data-resource="cpu"]')).toMatch(/4 cores\s+4 cores/);
  await expect.poll(() => text('[data-condition="Ready"] [data-testid="status"]')).toBe('True');

  const points = async () =>
    Number(await page.locator('[data-testid="chart-cpu"]').getAttribute('data-points'));
  await expect.poll(points, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
  const before = await points();
  await expect.poll(points, { timeout: 10_000 }).toBeGreaterThanOrEqual(before + 2);
  expect(await page.locator('[data-testid="chart-cpu"] canvas').count()).toBe(1);

  // What the agent measures is what the chart says, within one report.
  const reader = fleet.nodes.get('lab-0')!.reader;
  reader.set({ cpuUsageCores: 3, memoryAvailableBytes: 2 * GiB });
  await expect
    .poll(() => text('[data-testid="chart-cpu"] [data-testid="latest"]'), { timeout: 10_000 })
    .toBe('3 cores of 4 cores (75%)');
  await expect
    .poll(() => text('[data-testid="chart-memory"] [data-testid="latest"]'))
    .toBe('6GiB of 8GiB (75%)');
  await gui.shot('node-page');
  await page.emulateMedia({ colorScheme: 'dark' });
  // The charts are drawn again in the dark theme's colours.
  await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
  await gui.shot('node-page-dark');
  await page.emulateMedia({ colorScheme: 'light' });
}, 60_000);

it("a node's page draws its retained NodeMetrics history, its lease's heartbeat, and conditions that fit", async () => {
  const { page, text, admin } = gui;
  const now = Date.now();
  // A node with no agent, written as an agent would have written it: a status heartbeat
  // 4 minutes old (written every 5 minutes when nothing changes), a lease renewed just now,
  // a pressure condition not known, and two minutes of samples, one every 10 s.
  await admin.create<Node>({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'quiet' },
    status: {
      capacity: { cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi' },
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: rfc3339(now - 240_000) },
        { type: 'MemoryPressure', status: 'Unknown', reason: 'NodeStatusUnknown' },
      ],
    },
  });
  try {
    await admin.create<Lease>({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'quiet', namespace: NODE_LEASE_NAMESPACE },
      spec: { holderIdentity: 'quiet', leaseDurationSeconds: 40, renewTime: rfc3339Micro(now) },
    });
    let metrics: NodeMetrics | undefined;
    for (let i = 11; i >= 0; i--) {
      const sample: NodeMetrics = {
        apiVersion: 'metrics.k8s.io/v1beta1',
        kind: 'NodeMetrics',
        metadata: {
          name: 'quiet',
          ...(metrics ? { resourceVersion: metrics.metadata?.resourceVersion } : {}),
        },
        timestamp: rfc3339(now - i * 10_000),
        window: '10s',
        usage: { cpu: `${(12 - i) * 100}m`, memory: '2Gi', 'ephemeral-storage': '10Gi' },
      };
      metrics = metrics ? await admin.update(sample) : await admin.create(sample);
    }

    await page.click('[data-view="nodes"]');
    await expect.poll(() => text('[data-node="quiet"] [data-col="heartbeat"]')).toMatch(/^\d+s$/);
    await openNode('quiet');
    // Every retained sample once: 12, not the first of them and the live one.
    await expect
      .poll(async () => Number(await page.locator('[data-testid="chart-cpu"]').getAttribute('data-points')))
      .toBe(12);
    expect(await text('[data-testid="chart-cpu"] [data-testid="latest"]')).toBe('1.2 cores of 4 cores (30%)');
    expect(await text('[data-testid="heartbeat"]')).toMatch(/^heartbeat \d+s ago$/);

    // "MemoryPressure" and its "Unknown" chip each keep their own space, clear of the bar.
    await expect.poll(() => text('[data-condition="MemoryPressure"] [data-testid="status"]')).toBe('Unknown');
    const boxes = await page.evaluate(() => {
      const track = document.querySelector('[data-condition="MemoryPressure"]')!;
      const box = (selector: string) => {
        const r = track.querySelector(selector)!.getBoundingClientRect();
        return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
      };
      return { name: box('strong'), chip: box('[data-testid="status"]'), bar: box('.bar') };
    });
    type Box = typeof boxes.name;
    const overlaps = (a: Box, b: Box) =>
      a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    expect(overlaps(boxes.name, boxes.chip)).toBe(false);
    expect(overlaps(boxes.chip, boxes.bar)).toBe(false);
    expect(overlaps(boxes.name, boxes.bar)).toBe(false);
    await gui.shot('node-page-history');
  } finally {
    // Gone before the DaemonSet tests, which count a pod per node.
    await admin.delete('Node', 'quiet');
    await admin.delete('Lease', 'quiet', { namespace: NODE_LEASE_NAMESPACE });
  }
}, 60_000);

it("edits a node's labels and taints, with the server's errors at the field", async () => {
  const { page, text } = gui;
  await openNode('lab-0');
  const labels = page.locator('[data-testid="labels"]');
  await labels.locator('input[name="label-key"]').fill('topology.kubernetes.io/zone');
  await labels.locator('input[name="label-value"]').fill('attic');
  await labels.locator('button[type="submit"]').click();
  await expect
    .poll(async () => (await node('lab-0')).metadata?.labels?.['topology.kubernetes.io/zone'])
    .toBe('attic');
  await expect.poll(() => labels.locator('[data-label="topology.kubernetes.io/zone"]').count()).toBe(1);

  await labels.locator('input[name="label-key"]').fill('bad key!');
  await labels.locator('input[name="label-value"]').fill('x');
  await labels.locator('button[type="submit"]').click();
  await expect.poll(() => text('[data-testid="label-key-error"]')).toContain('name part must consist of');
  expect(await labels.locator('input[name="label-key"]').getAttribute('aria-invalid')).toBe('true');
  expect((await node('lab-0')).metadata?.labels?.['bad key!']).toBeUndefined();

  await labels.locator('[data-label="topology.kubernetes.io/zone"] button').click();
  await expect
    .poll(async () => (await node('lab-0')).metadata?.labels?.['topology.kubernetes.io/zone'])
    .toBeUndefined();

  const taints = page.locator('[data-testid="taints"]');
  await taints.locator('input[name="taint-key"]').fill('dedicated');
  await taints.locator('input[name="taint-value"]').fill('gpu');
  await taints.locator('select[name="taint-effect"]').selectOption('PreferNoSchedule');
  await taints.locator('button[type="submit"]').click();
  await expect
    .poll(async () => (await node('lab-0')).spec?.taints)
    .toContainEqual({ key: 'dedicated', value: 'gpu', effect: 'PreferNoSchedule' });
  await expect.poll(() => taints.locator('[data-taint="dedicated:PreferNoSchedule"]').count()).toBe(1);

  await taints.locator('input[name="taint-key"]').fill('-oops');
  await taints.locator('button[type="submit"]').click();
  await expect.poll(() => text('[data-testid="taint-key-error"]')).toContain('name part must consist of');
  await gui.shot('node-edit-errors');

  await taints.locator('[data-taint="dedicated:PreferNoSchedule"] button').click();
  await expect
    .poll(async () => (await node('lab-0')).spec?.taints ?? [])
    .not.toContainEqual(expect.objectContaining({ key: 'dedicated' }));
}, 60_000);

it('drain shows each pod until it is gone and leaves only the DaemonSet pod', async () => {
  const { page, text, admin } = gui;
  await admin.create<DaemonSet>({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: {
        metadata: { labels: { app: 'agent' } },
        spec: { containers: [{ name: 'agent', image: 'lab/agent:1' }] },
      },
    },
  });
  const bare = (name: string, finalizers?: string[]): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', ...(finalizers ? { finalizers } : {}) },
    spec: { nodeName: 'lab-1', containers: [{ name: 'c', image: 'x' }] },
  });
  await admin.create(bare('scratch'));
  // Held by a finalizer: it stays terminating until the test lets it go, so its state shows.
  await admin.create(bare('held', ['kubelab.test/hold']));
  await expect.poll(() => podsOn('lab-1'), { timeout: 20_000 }).toHaveLength(3);
  const daemonPod = (await podsOn('lab-1')).find((n) => n.startsWith('agent-'))!;

  await openNode('lab-1');
  await page.click('[data-testid="drain-open"]');
  await expect.poll(() => text(`[data-drain-pod="default/${daemonPod}"] [data-col="state"]`)).toBe('skipped');
  expect(await text('[data-drain-pod="default/held"] [data-col="state"]')).toBe('blocks the drain');
  expect(await page.locator('[data-testid="start-drain"]').isDisabled()).toBe(true);
  await page.check('[data-testid="drain"] input[type="checkbox"]');
  expect(await text('[data-drain-pod="default/held"] [data-col="state"]')).toBe('will be deleted');
  await page.click('[data-testid="start-drain"]');

  await expect
    .poll(() => text('[data-drain-pod="default/scratch"] [data-col="state"]'), { timeout: 20_000 })
    .toBe('gone');
  await expect
    .poll(() => text('[data-drain-pod="default/held"] [data-col="state"]'))
    .toContain('terminating');
  expect(await page.locator('[data-testid="drain-progress"]').getAttribute('value')).toBe('1');
  expect(await page.locator('[data-testid="drain-progress"]').getAttribute('max')).toBe('2');
  expect(await text('[data-testid="drain-phase"]')).toContain('Waiting for pods to stop');
  expect((await node('lab-1')).spec?.unschedulable).toBe(true);
  await gui.shot('drain');

  await admin.patch('Pod', 'held', { metadata: { finalizers: null } }, { namespace: 'default' });
  await expect
    .poll(() => text('[data-drain-pod="default/held"] [data-col="state"]'), { timeout: 20_000 })
    .toBe('gone');
  await expect.poll(() => text('[data-testid="drain-phase"]')).toContain('Drained');
  expect(await page.locator('[data-testid="drain-progress"]').getAttribute('value')).toBe('2');
  expect(await podsOn('lab-1')).toEqual([daemonPod]);
  expect(await text(`[data-drain-pod="default/${daemonPod}"] [data-col="state"]`)).toBe('skipped');
  await page.click('[data-testid="uncordon"]');
  await expect.poll(async () => (await node('lab-1')).spec?.unschedulable ?? false).toBe(false);
}, 60_000);

it('restarts a DaemonSet, rolls it back to its first revision, and edits it as YAML', async () => {
  const { page, text, admin } = gui;
  await page.click('[data-view="daemonsets"]');
  await page.click('[data-daemonset="agent"] [data-col="name"] button');
  await expect.poll(() => text('[data-testid="daemonset-page"] h2')).toContain('agent');
  const revisions = () =>
    page
      .locator('[data-testid="revisions"] [data-revision]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-revision')));
  const podRevisions = () =>
    page
      .locator('[data-testid="ds-pods"] [data-col="revision"]')
      .evaluateAll((cells) => cells.map((c) => c.textContent?.trim()));
  await expect.poll(revisions, { timeout: 20_000 }).toEqual(['1']);
  await expect.poll(podRevisions, { timeout: 20_000 }).toEqual(['1', '1']);

  await page.click('[data-testid="restart"]');
  await expect
    .poll(
      async () =>
        (await admin.get('DaemonSet', 'agent', { namespace: 'default' })).spec?.template?.metadata
          ?.annotations,
    )
    .toHaveProperty(['kubectl.kubernetes.io/restartedAt']);
  await expect.poll(revisions, { timeout: 20_000 }).toEqual(['2', '1']);
  await expect.poll(podRevisions, { timeout: 30_000 }).toEqual(['2', '2']);
  await expect.poll(() => text('[data-testid="rollout-chip"]'), { timeout: 20_000 }).toBe('rolled out');
  expect(await text('[data-revision="2"]')).toContain('current');
  await gui.shot('daemonset');

  await page.click('[data-revision="1"] [data-testid="rollback"]');
  await expect
    .poll(
      async () =>
        (await admin.get('DaemonSet', 'agent', { namespace: 'default' })).spec?.template?.metadata
          ?.annotations ?? {},
    )
    .toEqual({});
  // Like Kubernetes: the old revision becomes the newest, numbered 3.
  await expect.poll(revisions, { timeout: 20_000 }).toEqual(['3', '2']);
  await expect.poll(podRevisions, { timeout: 30_000 }).toEqual(['3', '3']);
  expect(await text('[data-revision="3"]')).toContain('current');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect.poll(() => text('[data-testid="rollout-chip"]'), { timeout: 20_000 }).toBe('rolled out');
  await gui.shot('daemonset-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  await page.click('[data-testid="edit"]');
  await page.waitForSelector('[data-testid="edit-yaml"] .cm-content');
  const current = await admin.get('DaemonSet', 'agent', { namespace: 'default' });
  const { status: _status, ...editable } = current;
  const invalid = structuredClone(editable);
  invalid.spec!.template!.spec!.containers![0].name = 'Bad_Name';
  await fillEditor(page, 'edit-yaml', stringify(invalid));
  await page.click('[data-testid="save"]');
  await expect
    .poll(() => text('[data-testid="edit-yaml"] [data-field="spec.template.spec.containers[0].name"]'))
    .toContain('Bad_Name');
  await expect
    .poll(() => page.locator('[data-testid="edit-yaml"] .cm-error-line').first().innerText())
    .toContain('name: Bad_Name');
  await gui.shot('daemonset-edit-error');

  const labelled = structuredClone(editable);
  labelled.metadata!.labels = { ...labelled.metadata!.labels, team: 'lab' };
  await fillEditor(page, 'edit-yaml', stringify(labelled));
  await page.click('[data-testid="save"]');
  await expect.poll(() => page.locator('[data-testid="edit-dialog"]').count()).toBe(0);
  expect((await admin.get('DaemonSet', 'agent', { namespace: 'default' })).metadata?.labels).toEqual({
    team: 'lab',
  });
}, 90_000);

it('says which agents are older than the control plane, and an admin asks one to upgrade itself', async () => {
  const { page, text } = gui;
  await gui.admin.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'old-agent' } });
  const created = await node('old-agent');
  await gui.admin.updateStatus({
    ...created,
    kind: 'Node',
    status: { nodeInfo: { agentVersion: '0.0.9', kubeletVersion: 'v0.0.9-kubelab' } },
  });
  await page.click('[data-view="nodes"]');
  await expect.poll(() => text('[data-node="old-agent"] [data-col="agent"]')).toBe('0.0.9 (older)');
  expect(await text('[data-node="lab-0"] [data-col="agent"]')).toBe('0.1.0');

  await openNode('old-agent');
  expect(await text('[data-testid="node-info"]')).toContain("0.0.9 (older than the control plane's 0.1.0)");
  await page.click('[data-testid="upgrade-agent"]');
  await eventually(
    async () => (await node('old-agent')).metadata?.annotations?.['kubelab.io/agent-upgrade'] === '0.1.0',
    'the upgrade asked for on the Node',
  );
  await expect.poll(() => text('[data-testid="upgrade-agent"]')).toBe('Upgrading…');
  // An agent of the control plane's version is offered nothing.
  await openNode('lab-0');
  expect(await page.locator('[data-testid="upgrade-agent"]').count()).toBe(0);
  await gui.admin.delete('Node', 'old-agent');
}, 60_000);
