/**
 * `labctl logs` against a real agent process running shell pods: the whole log, --tail,
 * --timestamps, -c and the default container of a pod with several, --previous after a
 * restart, -f following new lines, and the errors for a pod or container that is not there.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { shellPod } from '../support/agentproc.js';
import { eventually } from '../support/wait.js';
import { startCliCluster, startRealNode, type CliCluster, type RealNode } from './support.js';

// Every labctl run is a fresh Node process: 1–3 s each on a busy machine, several per test.
vi.setConfig({ testTimeout: 90_000 });

let c: CliCluster;
let node: RealNode;

beforeAll(async () => {
  c = await startCliCluster();
  node = await startRealNode(c, 'lab-logs');
  await c.admin.create(
    shellPod(
      'counter',
      'for i in 1 2 3 4 5; do echo "line $i"; done; echo "line 6" >&2; sleep 3600',
      { node: node.name, marker: node.marker },
      {},
      {},
    ),
  );
  const pair = shellPod('pair', 'echo from-first; sleep 3600', { node: node.name, marker: node.marker });
  pair.spec!.containers!.push({
    name: 'second',
    command: ['sh', '-c', `echo from-second; sleep 3600 # ${node.marker}-pair2`],
  });
  await c.admin.create(pair);
  await c.admin.create(
    shellPod('crasher', 'echo "run at $(date +%s%N)"; sleep 1; exit 3', {
      node: node.name,
      marker: node.marker,
    }),
  );
  await eventually(
    async () =>
      (await c.admin.get('Pod', 'counter', { namespace: 'default' })).status?.phase === 'Running' &&
      (await c.admin.get('Pod', 'pair', { namespace: 'default' })).status?.phase === 'Running',
    'the pods to run',
  );
}, 60_000);

afterAll(async () => {
  await node?.stop();
  await c?.close();
});

it('prints a container log, its last lines, and with timestamps', async () => {
  await eventually(async () => (await c.run(['logs', 'counter'])).stdout.includes('line 6'), 'the whole log');
  const [all, tail, stamped] = await Promise.all([
    c.run(['logs', 'counter']),
    c.run(['logs', 'pod/counter', '--tail', '2']),
    c.run(['logs', 'counter', '--timestamps', '--tail=1']),
  ]);
  expect(all).toMatchObject({
    code: 0,
    stdout: 'line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n',
    stderr: '',
  });
  expect(tail.stdout).toBe('line 5\nline 6\n');
  expect(stamped.stdout).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z line 6\n$/);
});

it('picks a container with -c, and defaults to the first, saying so', async () => {
  await eventually(
    async () => (await c.run(['logs', 'pair', '-c', 'second'])).stdout === 'from-second\n',
    'the second container log',
  );
  const [first, positional] = await Promise.all([c.run(['logs', 'pair']), c.run(['logs', 'pair', 'main'])]);
  expect(first).toMatchObject({
    code: 0,
    stdout: 'from-first\n',
    stderr: 'Defaulted container "main" out of: main, second\n',
  });
  expect(positional.stdout).toBe('from-first\n');
  const [noPod, noContainer] = await Promise.all([
    c.run(['logs', 'ghost']),
    c.run(['logs', 'pair', '-c', 'third']),
  ]);
  expect(noPod).toMatchObject({ code: 1, stderr: 'Error from server (NotFound): pods "ghost" not found\n' });
  expect(noContainer.code).toBe(1);
  expect(noContainer.stderr).toMatch(/third/);
});

it("prints the previous instance's log after a restart", async () => {
  await eventually(
    async () =>
      ((await c.admin.get('Pod', 'crasher', { namespace: 'default' })).status?.containerStatuses?.[0]
        .restartCount ?? 0) >= 1,
    'crasher to restart',
  );
  const [previous, current] = await Promise.all([
    c.run(['logs', 'crasher', '--previous']),
    c.run(['logs', 'crasher']),
  ]);
  expect(previous.stdout).toMatch(/^run at \d+\n$/);
  expect(current.stdout === '' || /^run at \d+\n$/.test(current.stdout)).toBe(true);
  expect(previous.stdout).not.toBe(current.stdout);
});

it('follows a log with -f, printing lines as they are written', async () => {
  await c.admin.create(
    shellPod('ticker', 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 0.3; done', {
      node: node.name,
      marker: node.marker,
    }),
  );
  await eventually(
    async () => (await c.admin.get('Pod', 'ticker', { namespace: 'default' })).status?.phase === 'Running',
    'ticker to run',
  );
  const follow = c.start(['logs', '-f', 'ticker', '--tail', '1']);
  await follow.waitFor(/tick \d+\n/, 'a first tick');
  const first = Number(/tick (\d+)/.exec(follow.stdout)![1]);
  await follow.waitFor(new RegExp(`tick ${first + 3}\\n`), 'later ticks while following');
  await follow.stop();
  const ticks = follow.stdout
    .trim()
    .split('\n')
    .map((l) => Number(l.replace('tick ', '')));
  expect(ticks.slice(0, 4)).toEqual([first, first + 1, first + 2, first + 3]);
});
