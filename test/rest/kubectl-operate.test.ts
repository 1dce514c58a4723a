/**
 * The real kubectl operating a kubelab cluster the way a home-lab admin does day to day:
 * generators that send protobuf (kubectl 1.31+), `auth can-i` for each role, a node's own
 * credential, `drain` through evictions, `top nodes`, `logs` (with follow and previous) from a
 * real agent's pods, and the rollout, describe, label, annotate, taint, wait, diff and edit
 * verbs — asserting on what kubectl prints and on the cluster's state.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isNotFound } from '../../client/api/errors.js';

import { shellPod } from '../support/agentproc.js';
import { eventually } from '../support/wait.js';
import {
  daemonSetObject,
  startCliCluster,
  startRealNode,
  type CliCluster,
  type RealNode,
} from '../cli/support.js';
import {
  checkKubectls,
  KUBECTLS,
  kubectlRunner,
  mergedKubeconfig,
  printedKubeconfig,
  type Kubectl,
} from './support.js';

vi.setConfig({ testTimeout: 90_000 });

let c: CliCluster;
let kubectl: Kubectl;
let real: RealNode;
let viewer: string;
let nodeToken: string;

beforeAll(async () => {
  checkKubectls();
  c = await startCliCluster({ hollowNodes: 2, prefix: 'ko' });
  kubectl = kubectlRunner(c, await mergedKubeconfig(c));
  viewer = await printedKubeconfig(c, join(c.home, 'viewer'), ['--role', 'viewer']);
  // The hollow fleet keeps each node's credential where an agent keeps its own.
  nodeToken = (
    JSON.parse(readFileSync(join(c.home, 'hollow', 'hollow', 'ko-0.json'), 'utf8')) as { token: string }
  ).token;
  real = await startRealNode(c, 'ko-real');
}, 90_000);

afterAll(async () => {
  await real?.stop();
  await c?.close();
});

const asNode = (args: string[]) => kubectl([...args, '--token', nodeToken]);
const asViewer = (args: string[]) => kubectl(args, { env: { KUBECONFIG: viewer } });

describe.each(KUBECTLS.map((k) => k.minor))('kubectl %s', (minor) => {
  it('creates and deletes a namespace with its generator (protobuf from kubectl 1.31 on)', async () => {
    const ns = `gen-${minor.replace('.', '-')}`;
    const created = await kubectl(['create', 'namespace', ns], { minor });
    expect(created, created.stderr).toMatchObject({ code: 0, stdout: `namespace/${ns} created\n` });
    expect((await c.admin.get('Namespace', ns)).metadata?.name).toBe(ns);
    const deleted = await kubectl(['delete', 'namespace', ns, '--wait=true', '--timeout=60s'], { minor });
    expect(deleted.code, deleted.stderr).toBe(0);
    await expect(c.admin.get('Namespace', ns)).rejects.toSatisfy(isNotFound);
  });

  it('answers auth can-i as each role would be answered', async () => {
    const yes = await kubectl(['auth', 'can-i', 'create', 'pods'], { minor });
    expect(yes).toMatchObject({ code: 0, stdout: 'yes\n' });
    const viewerWrite = await kubectl(['auth', 'can-i', 'delete', 'nodes'], {
      minor,
      env: { KUBECONFIG: viewer },
    });
    expect(viewerWrite).toMatchObject({
      code: 1,
      stdout: 'no - the viewer role may only get, list and watch; use an admin token to make changes\n',
    });
    const viewerRead = await kubectl(['auth', 'can-i', 'list', 'pods', '-A'], {
      minor,
      env: { KUBECONFIG: viewer },
    });
    expect(viewerRead).toMatchObject({ code: 0, stdout: 'yes\n' });
  });
});

it('creates ConfigMaps with kubectl create configmap (protobuf), binary files included, and keeps an immutable one', async () => {
  const blob = join(c.home, 'logo.bin');
  writeFileSync(blob, Buffer.from([0xff, 0xfe, 0x00, 0x01]));
  const created = await kubectl([
    'create',
    'configmap',
    'app',
    '--from-literal=mode=dev',
    `--from-file=${blob}`,
  ]);
  expect(created, created.stderr).toMatchObject({ code: 0, stdout: 'configmap/app created\n' });
  const cm = await c.admin.get('ConfigMap', 'app', { namespace: 'default' });
  expect(cm.data).toEqual({ mode: 'dev' });
  expect(Buffer.from(cm.binaryData?.['logo.bin'] ?? '', 'base64')).toEqual(
    Buffer.from([0xff, 0xfe, 0x00, 0x01]),
  );
  const table = await kubectl(['get', 'configmaps', '--no-headers']);
  expect(table.stdout).toMatch(/^app\s+2\s+\d+s$/m);

  const frozen = join(c.home, 'frozen.yaml');
  writeFileSync(
    frozen,
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen}\nimmutable: true\ndata: {a: "1"}\n',
  );
  expect((await kubectl(['apply', '-f', frozen])).code).toBe(0);
  writeFileSync(
    frozen,
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen}\nimmutable: true\ndata: {a: "2"}\n',
  );
  const changed = await kubectl(['apply', '-f', frozen]);
  expect(changed.code).toBe(1);
  expect(changed.stderr).toContain('data: Forbidden: field is immutable when `immutable` is set');
  expect((await c.admin.get('ConfigMap', 'frozen', { namespace: 'default' })).data).toEqual({ a: '1' });
});

it('lists what each role may do with auth can-i --list', async () => {
  const admin = await kubectl(['auth', 'can-i', '--list']);
  expect(admin.code, admin.stderr).toBe(0);
  expect(admin.stdout).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
  const view = await asViewer(['auth', 'can-i', '--list']);
  expect(view.stdout).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
  expect(view.stdout).toMatch(
    /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m,
  );
  const node = await asNode(['auth', 'can-i', '--list']);
  expect(node.code, node.stderr).toBe(0);
  // Its own Node and Lease by name; every node reads namespaces.
  expect(node.stdout).toMatch(/^nodes\s+\[\]\s+\[ko-0\]\s+\[get create update patch\]$/m);
  expect(node.stdout).toMatch(/^namespaces\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
  const leases = await asNode(['auth', 'can-i', '--list', '-n', 'kube-node-lease']);
  expect(leases.stdout).toMatch(
    /^leases\.coordination\.k8s\.io\s+\[\]\s+\[ko-0\]\s+\[get create update patch\]$/m,
  );
});

it("a node's credential reads and writes only what the Node authorizer allows", async () => {
  expect(await asNode(['auth', 'can-i', 'get', 'node/ko-0'])).toMatchObject({ stdout: 'yes\n' });
  expect(await asNode(['auth', 'can-i', 'get', 'node/ko-1'])).toMatchObject({
    code: 1,
    stdout: 'no - node "ko-0" may not get nodes "ko-1"; a node may only touch its own objects\n',
  });
  expect((await asNode(['auth', 'can-i', 'create', 'daemonsets'])).code).toBe(1);

  const own = await asNode(['get', 'node', 'ko-0', '-o', 'name']);
  expect(own).toMatchObject({ code: 0, stdout: 'node/ko-0\n' });
  const other = await asNode(['get', 'node', 'ko-1']);
  expect(other.code).toBe(1);
  expect(other.stderr).toContain('Error from server (Forbidden): nodes "ko-1" is forbidden');
  const annotated = await asNode(['annotate', 'node', 'ko-0', 'kubelab.io/note=from-the-node']);
  expect(annotated.code, annotated.stderr).toBe(0);
  expect((await c.admin.get('Node', 'ko-0')).metadata?.annotations?.['kubelab.io/note']).toBe(
    'from-the-node',
  );
  const otherWrite = await asNode(['annotate', 'node', 'ko-1', 'kubelab.io/note=no']);
  expect(otherWrite.code).toBe(1);
  expect((await c.admin.get('Node', 'ko-1')).metadata?.annotations?.['kubelab.io/note']).toBeUndefined();

  const allPods = await asNode(['get', 'pods', '-A']);
  expect(allPods.code).toBe(1);
  expect(allPods.stderr).toContain('fieldSelector spec.nodeName=ko-0');
  const ownPods = await asNode(['get', 'pods', '-A', '--field-selector', 'spec.nodeName=ko-0']);
  expect(ownPods.code, ownPods.stderr).toBe(0);
  const create = await asNode(['create', 'namespace', 'by-node']);
  expect(create.code).toBe(1);
  expect(create.stderr).toMatch(/forbidden/);
  await expect(c.admin.get('Namespace', 'by-node')).rejects.toSatisfy(isNotFound);
});

it('drains a node through evictions, leaving DaemonSet pods, and uncordons it', async () => {
  await c.admin.create(daemonSetObject('drain-ds', 'agent:1'));
  await c.admin.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'lonely', namespace: 'default' },
    spec: { nodeName: 'ko-1', containers: [{ name: 'c', image: 'busybox' }] },
  });
  await eventually(async () => {
    const pods = (await c.admin.list('Pod', { namespace: 'default', fieldSelector: 'spec.nodeName=ko-1' }))
      .items;
    return pods.length === 2 && pods.every((p) => p.status?.phase === 'Running');
  }, 'the bare pod and the DaemonSet pod to run on ko-1');

  const refused = await kubectl(['drain', 'ko-1', '--ignore-daemonsets', '--timeout=30s']);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(
    'cannot delete Pods that declare no controller (use --force to override): default/lonely',
  );
  expect(
    (await c.admin.get('Pod', 'lonely', { namespace: 'default' })).metadata?.deletionTimestamp,
  ).toBeUndefined();

  const drained = await kubectl(['drain', 'ko-1', '--ignore-daemonsets', '--force', '--timeout=60s']);
  expect(drained.code, drained.stderr).toBe(0);
  expect(drained.stdout).toContain('evicting pod default/lonely');
  expect(drained.stdout).toContain('pod/lonely evicted');
  expect(drained.stdout).toContain('node/ko-1 drained');
  await expect(c.admin.get('Pod', 'lonely', { namespace: 'default' })).rejects.toSatisfy(isNotFound);
  const left = (await c.admin.list('Pod', { namespace: 'default', fieldSelector: 'spec.nodeName=ko-1' }))
    .items;
  expect(left.map((p) => p.metadata?.ownerReferences?.[0]?.kind)).toEqual(['DaemonSet']);
  expect((await c.admin.get('Node', 'ko-1')).spec?.unschedulable).toBe(true);

  const uncordoned = await kubectl(['uncordon', 'ko-1']);
  expect(uncordoned).toMatchObject({ code: 0, stdout: 'node/ko-1 uncordoned\n' });
  await c.admin.delete('DaemonSet', 'drain-ds', { namespace: 'default' });
});

it('shows node usage with top nodes (metrics.k8s.io)', async () => {
  let top = await kubectl(['top', 'nodes', '--no-headers']);
  await eventually(async () => {
    top = await kubectl(['top', 'nodes', '--no-headers']);
    return top.code === 0 && !top.stdout.includes('<unknown>') && top.stdout.trim().split('\n').length === 3;
  }, 'every node to have a usage sample');
  const rows = top.stdout
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/));
  expect(rows.map((r) => r[0]).sort()).toEqual(['ko-0', 'ko-1', 'ko-real']);
  for (const [, cpu, cpuPct, memory, memoryPct] of rows) {
    expect(cpu).toMatch(/^\d+m$/);
    expect(cpuPct).toMatch(/^\d+%$/);
    expect(memory).toMatch(/^\d+Mi$/);
    expect(memoryPct).toMatch(/^\d+%$/);
  }
});

describe('logs from a real agent', () => {
  beforeAll(async () => {
    const pair = shellPod('pair', 'for i in 1 2 3; do echo "line $i"; done; sleep 3600', {
      node: real.name,
      marker: real.marker,
    });
    pair.spec!.containers!.push({
      name: 'second',
      command: ['sh', '-c', `echo from-second; sleep 3600 # ${real.marker}-2`],
    });
    await c.admin.create(pair);
    await c.admin.create(
      shellPod('crasher', 'echo "run at $(date +%s%N)"; sleep 1; exit 3', {
        node: real.name,
        marker: real.marker,
      }),
    );
    await c.admin.create(
      shellPod('ticker', 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 0.3; done', {
        node: real.name,
        marker: real.marker,
      }),
    );
    await eventually(
      async () =>
        (
          await c.admin.list('Pod', {
            namespace: 'default',
            fieldSelector: `spec.nodeName=${real.name}`,
          })
        ).items.every((p) => p.status?.phase === 'Running'),
      'the pods on the real node to run',
    );
  });

  it('prints a log whole, its tail, with timestamps, and of a chosen container', async () => {
    await eventually(
      async () => (await kubectl(['logs', 'pair'])).stdout.includes('line 3'),
      'the whole log',
    );
    for (const minor of KUBECTLS.map((k) => k.minor)) {
      const all = await kubectl(['logs', 'pair'], { minor });
      expect(all.stdout, all.stderr).toBe('line 1\nline 2\nline 3\n');
      expect(all.stderr).toContain('Defaulted container "main" out of: main, second');
    }
    expect((await kubectl(['logs', 'pair', '-c', 'main', '--tail=2'])).stdout).toBe('line 2\nline 3\n');
    expect((await kubectl(['logs', 'pair', '-c', 'main', '--tail=1', '--timestamps'])).stdout).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z line 3\n$/,
    );
    await eventually(
      async () => (await kubectl(['logs', 'pair', '-c', 'second'])).stdout === 'from-second\n',
      'the second container',
    );
    const missing = await kubectl(['logs', 'pair', '-c', 'third']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('third');
  });

  it("prints the previous instance's log after a restart", async () => {
    await eventually(
      async () =>
        ((await c.admin.get('Pod', 'crasher', { namespace: 'default' })).status?.containerStatuses?.[0]
          ?.restartCount ?? 0) >= 1,
      'crasher to restart',
    );
    const previous = await kubectl(['logs', 'crasher', '--previous']);
    expect(previous.stdout, previous.stderr).toMatch(/^run at \d+\n$/);
  });

  it('follows a log with -f', async () => {
    const follow = kubectl.start(['logs', '-f', 'ticker', '--tail=1']);
    try {
      await eventually(() => /tick \d+\n/.test(follow.stdout), 'a first tick');
      const first = Number(/tick (\d+)/.exec(follow.stdout)![1]);
      await eventually(
        () => follow.stdout.includes(`tick ${first + 2}\n`),
        'two more ticks, as they are written',
      );
    } finally {
      await follow.stop();
    }
  });
});

describe('rollout, describe, label, annotate, taint, wait, diff and edit', () => {
  const manifest = (image: string) => `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: exporter, namespace: default}
spec:
  selector: {matchLabels: {app: exporter}}
  template:
    metadata: {labels: {app: exporter}}
    spec:
      nodeSelector: {kubelab.io/pool: ko}
      containers: [{name: exporter, image: "${image}"}]
`;
  const file = () => join(c.home, 'exporter.yaml');

  beforeAll(async () => {
    writeFileSync(file(), manifest('exporter:1'));
    const applied = await kubectl(['apply', '-f', file()]);
    expect(applied.code, applied.stderr).toBe(0);
  });

  it('rolls a DaemonSet out, restarts it, shows its history and undoes it', async () => {
    const status = await kubectl(['rollout', 'status', 'ds/exporter', '--timeout=60s']);
    expect(status.stdout, status.stderr).toContain('daemon set "exporter" successfully rolled out');
    const restarted = await kubectl(['rollout', 'restart', 'ds/exporter']);
    expect(restarted).toMatchObject({ code: 0, stdout: 'daemonset.apps/exporter restarted\n' });
    await eventually(
      async () => (await kubectl(['rollout', 'history', 'ds/exporter'])).stdout.match(/^2\s/m) !== null,
      'revision 2 in the history',
    );
    const undone = await kubectl(['rollout', 'undo', 'ds/exporter']);
    expect(undone).toMatchObject({ code: 0, stdout: 'daemonset.apps/exporter rolled back\n' });
    const ds = await c.admin.get('DaemonSet', 'exporter', { namespace: 'default' });
    expect(ds.spec?.template?.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt']).toBeUndefined();
  });

  it('describes a node, a DaemonSet and a pod', async () => {
    const node = await kubectl(['describe', 'node', 'ko-0']);
    expect(node.stdout, node.stderr).toMatch(/^Name:\s+ko-0$/m);
    expect(node.stdout).toMatch(/Ready\s+True/);
    const ds = await kubectl(['describe', 'ds', 'exporter']);
    expect(ds.stdout).toMatch(/^Desired Number of Nodes Scheduled: 2$/m);
    const pod = await kubectl(['describe', 'pod', 'pair']);
    expect(pod.stdout).toMatch(/^Node:\s+ko-real\//m);
  });

  it('labels, annotates and taints a node, then waits for its Ready condition', async () => {
    expect(await kubectl(['label', 'node', 'ko-0', 'tier=edge'])).toMatchObject({
      stdout: 'node/ko-0 labeled\n',
    });
    expect(await kubectl(['annotate', 'node', 'ko-0', 'owner=lab'])).toMatchObject({
      stdout: 'node/ko-0 annotated\n',
    });
    expect(await kubectl(['taint', 'node', 'ko-0', 'lab=only:NoSchedule'])).toMatchObject({
      stdout: 'node/ko-0 tainted\n',
    });
    let n = await c.admin.get('Node', 'ko-0');
    expect(n.metadata?.labels?.tier).toBe('edge');
    expect(n.metadata?.annotations?.owner).toBe('lab');
    expect(n.spec?.taints).toContainEqual({ key: 'lab', value: 'only', effect: 'NoSchedule' });
    expect(await kubectl(['taint', 'node', 'ko-0', 'lab-'])).toMatchObject({
      stdout: 'node/ko-0 untainted\n',
    });
    expect(await kubectl(['label', 'node', 'ko-0', 'tier-'])).toMatchObject({
      stdout: 'node/ko-0 unlabeled\n',
    });
    n = await c.admin.get('Node', 'ko-0');
    expect(n.spec?.taints ?? []).not.toContainEqual(expect.objectContaining({ key: 'lab' }));
    expect(n.metadata?.labels?.tier).toBeUndefined();
    const waited = await kubectl(['wait', '--for=condition=Ready', 'node/ko-0', '--timeout=30s']);
    expect(waited).toMatchObject({ code: 0, stdout: 'node/ko-0 condition met\n' });
  });

  it('diffs a changed manifest against the cluster, then edits the object with $EDITOR', async () => {
    const same = await kubectl(['diff', '-f', file()]);
    expect(same).toMatchObject({ code: 0, stdout: '' });
    writeFileSync(file(), manifest('exporter:2'));
    const changed = await kubectl(['diff', '-f', file()]);
    expect(changed.code, changed.stderr).toBe(1);
    expect(changed.stdout).toMatch(/^-\s+- image: exporter:1$/m);
    expect(changed.stdout).toMatch(/^\+\s+- image: exporter:2$/m);
    // diff is a dry run: nothing changed.
    const ds = await c.admin.get('DaemonSet', 'exporter', { namespace: 'default' });
    expect(ds.spec?.template?.spec?.containers?.[0]?.image).toBe('exporter:1');

    const editor = join(c.home, 'editor.sh');
    writeFileSync(editor, '#!/bin/sh\nsed -i "s/image: exporter:1/image: exporter:3/" "$1"\n');
    chmodSync(editor, 0o755);
    const edited = await kubectl(['edit', 'ds/exporter'], { env: { EDITOR: editor } });
    expect(edited).toMatchObject({ code: 0, stdout: 'daemonset.apps/exporter edited\n' });
    const after = await c.admin.get('DaemonSet', 'exporter', { namespace: 'default' });
    expect(after.spec?.template?.spec?.containers?.[0]?.image).toBe('exporter:3');
  });
});
