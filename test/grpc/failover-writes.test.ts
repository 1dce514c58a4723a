/**
 * A client over two control-plane replicas (one etcd) when the replica it uses fails after it
 * applied a write: the write must not be applied again by the other replica. Between the
 * client and the first replica sits a proxy that loses the answer to the next call — the
 * connection drops as the answer comes back (a replica that crashed after committing), or the
 * answer never arrives (a replica that stalled) — so the write is applied and the client
 * cannot know it.
 */
import { createServer, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../client/client.js';
import type { Node, Pod } from '../../client/api/types.js';
import { failoverClient } from '../../client/grpc/transport.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { freePort, startEtcd, type EtcdServer } from '../support/etcd.js';
import { eventually } from '../support/wait.js';

/** HTTP/2 frame type of HEADERS: a reply starts with one, once the server has done the call. */
const HEADERS = 0x1;

interface AnswerLosingProxy {
  port: number;
  /**
   * The next reply the server starts: `drop` closes the connection as it comes (the client sees
   * UNAVAILABLE, "Connection dropped"); `swallow` keeps the connection and discards everything
   * the server sends from then on (the client's deadline passes).
   */
  loseNextAnswer(how: 'drop' | 'swallow'): void;
  close(): Promise<void>;
}

/** A plaintext TCP proxy that reads the server's HTTP/2 frames to lose one reply on purpose. */
async function startAnswerLosingProxy(targetPort: number): Promise<AnswerLosingProxy> {
  let mode: 'pass' | 'drop' | 'swallow' = 'pass';
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    // The server sends only whole frames (9-byte header, then the payload): forward frame by
    // frame so a reply can be recognised by its first frame.
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9) {
        const size = 9 + pending.readUIntBE(0, 3);
        if (pending.length < size) break;
        const frame = pending.subarray(0, size);
        pending = pending.subarray(size);
        const stream = frame.readUInt32BE(5) & 0x7fffffff;
        if (mode === 'drop' && frame[3] === HEADERS && stream !== 0) {
          mode = 'pass';
          end();
          return;
        }
        if (mode !== 'swallow') client.write(frame);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    loseNextAnswer(how) {
      mode = how;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let etcd: EtcdServer;
let a: TestControlPlane;
let b: TestControlPlane;
/** Reads through the second replica, to see what the store holds. */
let viaB: Client;
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  etcd = await startEtcd();
  const options = {
    store: 'etcd' as const,
    etcdEndpoints: [etcd.endpoint],
    etcdPrefix: '/failover-writes',
    plaintext: true,
    controllers: false as const,
  };
  a = await startTestControlPlane(options);
  // Replicas share the data folder's tokens.
  b = await startTestControlPlane({ ...options, dataDir: a.dataDir });
  viaB = b.client();
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await b?.close();
  await a?.close();
  await etcd?.stop();
});

/** A client connected to its first replica, behind a fresh proxy; the second reached directly. */
async function overBoth(timeoutMs?: number): Promise<{ client: Client; proxy: AnswerLosingProxy }> {
  const proxy = await startAnswerLosingProxy(a.cp.port);
  const client = failoverClient([`127.0.0.1:${proxy.port}`, `127.0.0.1:${b.cp.port}`], {
    token: a.cp.adminToken,
    plaintext: true,
    ...(timeoutMs ? { timeoutMs } : {}),
  });
  cleanups.push(
    () => client.close(),
    () => proxy.close(),
  );
  // Connected before an answer is lost: a swallowed handshake would keep the request from
  // being sent at all.
  await client.get('Namespace', 'default');
  return { client, proxy };
}

const pod = (meta: Pod['metadata']): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'default', ...meta },
  spec: { containers: [{ name: 'c', command: ['sleep', '1'] }] },
});

async function podsNamed(prefix: string): Promise<string[]> {
  return (await viaB.list('Pod', { namespace: 'default' })).items
    .map((p) => p.metadata?.name ?? '')
    .filter((n) => n.startsWith(prefix));
}

/** Waits until the first replica's write is in the store (it is applied, only its answer was lost). */
async function applied(prefix: string): Promise<string[]> {
  await eventually(async () => (await podsNamed(prefix)).length > 0, `a pod named ${prefix}…`);
  return podsNamed(prefix);
}

describe('failover between replicas', () => {
  it('does not create a generateName pod again when the replica that created it drops the connection', async () => {
    const { client, proxy } = await overBoth();
    proxy.loseNextAnswer('drop');
    await expect(client.create(pod({ generateName: 'dropped-' }))).rejects.toMatchObject({
      reason: 'Unavailable',
    });
    expect(await applied('dropped-')).toHaveLength(1);
    // The client has moved on: its next call goes to the replica that answers.
    expect((await client.get('Namespace', 'default')).metadata?.name).toBe('default');
  });

  it('does not create a manifest again, nor apply a JSON patch twice, nor bind twice', async () => {
    const { client, proxy } = await overBoth();
    proxy.loseNextAnswer('drop');
    await expect(
      client.createManifest(JSON.stringify(pod({ generateName: 'manifest-' }))),
    ).rejects.toMatchObject({ reason: 'Unavailable' });
    expect(await applied('manifest-')).toHaveLength(1);

    const { client: patcher, proxy: patchProxy } = await overBoth();
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'patched-once', finalizers: ['example.com/first'] },
    };
    await viaB.create(node);
    patchProxy.loseNextAnswer('drop');
    // Appending to a list: applied twice, it appends twice.
    await expect(
      patcher.patch(
        'Node',
        'patched-once',
        [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/hold' }],
        { type: 'json' },
      ),
    ).rejects.toMatchObject({ reason: 'Unavailable' });
    await eventually(
      async () => (await viaB.get('Node', 'patched-once')).metadata?.finalizers?.length !== 1,
      'the patch to be applied',
    );
    expect((await viaB.get('Node', 'patched-once')).metadata?.finalizers).toEqual([
      'example.com/first',
      'example.com/hold',
    ]);

    const { client: binder, proxy: bindProxy } = await overBoth();
    await viaB.create(pod({ name: 'bound-once' }));
    bindProxy.loseNextAnswer('drop');
    // Sent again, the bind would answer "already assigned" for a bind that succeeded.
    await expect(binder.bind('default', 'bound-once', 'lab-1')).rejects.toMatchObject({
      reason: 'Unavailable',
    });
    await eventually(
      async () => (await viaB.get('Pod', 'bound-once', { namespace: 'default' })).spec?.nodeName === 'lab-1',
      'the bind to be applied',
    );
  });

  it('sends no write to the other replica after a timeout: it may have been applied', async () => {
    const { client, proxy } = await overBoth(1500);
    proxy.loseNextAnswer('swallow');
    await expect(client.create(pod({ generateName: 'late-' }))).rejects.toMatchObject({ reason: 'Timeout' });
    expect(await applied('late-')).toHaveLength(1);

    // An update pinned to its resourceVersion: sent again, it would fail as a conflict with
    // its own write.
    const created = await viaB.create(pod({ name: 'pinned' }));
    const { client: updater, proxy: updateProxy } = await overBoth(1500);
    updateProxy.loseNextAnswer('swallow');
    const relabeled: Pod = { ...created, metadata: { ...created.metadata, labels: { v: '2' } } };
    await expect(updater.update(relabeled)).rejects.toMatchObject({ reason: 'Timeout' });
    await eventually(
      async () => (await viaB.get('Pod', 'pinned', { namespace: 'default' })).metadata?.labels?.v === '2',
      'the update to be applied',
    );
  });

  it('still moves every call on when the first replica cannot be reached at all', async () => {
    // Nothing listens there: the calls never left the client, so even writes that must be
    // sent once go to the other replica.
    const closed = await freePort();
    const client = failoverClient([`127.0.0.1:${closed}`, `127.0.0.1:${b.cp.port}`], {
      token: a.cp.adminToken,
      plaintext: true,
    });
    cleanups.push(() => client.close());
    const created = await client.create(pod({ generateName: 'moved-' }));
    expect(await podsNamed('moved-')).toEqual([created.metadata?.name]);

    const patcher = failoverClient([`127.0.0.1:${closed}`, `127.0.0.1:${b.cp.port}`], {
      token: a.cp.adminToken,
      plaintext: true,
    });
    cleanups.push(() => patcher.close());
    const patched = await patcher.patch(
      'Pod',
      created.metadata!.name!,
      { metadata: { labels: { moved: 'yes' } } },
      {
        namespace: 'default',
      },
    );
    expect(patched.metadata?.labels?.moved).toBe('yes');
  });

  it('reads from the other replica when the first does not answer in time', async () => {
    const { client, proxy } = await overBoth(1500);
    proxy.loseNextAnswer('swallow');
    expect((await client.get('Namespace', 'default')).metadata?.name).toBe('default');
  });
});
