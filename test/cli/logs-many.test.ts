/**
 * `labctl logs` of several pods, as kubectl reads them: ds/NAME reads one pod of a DaemonSet
 * and says which ("Found N pods, using pod/…"), --all-pods reads every one with its source;
 * -l reads every matching pod (the last 10 lines of each unless --tail says otherwise),
 * --prefix starts each line with `[pod/NAME/CONTAINER] `, and -f follows several logs at once,
 * whole lines each, only within --max-log-requests (5 unless raised); --ignore-errors reports a
 * failing log and goes on; a pod's `kubectl.kubernetes.io/default-container` is read when no
 * container is named. A real agent runs the shell pods; two hollow nodes run the DaemonSet and
 * a pod of six containers.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import { shellPod } from '../support/agentproc.js';
import { eventually } from '../support/wait.js';
import {
  daemonSetObject,
  startCliCluster,
  startRealNode,
  type CliCluster,
  type RealNode,
} from './support.js';

// Every labctl run is a fresh Node process: 1–3 s each on a busy machine, several per test.
vi.setConfig({ testTimeout: 90_000 });

const HOLLOW_LINE = (container: string) => `hollow container ${container} started (simulated, no process)`;

let c: CliCluster;
let node: RealNode;

function labelled(pod: Pod, app: string): Pod {
  pod.metadata!.labels = { app };
  return pod;
}

beforeAll(async () => {
  c = await startCliCluster({ hollowNodes: 2, prefix: 'hl' });
  node = await startRealNode(c, 'lab-many');
  const where = { node: node.name, marker: node.marker };
  const ds = daemonSetObject('hl-ds', 'hollow:1');
  ds.spec!.template!.spec!.nodeSelector = { 'kubelab.io/pool': 'hl' };
  await c.admin.create(ds);
  await c.admin.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'six', namespace: 'default', labels: { app: 'six' } },
    spec: {
      nodeName: 'hl-0',
      containers: [1, 2, 3, 4, 5, 6].map((i) => ({ name: `c${i}`, image: 'hollow:1' })),
    },
  });
  for (const name of ['talk-a', 'talk-b']) {
    const script = `for i in $(seq 1 12); do echo "${name} line $i"; done; sleep 3600`;
    await c.admin.create(labelled(shellPod(name, script, where), 'talk'));
  }
  for (const name of ['tick-a', 'tick-b']) {
    const script = 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 0.3; done';
    await c.admin.create(labelled(shellPod(name, script, where), 'tick'));
  }
  await eventually(
    async () =>
      (await c.admin.list('Pod', { namespace: 'default' })).items.every((p) => p.status?.phase === 'Running'),
    'every pod to run',
  );
}, 90_000);

afterAll(async () => {
  await node?.stop();
  await c?.close();
});

it('reads one pod of a DaemonSet, saying which, or every pod of it with --all-pods', async () => {
  const pods = (await c.admin.list('Pod', { namespace: 'default', labelSelector: 'app=hl-ds' })).items
    .map((p) => p.metadata!.name!)
    .sort();
  expect(pods).toHaveLength(2);
  const line = `${HOLLOW_LINE('agent')}\n`;
  const [one, prefixed, all] = await Promise.all([
    c.run(['logs', 'ds/hl-ds']),
    c.run(['logs', 'daemonset/hl-ds', '--prefix']),
    c.run(['logs', 'daemonsets.apps/hl-ds', '--all-pods']),
  ]);
  expect(one).toMatchObject({ code: 0, stdout: line });
  const chosen = /^Found 2 pods, using pod\/(\S+)\n$/.exec(one.stderr)?.[1];
  expect(pods).toContain(chosen);
  // The pod it names is the pod it reads.
  expect(prefixed).toMatchObject({
    code: 0,
    stdout: `[pod/${chosen}/agent] ${line}`,
    stderr: `Found 2 pods, using pod/${chosen}\n`,
  });
  expect(all).toMatchObject({ code: 0, stderr: '' });
  expect(all.stdout.split('\n').filter(Boolean).sort()).toEqual(
    pods.map((p) => `[pod/${p}/agent] ${HOLLOW_LINE('agent')}`),
  );

  const [node, missing] = await Promise.all([c.run(['logs', 'node/hl-0']), c.run(['logs', 'ds/ghost'])]);
  expect(node).toMatchObject({
    code: 1,
    stderr:
      "error: cannot get the logs from node/hl-0: logs are read from a pod (POD, pod/NAME), a DaemonSet's pods (ds/NAME) or the pods a selector matches (-l)\n",
  });
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/^Error from server \(NotFound\): daemonsets(\.apps)? "ghost" not found\n$/);
});

it('reads every pod a selector matches: the last 10 lines of each, named with --prefix, failing at the first error unless told to go on', async () => {
  await eventually(
    async () =>
      (await c.run(['logs', '-l', 'app=talk', '--tail', '1'])).stdout === 'talk-a line 12\ntalk-b line 12\n',
    'both talkers to have written their lines',
  );
  const lines = (pod: string, from: number) =>
    Array.from({ length: 13 - from }, (_, i) => `${pod} line ${from + i}\n`).join('');
  const [all, prefixed, none, both] = await Promise.all([
    c.run(['logs', '-l', 'app=talk']),
    c.run(['logs', '--selector=app=talk', '--prefix', '--tail=2']),
    c.run(['logs', '-l', 'app=nobody']),
    c.run(['logs', 'talk-a', '-l', 'app=talk']),
  ]);
  expect(all).toMatchObject({ code: 0, stdout: lines('talk-a', 3) + lines('talk-b', 3), stderr: '' });
  expect(prefixed).toMatchObject({
    code: 0,
    stdout:
      '[pod/talk-a/main] talk-a line 11\n[pod/talk-a/main] talk-a line 12\n' +
      '[pod/talk-b/main] talk-b line 11\n[pod/talk-b/main] talk-b line 12\n',
  });
  expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'No resources found in default namespace.\n' });
  expect(both).toMatchObject({
    code: 1,
    stderr: 'error: only a selector (-l) or a POD name is allowed: drop one of them\n',
  });

  // Neither talker has restarted: each --previous fails; the first failure ends the command
  // unless --ignore-errors, which reports each and goes on.
  const [stopped, goesOn] = await Promise.all([
    c.run(['logs', '-l', 'app=talk', '--previous']),
    c.run(['logs', '-l', 'app=talk', '--previous', '--ignore-errors']),
  ]);
  const previousMissing = /previous terminated container "main" in pod \S+ not found/;
  expect(stopped.code).toBe(1);
  expect(stopped.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(previousMissing)]);
  expect(goesOn.code).toBe(0);
  expect(goesOn.stderr.trimEnd().split('\n')).toEqual([
    expect.stringMatching(previousMissing),
    expect.stringMatching(previousMissing),
  ]);
});

it('follows every matching pod at once, in whole lines, only within --max-log-requests', async () => {
  const follow = c.start(['logs', '-f', '-l', 'app=tick', '--prefix', '--tail', '1']);
  for (const pod of ['tick-a', 'tick-b']) {
    await follow.waitFor(new RegExp(`(\\[pod/${pod}/main\\] tick \\d+\\n[^]*){4}`), `4 lines of ${pod}`);
  }
  await follow.stop();
  const lines = follow.stdout.trimEnd().split('\n');
  for (const l of lines) expect(l).toMatch(/^\[pod\/tick-[ab]\/main\] tick \d+$/);
  for (const pod of ['tick-a', 'tick-b']) {
    const ticks = lines.filter((l) => l.includes(`/${pod}/`)).map((l) => Number(l.split(' tick ')[1]));
    expect(ticks).toEqual(ticks.map((_, i) => ticks[0] + i));
  }

  const limit = (streams: number, max: number) =>
    `error: you are attempting to follow ${streams} log streams, but maximum allowed concurrency is ${max}, use --max-log-requests to increase the limit\n`;
  const [overOne, overDefault, raised] = await Promise.all([
    c.run(['logs', '-f', '-l', 'app=tick', '--max-log-requests', '1']),
    c.run(['logs', '-f', '-l', 'app=six', '--all-containers']),
    c.run(['logs', '-f', '-l', 'app=six', '--all-containers', '--max-log-requests', '6', '--prefix']),
  ]);
  expect(overOne).toMatchObject({ code: 1, stdout: '', stderr: limit(2, 1) });
  expect(overDefault).toMatchObject({ code: 1, stdout: '', stderr: limit(6, 5) });
  expect(raised).toMatchObject({ code: 0, stderr: '' });
  expect(raised.stdout.split('\n').filter(Boolean).sort()).toEqual(
    ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'].map((n) => `[pod/six/${n}] ${HOLLOW_LINE(n)}`),
  );
});

it("reads the container kubectl's default-container annotation names, saying when it is not there", async () => {
  const annotate = (name: string) =>
    c.admin.patch(
      'Pod',
      'six',
      { metadata: { annotations: { 'kubectl.kubernetes.io/default-container': name } } },
      { namespace: 'default' },
    );
  await annotate('c3');
  expect(await c.run(['logs', 'six'])).toMatchObject({
    code: 0,
    stdout: `${HOLLOW_LINE('c3')}\n`,
    stderr: '',
  });
  await annotate('c9');
  expect(await c.run(['logs', 'six'])).toMatchObject({
    code: 0,
    stdout: `${HOLLOW_LINE('c1')}\n`,
    stderr:
      'Default container name "c9" not found in pod six\nDefaulted container "c1" out of: c1, c2, c3, c4, c5, c6\n',
  });
});
