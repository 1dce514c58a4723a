/**
 * @kubernetes/client-node (the official JavaScript client, pinned) against kubelab's REST API,
 * as a user's program runs it: a kubeconfig from `kubelab kubeconfig`, an informer on pods
 * with the restart-on-error handler its documentation shows, through a server restart and a
 * watch answered 410 Gone — and it sees every change.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { FakeClock } from '../../client/util/clock.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { ControlPlane } from '../../main/controlplane.js';
import { silentLogger } from '../../main/logging.js';
import { eventually } from '../support/wait.js';
import { KUBELAB, run } from './support.js';

const clock = new FakeClock(Date.parse('2026-12-06T12:00:00Z'));
const dataDir = mkdtempSync(join(tmpdir(), 'kubelab-client-node-'));
let cp: ControlPlane;
let admin: Client;
let port = 0;

async function startServer(): Promise<void> {
  cp = await ControlPlane.start({
    dataDir,
    listen: `127.0.0.1:${port}`,
    logger: silentLogger(),
    clock,
    historyMs: 60_000,
  });
  port = cp.port;
  const caPem = readFileSync(cp.pki!.caPath, 'utf8');
  admin = grpcClient({ server: `127.0.0.1:${port}`, caPem, token: cp.adminToken });
}

async function stopServer(): Promise<void> {
  admin.close();
  await cp.stop();
}

beforeAll(async () => {
  await startServer();
}, 60_000);

afterAll(async () => {
  await stopServer();
  rmSync(dataDir, { recursive: true, force: true });
});

const pod = (name: string, labels: Record<string, string> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
});

it('an informer lists, watches, survives a restart and a 410, and sees every change', async () => {
  const { stdout } = await run(process.execPath, [KUBELAB, 'kubeconfig', '--data-dir', dataDir]);
  const kc = new k8s.KubeConfig();
  kc.loadFromString(stdout);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  let lists = 0;
  const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/pods', () => {
    lists++;
    return core.listNamespacedPod({ namespace: 'default' });
  });
  const seen: string[] = [];
  let connects = 0;
  let restartOnError = true;
  informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`));
  informer.on('update', (p) =>
    seen.push(`update ${p.metadata?.name} ${JSON.stringify(p.metadata?.labels ?? {})}`),
  );
  informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`));
  informer.on('connect', () => connects++);
  // What client-node's README shows: an informer stops on an error; restart it.
  informer.on('error', () => {
    if (restartOnError) setTimeout(() => void informer.start().catch(() => undefined), 100);
  });
  const cached = () =>
    informer
      .list()
      .map((p) => p.metadata?.name)
      .sort();
  const sameAsServer = async () => {
    const items = (await admin.list('Pod', { namespace: 'default' })).items;
    const server = new Map(items.map((p) => [p.metadata?.name, p.metadata?.resourceVersion]));
    const mine = new Map(informer.list().map((p) => [p.metadata?.name, p.metadata?.resourceVersion]));
    return server.size === mine.size && [...server].every(([n, rv]) => mine.get(n) === rv);
  };

  try {
    await informer.start();
    expect(lists).toBe(1);

    await admin.create(pod('a'));
    await admin.create(pod('b'));
    const a = await admin.get('Pod', 'a', { namespace: 'default' });
    await admin.update({ ...a, metadata: { ...a.metadata, labels: { tier: 'front' } } });
    await admin.delete('Pod', 'b', { namespace: 'default' });
    await eventually(() => seen.includes('delete b'), 'the informer to see the deletion');
    // In order; the control plane's own writes (the scheduler's condition) come between.
    const order = ['add a', 'add b', 'update a {"tier":"front"}', 'delete b'].map((e) => seen.indexOf(e));
    expect(
      order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1])),
      seen.join(', '),
    ).toBe(true);
    expect(cached()).toEqual(['a']);

    // The server restarts: the watch breaks, the informer is restarted by its error handler
    // (from its resourceVersion: the history is in the store) and goes on.
    const before = connects;
    await stopServer();
    await startServer();
    await eventually(() => connects > before + 1, 'the informer to reconnect');
    await admin.create(pod('c'));
    await eventually(() => seen.includes('add c'), 'the informer to see a pod created after the restart');

    // Changes while the informer is stopped, then its resourceVersion falls out of the
    // history (the clock moves past it and a write trims it): its watch is answered 410, it
    // lists again and catches up.
    restartOnError = false;
    await informer.stop();
    await admin.create(pod('d'));
    await admin.delete('Pod', 'a', { namespace: 'default' });
    clock.advance(120_000);
    await admin.create(pod('e'));
    const listsBefore = lists;
    restartOnError = true;
    await informer.start();
    await eventually(() => seen.includes('add e') && seen.includes('delete a'), 'the informer to catch up');
    expect(lists).toBe(listsBefore + 1);
    expect(seen).toContain('add d');
    await eventually(sameAsServer, "the informer's cache to be the server's list");
    expect(cached()).toEqual(['c', 'd', 'e']);
  } finally {
    restartOnError = false;
    await informer.stop();
  }
}, 120_000);
