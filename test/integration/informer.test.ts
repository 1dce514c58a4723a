/**
 * Informers against a real control plane over gRPC: their cache ends equal to the server's
 * state after a server restart, a compaction during a disconnect (relist, with the deletions
 * of the gap delivered), a silently dropped connection (the watchdog), and 10,000 writes from
 * several writers — and no event is handled twice for the same resourceVersion.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { SharedIndexInformer } from '../../client/cache/informer.js';
import type { Client } from '../../client/client.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { freePort } from '../support/etcd.js';
import { startProxy, type CuttableProxy } from '../support/proxy.js';
import { eventually } from '../support/wait.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const pod = (name: string, labels: Record<string, string> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'c', command: ['sleep', '1'] }] },
});

/** name → resourceVersion, from the server and from an informer. */
async function serverState(c: Client): Promise<string> {
  const list = await c.list('Pod');
  return JSON.stringify(list.items.map((p) => [p.metadata?.name, p.metadata?.resourceVersion]).sort());
}
function cacheState(i: SharedIndexInformer<'Pod'>): string {
  return JSON.stringify(
    i
      .list()
      .map((p) => [p.metadata?.name, p.metadata?.resourceVersion])
      .sort(),
  );
}

function recordingInformer(
  client: Client,
  extra: ConstructorParameters<typeof SharedInformerFactory>[1] = {},
) {
  const factory = new SharedInformerFactory(client, {
    reflector: { backoff: { initialMs: 200, maxMs: 2000, resetAfterMs: 120_000, jitter: 0.5 } },
    ...extra,
  });
  cleanups.push(() => factory.shutdown());
  const informer = factory.informerFor('Pod');
  const handled: string[] = [];
  const deletions: Array<{ name: string; unknown: boolean; labels?: Record<string, string> }> = [];
  informer.addEventHandler({
    onAdd: (p) => void handled.push(`${p.metadata?.name}@${p.metadata?.resourceVersion}`),
    onUpdate: (_o, p) => void handled.push(`${p.metadata?.name}@${p.metadata?.resourceVersion}`),
    onDelete: (p, unknown) => {
      handled.push(`${p.metadata?.name}@${p.metadata?.resourceVersion}${unknown ? '?' : ''}`);
      deletions.push({ name: p.metadata!.name!, unknown, labels: p.metadata?.labels });
    },
  });
  factory.start();
  return { factory, informer, handled, deletions };
}

function expectNoEventTwice(handled: string[]): void {
  const seen = new Set<string>();
  const twice = handled.filter((h) => (seen.has(h) ? true : (seen.add(h), false)));
  expect(twice).toEqual([]);
}

async function controlPlane(
  options: Parameters<typeof startTestControlPlane>[0] = {},
): Promise<TestControlPlane> {
  const t = await startTestControlPlane(options);
  cleanups.push(() => t.close());
  return t;
}

describe('informer against a real server', () => {
  it('(a) survives a server restart and ends equal to the server', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kubelab-restart-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const first = await startTestControlPlane({ dataDir, listen: `127.0.0.1:${port}` });
    const admin1 = first.client();
    for (let i = 0; i < 10; i++) await admin1.create(pod(`p${i}`));
    // Its own client: the harness closes the clients it made when the first server stops.
    const watcherClient = grpcClient({
      server: `127.0.0.1:${port}`,
      token: first.cp.adminToken,
      caPem: first.caPem,
    });
    cleanups.push(() => watcherClient.close());
    const { factory, informer, handled } = recordingInformer(watcherClient);
    expect(await factory.waitForCacheSync(10_000)).toBe(true);
    await eventually(async () => cacheState(informer) === (await serverState(admin1)), 'the first sync');

    await first.close();
    const second = await controlPlane({ dataDir, listen: `127.0.0.1:${port}` });
    const admin2 = second.client();
    await admin2.delete('Pod', 'p0');
    await admin2.patch('Pod', 'p1', { metadata: { labels: { after: 'restart' } } });
    await admin2.create(pod('new'));
    await eventually(
      async () => cacheState(informer) === (await serverState(admin2)),
      'the informer to catch up after the restart',
    );
    expectNoEventTwice(handled);
  });

  it('(b) relists after a compaction during a disconnect, delivering the deletions of the gap', async () => {
    const t = await controlPlane({ historyMs: 200 });
    const admin = t.client();
    const proxy: CuttableProxy = await startProxy(t.cp.port);
    cleanups.push(() => proxy.close());
    for (const name of ['a', 'b', 'c']) await admin.create(pod(name, { v: '1' }));
    const { factory, informer, handled, deletions } = recordingInformer(
      t.client({ server: `127.0.0.1:${proxy.port}` }),
    );
    expect(await factory.waitForCacheSync(10_000)).toBe(true);

    proxy.accept(false);
    proxy.cut();
    await admin.delete('Pod', 'a');
    await admin.patch('Pod', 'b', { metadata: { labels: { v: '2' } } });
    await admin.create(pod('d'));
    await new Promise((r) => setTimeout(r, 400));
    await admin.create(pod('e'));
    proxy.accept(true);

    await eventually(
      async () => cacheState(informer) === (await serverState(admin)),
      'the informer to relist',
    );
    expect(deletions).toEqual([{ name: 'a', unknown: true, labels: { v: '1' } }]);
    expect(informer.get('b', 'default')?.metadata?.labels).toEqual({ v: '2' });
    expectNoEventTwice(handled);
  });

  it('(c) notices a silently dropped connection through its watchdog and reconnects', async () => {
    const t = await controlPlane({ bookmarkMs: 300 });
    const admin = t.client();
    const proxy = await startProxy(t.cp.port);
    cleanups.push(() => proxy.close());
    // TCP keepalive would find the dead connection too, eventually; push it out of the way.
    const watcher = t.client({
      server: `127.0.0.1:${proxy.port}`,
      channelOptions: { 'grpc.keepalive_time_ms': 3_600_000 },
      timeoutMs: 3_000,
    });
    const { factory, informer, handled } = recordingInformer(watcher, {
      reflector: {
        watchdogMs: 1_500,
        backoff: { initialMs: 100, maxMs: 1000, resetAfterMs: 120_000, jitter: 0.5 },
      },
    });
    expect(await factory.waitForCacheSync(10_000)).toBe(true);
    await admin.create(pod('before'));
    await eventually(() => informer.list().length === 1, 'the first event');

    proxy.freeze();
    const frozenAt = Date.now();
    await admin.create(pod('during-1'));
    await admin.create(pod('during-2'));
    await eventually(
      async () => cacheState(informer) === (await serverState(admin)),
      'the watchdog to reconnect',
      15_000,
    );
    expect(Date.now() - frozenAt).toBeGreaterThanOrEqual(1_400);
    expectNoEventTwice(handled);
  });

  it('(d) stays exact through 10,000 random writes from several writers', async () => {
    const t = await controlPlane();
    const { factory, informer, handled } = recordingInformer(t.client());
    expect(await factory.waitForCacheSync(10_000)).toBe(true);
    const writers = Array.from({ length: 4 }, () => t.client());
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    await Promise.all(
      writers.map(async (w, wi) => {
        for (let i = 0; i < 2_500; i++) {
          const name = `w${wi}-p${rand(60)}`;
          const op = rand(3);
          try {
            if (op === 0) await w.create(pod(name));
            else if (op === 1) await w.patch('Pod', name, { metadata: { labels: { n: String(i) } } });
            else await w.delete('Pod', name);
          } catch (err) {
            const reason = (err as { reason?: string }).reason;
            if (reason !== 'AlreadyExists' && reason !== 'NotFound') throw err;
          }
        }
      }),
    );
    const admin = t.client();
    await eventually(
      async () => cacheState(informer) === (await serverState(admin)),
      'the informer to match the server',
      30_000,
    );
    expect(handled.length).toBeGreaterThan(3_000);
    expectNoEventTwice(handled);
  }, 120_000);
});
