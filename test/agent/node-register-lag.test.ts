/**
 * A read from the apiserver's cache can lag a write just made: on etcd the watch cache learns
 * of a Node a moment after its create is acknowledged, so the agent's first status round (which
 * reads the cache, as the kubelet's first try does) may find no Node. That is no reason to
 * think the Node was deleted: the agent reads the store before it registers again.
 */
import { afterEach, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Client } from '../../client/client.js';
import type { Node } from '../../client/api/types.js';
import { defaultConfig } from '../../agent/config.js';
import { LinuxMachineReader } from '../../agent/machine/linux.js';
import { NodeStatusManager } from '../../agent/status/manager.js';
import { realClock } from '../../client/util/clock.js';
import { pino } from 'pino';
import { joinedNode, startTestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The client, except that its first cache read of the Node misses, as a lagging cache would. */
function lagging(client: Client, nodeName: string): { client: Client; misses: () => number } {
  let misses = 0;
  const wrapped = new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== 'get') return Reflect.get(target, prop, receiver);
      return (kind: string, name: string, options?: { resourceVersion?: string }) => {
        if (kind === 'Node' && name === nodeName && options?.resourceVersion === '0' && misses === 0) {
          misses++;
          return Promise.reject(new ApiError('NotFound', `nodes "${name}" not found`));
        }
        return (target.get as (...a: unknown[]) => Promise<unknown>)(kind, name, options);
      };
    },
  });
  return { client: wrapped, misses: () => misses };
}

/** A status manager for a joined node, running, and the lines it logs (debug and up). */
function runStatus(
  client: Client,
  dataDir: string,
  nodeName: string,
  cachedNode?: () => Node | undefined,
): { status: NodeStatusManager; lines: Array<{ level: number; msg: string }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  const status = new NodeStatusManager({
    client,
    reader: new LinuxMachineReader({ dataDir }),
    config: defaultConfig(nodeName),
    clock: realClock,
    logger,
    ...(cachedNode ? { cachedNode } : {}),
  });
  void status.run();
  cleanups.push(() => status.stop());
  return { status, lines };
}

/** Waits until the Node's status says Ready. */
async function untilReady(admin: Client, name: string): Promise<void> {
  await eventually(async () => {
    const node = await admin.get('Node', name).catch(() => undefined);
    return node?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  }, 'the node to be Ready');
}

it('does not register again when the first cache read after registering finds no Node', async () => {
  const t = await startTestControlPlane({ controllers: false });
  cleanups.push(() => t.close());
  const { client: real, dataDir } = await joinedNode(t, 'lag-1', cleanups);
  const { client, misses } = lagging(real, 'lag-1');
  // No informer copy: the first try of each round reads the apiserver's cache.
  const { lines } = runStatus(client, dataDir, 'lag-1');
  const admin = t.client();
  await untilReady(admin, 'lag-1');
  expect(misses()).toBe(1);
  const said = lines.map((l) => l.msg);
  expect(said.filter((m) => m === 'node registered')).toHaveLength(1);
  expect(said.some((m) => /gone|taking it over/.test(m))).toBe(false);
});

it('writes node status from a stale informer copy at the first try, keeping what others wrote meanwhile', async () => {
  const t = await startTestControlPlane({ controllers: false });
  cleanups.push(() => t.close());
  const { client, dataDir } = await joinedNode(t, 'stale-1', cleanups);
  const informer: { copy?: Node } = {};
  const { status, lines } = runStatus(client, dataDir, 'stale-1', () => informer.copy);
  const admin = t.client();
  await untilReady(admin, 'stale-1');
  await status.stop();
  // The informer's copy from before others' writes (a label, a condition of another component),
  // with a status to bring up to date.
  const before = await admin.get('Node', 'stale-1');
  await admin.patch('Node', 'stale-1', { metadata: { labels: { rack: 'b' } } });
  const network = {
    type: 'NetworkUnavailable',
    status: 'False',
    reason: 'RouteCreated',
    message: 'routes are set',
  };
  await admin.patch(
    'Node',
    'stale-1',
    { status: { conditions: [network] } },
    { type: 'strategic', subresource: 'status' },
  );
  const stale = structuredClone(before);
  stale.status!.conditions = stale.status!.conditions!.filter((c) => c.type !== 'Ready');
  informer.copy = stale;
  lines.length = 0;
  await status.syncNodeStatus();
  expect(lines.filter((l) => l.msg === 'error updating node status, will retry')).toEqual([]);
  expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  const after = await admin.get('Node', 'stale-1');
  expect(after.metadata?.labels?.rack).toBe('b');
  expect(after.status?.conditions?.find((c) => c.type === 'NetworkUnavailable')).toMatchObject(network);
  expect(after.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  expect(after.metadata?.resourceVersion).not.toBe(before.metadata?.resourceVersion);
});
