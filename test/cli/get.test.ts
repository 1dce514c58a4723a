/**
 * labctl's reading verbs against a real control plane with hollow nodes: get (kubectl's tables
 * and alignment, wide, yaml, json, name, selectors, namespaces, several kinds, the empty
 * message, NotFound), describe with related events, and get -w printing rows as objects change.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import type { Node, Pod } from '../../client/api/types.js';
import { eventually } from '../support/wait.js';
import { daemonSetObject, isAligned, startCliCluster, tableCells, type CliCluster } from './support.js';

// Every labctl run is a fresh Node process: 1–3 s each on a busy machine, several per test.
vi.setConfig({ testTimeout: 90_000 });

let c: CliCluster;

const pod = (name: string, namespace: string, labels: Record<string, string>): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels },
  spec: { nodeName: 'get-0', containers: [{ name: 'app', image: 'web:1' }] },
});

const exporter = daemonSetObject('exporter', 'exporter:1');

beforeAll(async () => {
  c = await startCliCluster({ hollowNodes: 2, prefix: 'get' });
  await c.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } });
  await c.admin.create(pod('web', 'default', { app: 'web' }));
  await c.admin.create(pod('db', 'default', { app: 'db' }));
  await c.admin.create(pod('elsewhere', 'lab', { app: 'web' }));
  await c.admin.create(exporter);
  await eventually(
    async () =>
      (await c.admin.get('DaemonSet', 'exporter', { namespace: 'default' })).status?.numberReady === 2,
    'exporter ready',
  );
  await eventually(
    async () =>
      (await c.admin.list('Pod', { namespace: '' })).items.every((p) => p.status?.phase === 'Running'),
    'every pod Running',
  );
}, 60_000);

afterAll(async () => {
  await c?.close();
});

it('gets nodes as kubectl prints them: aligned columns, wide, yaml, json and names', async () => {
  const [table, wide, yaml, json, names, none] = await Promise.all([
    c.run(['get', 'nodes']),
    c.run(['get', 'nodes', '-o', 'wide']),
    c.run(['get', 'node', 'get-1', '-o', 'yaml']),
    c.run(['get', 'no', '-o', 'json']),
    c.run(['get', 'nodes', '-o', 'name']),
    c.run(['get', 'nodes', '-l', 'kubelab.io/pool=nothing']),
  ]);
  expect(table.code).toBe(0);
  const rows = tableCells(table.stdout);
  expect(rows[0]).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
  expect(rows.slice(1).map((r) => r.slice(0, 3))).toEqual([
    ['get-0', 'Ready', '<none>'],
    ['get-1', 'Ready', '<none>'],
  ]);
  expect(rows[1][3]).toMatch(/^\d+s$/);
  expect(isAligned(table.stdout)).toBe(true);
  expect(table.stdout).toMatch(/^NAME {4}STATUS {3}ROLES {4}AGE/);

  expect(tableCells(wide.stdout)[0]).toEqual([
    'NAME',
    'STATUS',
    'ROLES',
    'AGE',
    'VERSION',
    'INTERNAL-IP',
    'EXTERNAL-IP',
    'OS-IMAGE',
    'KERNEL-VERSION',
    'CONTAINER-RUNTIME',
  ]);
  expect(isAligned(wide.stdout)).toBe(true);
  expect(parse(yaml.stdout)).toMatchObject({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'get-1' } });
  const list = JSON.parse(json.stdout);
  expect(list.kind).toBe('List');
  expect(list.items.map((n: { metadata: { name: string } }) => n.metadata.name)).toEqual(['get-0', 'get-1']);
  expect(names.stdout).toBe('node/get-0\nnode/get-1\n');
  expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'No resources found\n' });
});

it('says so on stderr when nothing is found, and fails for a name or type that does not exist', async () => {
  const [empty, missing, someMissing, badType] = await Promise.all([
    c.run(['get', 'pods', '-n', 'kube-public']),
    c.run(['get', 'pod', 'nope']),
    c.run(['get', 'pods', 'web', 'nope', '-o', 'name']),
    c.run(['get', 'widgets']),
  ]);
  expect(empty).toMatchObject({
    code: 0,
    stdout: '',
    stderr: 'No resources found in kube-public namespace.\n',
  });
  expect(missing).toMatchObject({
    code: 1,
    stdout: '',
    stderr: 'Error from server (NotFound): pods "nope" not found\n',
  });
  expect(someMissing).toMatchObject({
    code: 1,
    stdout: 'pod/web\n',
    stderr: 'Error from server (NotFound): pods "nope" not found\n',
  });
  expect(badType.code).toBe(1);
  expect(badType.stderr).toMatch(/^error: the server doesn't have a resource type "widgets"/);
});

it('gets pods with label and field selectors, across namespaces, and several kinds at once', async () => {
  const [byLabel, byField, all, both, events] = await Promise.all([
    c.run(['get', 'pods', '-l', 'app=db']),
    c.run(['get', 'po', '--field-selector', 'metadata.name=web', '-o', 'wide']),
    c.run(['get', 'pods', '-A', '--show-labels', '-l', 'app=web']),
    c.run(['get', 'pods,ds']),
    c.run(['get', 'events', '--field-selector', 'involvedObject.kind=DaemonSet']),
  ]);
  expect(tableCells(byLabel.stdout)).toEqual([
    ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'],
    ['db', '1/1', 'Running', '0', expect.stringMatching(/^\d+s$/)],
  ]);
  expect(byLabel.stdout).toMatch(
    /^NAME {3}READY {3}STATUS {4}RESTARTS {3}AGE\ndb {5}1\/1 {5}Running {3}0 {10}\d+s\n$/,
  );
  expect(tableCells(byField.stdout)).toEqual([
    ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE'],
    ['web', '1/1', 'Running', '0', expect.stringMatching(/^\d+s$/), expect.any(String), 'get-0', '<none>'],
  ]);
  expect(tableCells(all.stdout)).toEqual([
    ['NAMESPACE', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'LABELS'],
    ['default', 'web', '1/1', 'Running', '0', expect.any(String), 'app=web'],
    ['lab', 'elsewhere', '1/1', 'Running', '0', expect.any(String), 'app=web'],
  ]);
  expect(isAligned(all.stdout)).toBe(true);
  const [pods, daemonSets] = both.stdout.split('\n\n');
  expect(tableCells(pods).map((r) => r[0])).toEqual([
    'NAME',
    ...tableCells(pods)
      .slice(1)
      .map((r) => r[0]),
  ]);
  expect(
    tableCells(pods)
      .slice(1)
      .map((r) => r[0]),
  ).toContain('pod/web');
  expect(tableCells(daemonSets)).toEqual([
    ['NAME', 'DESIRED', 'CURRENT', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'NODE SELECTOR', 'AGE'],
    ['daemonset.apps/exporter', '2', '2', '2', '2', '2', '<none>', expect.any(String)],
  ]);
  expect(tableCells(events.stdout)[0]).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
  expect(
    tableCells(events.stdout)
      .slice(1)
      .every((r) => r[1] === 'Normal' && r[2] === 'SuccessfulCreate' && r[3] === 'daemonset/exporter'),
  ).toBe(true);
});

it('describes a pod, a node and a DaemonSet, with their events', async () => {
  const web = await c.admin.get('Pod', 'web', { namespace: 'default' });
  const at = (agoMs: number) => new Date(Date.now() - agoMs).toISOString().replace(/\.\d+Z$/, 'Z');
  await c.admin.create({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'web.checked', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'web', namespace: 'default', uid: web.metadata?.uid },
    reason: 'Checked',
    message: 'looked at by a test',
    type: 'Normal',
    source: { component: 'labctl-test' },
    count: 3,
    firstTimestamp: at(600_000),
    lastTimestamp: at(60_000),
  });
  const [pod, node, ds] = await Promise.all([
    c.run(['describe', 'pod/web']),
    c.run(['describe', 'node', 'get-0']),
    c.run(['describe', 'ds', 'exporter']),
  ]);
  expect(pod.code).toBe(0);
  // kubectl's alignment: the values of a block start in one column.
  expect(pod.stdout).toMatch(
    /^Name: {15}web\nNamespace: {10}default\nLabels: {13}app=web\nAnnotations: {8}<none>\nCreationTimestamp: {2}\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d \+0000\n/,
  );
  expect(pod.stdout).toMatch(/\nNode: {15}get-0\/\S+\n/);
  expect(pod.stdout).toMatch(/\nContainers:\n {2}app:\n {4}Container ID: {3}\S+\n {4}Image: {10}web:1\n/);
  expect(pod.stdout).toMatch(/\n {4}State: {10}Running\n {6}Started: {6}\w{3}, /);
  const events = pod.stdout
    .slice(pod.stdout.indexOf('\nEvents:\n') + 1)
    .trimEnd()
    .split('\n');
  expect(events[1].trim().split(/ {2,}/)).toEqual(['Type', 'Reason', 'Age', 'From', 'Message']);
  expect(events[2].trim().split(/ {2,}/)).toEqual(['----', '------', '---', '----', '-------']);
  const checked = events.find((l) => l.includes('Checked'))!;
  expect(checked.trim().split(/ {2,}/)).toEqual([
    'Normal',
    'Checked',
    expect.stringMatching(/^\d+s \(x3 over 10m\)$/),
    'labctl-test',
    'looked at by a test',
  ]);
  expect(checked.indexOf('Checked')).toBe(events[1].indexOf('Reason'));

  expect(node.stdout).toMatch(/^Name: {15}get-0\nRoles: {14}<none>\nLabels: {13}\S/);
  expect(node.stdout).toMatch(
    /\nNon-terminated Pods: {2}\(\d in total\)\n {2}Namespace +Name +CPU Requests {2}CPU Limits {2}Memory Requests/,
  );
  expect(node.stdout).toMatch(/\n {2}default +web +0 \(0%\) {8}0 \(0%\) {6}0 \(0%\) /);
  expect(node.stdout).toMatch(/\nAllocated resources:\n/);

  expect(ds.stdout).toMatch(
    /\nDesired Number of Nodes Scheduled: {15}2\nCurrent Number of Nodes Scheduled: {15}2\n/,
  );
  expect(ds.stdout).toMatch(/\nPods Status: +2 Running \/ 0 Waiting \/ 0 Succeeded \/ 0 Failed\n/);
  expect(ds.stdout).toMatch(/\nEvents:\n {2}Type {4}Reason {12}Age/);
  expect(ds.stdout).toContain('SuccessfulCreate');

  const missing = await c.run(['describe', 'pod', 'nope']);
  expect(missing).toMatchObject({ code: 1, stderr: 'Error from server (NotFound): pods "nope" not found\n' });
});

it('gets and describes a ConfigMap as kubectl does: its keys counted, its data shown', async () => {
  await c.admin.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', namespace: 'default' },
    data: { 'app.conf': 'mode=dev\n', colour: 'blue' },
    binaryData: { 'logo.png': Buffer.from([1, 2, 3]).toString('base64') },
  });
  const [table, describe] = await Promise.all([
    c.run(['get', 'cm', 'settings']),
    c.run(['describe', 'configmap', 'settings']),
  ]);
  expect(tableCells(table.stdout)).toEqual([
    ['NAME', 'DATA', 'AGE'],
    ['settings', '3', expect.stringMatching(/^\d+s$/)],
  ]);
  expect(describe.stdout).toContain(
    '\nData\n====\napp.conf:\n----\nmode=dev\n\n\ncolour:\n----\nblue\n\n\nBinaryData\n====\nlogo.png: 3 bytes\n',
  );
});

it('watches: prints the list, then a row for every change', async () => {
  const w = c.start(['get', 'pods', '-w', '-l', 'app=watched']);
  await eventually(() => w.stderr.includes('No resources found in default namespace.'), 'the empty list');
  await c.admin.create(pod('watched', 'default', { app: 'watched' }));
  await w.waitFor(/^NAME {3,}READY {3}STATUS/, 'the header');
  await w.waitFor(/\nwatched {3}1\/1 {3,}Running /, 'a Running row');
  await c.admin.delete('Pod', 'watched', { namespace: 'default' });
  await w.waitFor(/\nwatched {3}\S+ {3,}Terminating /, 'a Terminating row');
  await w.stop();
  // Rows line up with the header until a wider value (Terminating) widens its column.
  const lines = w.stdout.split('\n');
  expect(isAligned(lines.slice(0, lines.findIndex((l) => l.includes('Running')) + 1).join('\n'))).toBe(true);

  const events = c.start(['get', 'nodes', '--watch-only', '--output-watch-events', '-o', 'wide']);
  // The watch starts once labctl is up: change the node until a change shows.
  let n = 0;
  await eventually(
    async () => {
      await c.admin.patch('Node', 'get-1', { metadata: { labels: { watched: String(n++) } } });
      return /\nMODIFIED {3}get-1 {3}Ready /.test(`\n${events.stdout}`);
    },
    'a MODIFIED row',
    30_000,
    500,
  );
  expect(tableCells(events.stdout)[0].slice(0, 4)).toEqual(['EVENT', 'NAME', 'STATUS', 'ROLES']);
  expect(isAligned(events.stdout)).toBe(true);
  await events.stop();
}, 60_000);

it('prints NotReady for a node whose Ready condition is Unknown, as kubectl does; describe shows Unknown', async () => {
  // What the node lifecycle controller writes when a node's agent stops reporting.
  const created = await c.admin.create<Node>({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'silent' },
  });
  const since = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await c.admin.updateStatus<Node>({
    ...created,
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
          lastHeartbeatTime: since,
          lastTransitionTime: since,
        },
      ],
    },
  });
  try {
    const [table, describe] = await Promise.all([
      c.run(['get', 'nodes', 'silent']),
      c.run(['describe', 'node', 'silent']),
    ]);
    expect(table.code).toBe(0);
    expect(tableCells(table.stdout)[1].slice(0, 2)).toEqual(['silent', 'NotReady']);
    expect(describe.stdout).toMatch(
      /\nConditions:\n {2}Type +Status +LastHeartbeatTime .*\n.*\n {2}Ready +Unknown +/,
    );
  } finally {
    await c.admin.delete('Node', 'silent');
  }
});
