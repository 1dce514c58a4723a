import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageConformance } from '../../test/storage/conformance.js';
import { freePort, startEtcd, type EtcdServer } from '../../test/support/etcd.js';
import { openEtcdStorage, type EtcdStorage } from './etcd.js';
import { isStorageError, type StorageError, type StorageEvent } from './types.js';

// etcd reads any flag from ETCD_<FLAG>; startEtcd passes our environment on. A short server-side
// progress interval lets the onProgress test finish quickly on etcd 3.4.23 (which we do not
// ask for progress, see trustsRequestedProgress in etcd.ts).
process.env.ETCD_EXPERIMENTAL_WATCH_PROGRESS_NOTIFY_INTERVAL = '200ms';

let etcd: EtcdServer;
beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd?.stop();
});

/** Equal-length random prefixes: none is a string prefix of another, so tests never see each other's keys. */
function uniquePrefix(): string {
  return `/kt-${randomBytes(6).toString('hex')}`;
}

async function open(prefix: string, endpoint = etcd.endpoint): Promise<EtcdStorage> {
  return openEtcdStorage({ endpoints: [endpoint], prefix });
}

storageConformance('etcd', async () => {
  const prefix = uniquePrefix();
  let storage = await open(prefix);
  return {
    storage,
    async restart() {
      await storage.close();
      storage = await open(prefix);
      return storage;
    },
    async cleanup() {
      await storage.close();
    },
  };
});

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function collect(storage: EtcdStorage, prefix: string, from: number) {
  const events: StorageEvent[] = [];
  const errors: StorageError[] = [];
  const progress: number[] = [];
  const handle = storage.watch(prefix, from, {
    onEvents: (batch) => events.push(...batch),
    onError: (err) => errors.push(err),
    onProgress: (rv) => progress.push(rv),
  });
  return { events, errors, progress, handle };
}

/** A TCP proxy in front of etcd whose connections the test can cut, to simulate a network loss. */
async function startProxy(target: string) {
  const { hostname, port: targetPort } = new URL(target);
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const srv = createServer((client) => {
        const upstream = connect(Number(targetPort), hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('error', () => s.destroy());
          s.on('close', () => {
            sockets.delete(s);
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', () => resolve());
      server = srv;
    });
  const cut = async () => {
    const srv = server;
    server = undefined;
    const closed = srv ? new Promise((r) => srv.close(r)) : Promise.resolve();
    for (const s of sockets) s.destroy();
    await closed;
  };
  await listen();
  return { endpoint: `http://127.0.0.1:${port}`, cut, restore: listen, close: cut };
}

async function expectCode(p: Promise<unknown>, code: string): Promise<StorageError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isStorageError(err), String(err)).toBe(true);
  expect((err as StorageError).code).toBe(code);
  return err as StorageError;
}

describe('etcd storage specifics', () => {
  it('fails to open with a clear, actionable message when etcd is unreachable', async () => {
    const port = await freePort();
    const started = Date.now();
    const err = await expectCode(
      openEtcdStorage({ endpoints: [`http://127.0.0.1:${port}`], connectTimeoutMs: 3000 }),
      'Unavailable',
    );
    expect(err.message).toContain(`http://127.0.0.1:${port}`);
    expect(err.message).toMatch(/check that etcd is running/i);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('rejects malformed endpoint lists', async () => {
    await expectCode(openEtcdStorage({ endpoints: [] }), 'Unavailable');
    await expectCode(openEtcdStorage({ endpoints: ['127.0.0.1:2379'] }), 'Unavailable');
    await expectCode(openEtcdStorage({ endpoints: ['http://a:1', 'https://b:2'] }), 'Unavailable');
  });

  it('uses the live endpoint when another one is down, for reads and writes', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const s = await openEtcdStorage({ endpoints: [dead, etcd.endpoint], prefix: uniquePrefix() });
    try {
      for (let i = 0; i < 10; i++) {
        const kv = await s.create(`/m/${i}`, 'v');
        expect((await s.get(`/m/${i}`))?.modRevision).toBe(kv.modRevision);
      }
      expect((await s.list('/m/')).items).toHaveLength(10);
    } finally {
      await s.close();
    }
  });

  it('refuses a value larger than etcd accepts with TooLarge', async () => {
    const s = await open(uniquePrefix());
    try {
      await expectCode(s.create('/huge', 'x'.repeat(5 * 1024 * 1024)), 'TooLarge');
      expect(await s.create('/small', 'ok')).toMatchObject({ key: '/small' });
    } finally {
      await s.close();
    }
  });

  it('keeps keys under its prefix and out of other prefixes', async () => {
    const a = await open(uniquePrefix());
    const b = await open(uniquePrefix());
    try {
      await a.create('/x', 'from a');
      expect(await b.get('/x')).toBeUndefined();
      expect((await a.list('')).items.map((kv) => kv.key)).toEqual(['/x']);
      expect((await b.list('')).items).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('lists 10,000 1 KiB values in pages below the 4 MiB message limit', async () => {
    const s = await open(uniquePrefix());
    try {
      const value = 'v'.repeat(1024);
      const keys = Array.from({ length: 10_000 }, (_, i) => `/big/${String(i).padStart(5, '0')}`);
      for (let i = 0; i < keys.length; i += 64)
        await Promise.all(keys.slice(i, i + 64).map((k) => s.create(k, value)));
      const all = await s.list('/big/');
      expect(all.items).toHaveLength(10_000);
      expect(all.items.map((kv) => kv.key)).toEqual(keys);
      expect(all.remaining).toBe(0);

      const page = await s.list('/big/', { revision: all.revision, limit: 6000, startKey: keys[1000] });
      expect(page.items).toHaveLength(6000);
      expect(page.items[0].key).toBe(keys[1000]);
      expect(page.remaining).toBe(3000);
    } finally {
      await s.close();
    }
  });

  it('refuses a watch from the revision just below the compaction point (etcd alone would allow it)', async () => {
    const prefix = uniquePrefix();
    const s = await open(prefix);
    try {
      await s.create('/e/a', 'a1');
      await s.create('/e/b', 'b1');
      const at = await s.currentRevision();
      await s.create('/e/c', 'c1');
      await s.compact(at);

      // A fresh client knows nothing of the compaction and must find it by probing.
      const other = await open(prefix);
      try {
        expect(await other.compactedRevision()).toBe(at);
      } finally {
        await other.close();
      }

      await expectCode(s.list('/e/', { revision: at - 1 }), 'Compacted');
      const refused = collect(s, '/e/', at - 1);
      await until(() => refused.errors.length === 1, 'a Compacted error');
      expect(refused.errors[0].code).toBe('Compacted');
      expect(refused.errors[0].details.requestedRevision).toBe(at - 1);
      expect(refused.events).toEqual([]);

      const accepted = collect(s, '/e/', at);
      await until(() => accepted.events.length === 1, 'the event after the compaction point');
      accepted.handle.cancel();
      expect(accepted.events[0].key).toBe('/e/c');
      await expectCode(s.list('/e/', { revision: (await s.currentRevision()) + 100 }), 'Unavailable');
    } finally {
      await s.close();
    }
  });

  it('resumes a watch after the connection drops, with no gap and no duplicate', async () => {
    const prefix = uniquePrefix();
    const proxy = await startProxy(etcd.endpoint);
    const watched = await open(prefix, proxy.endpoint);
    const writer = await open(prefix);
    try {
      const w = collect(watched, '/r/', await writer.currentRevision());
      const writes = [await writer.create('/r/1', 'one'), await writer.create('/r/2', 'two')];
      await until(() => w.events.length === 2, 'events before the cut');

      await proxy.cut();
      const during = await expectCode(watched.create('/r/lost', 'x'), 'Unavailable');
      expect(during.message).toContain(proxy.endpoint);
      expect(during.message).toMatch(/may or may not have been applied/);
      writes.push(await writer.create('/r/3', 'three'));
      writes.push(await writer.update('/r/1', 'one again', writes[0].modRevision));
      await new Promise((r) => setTimeout(r, 300));
      await proxy.restore();
      writes.push(await writer.create('/r/4', 'four'));

      await until(() => w.events.length === 5, 'events after the reconnect');
      await new Promise((r) => setTimeout(r, 100));
      w.handle.cancel();
      expect(w.errors).toEqual([]);
      expect(w.events.map((e) => e.revision)).toEqual(writes.map((kv) => kv.modRevision));
      expect(w.events[3].prevValue).toBe('one');
    } finally {
      await watched.close();
      await writer.close();
      await proxy.close();
    }
  });

  it('reports Compacted when a resumed watch finds its revision compacted', async () => {
    const prefix = uniquePrefix();
    const proxy = await startProxy(etcd.endpoint);
    const watched = await open(prefix, proxy.endpoint);
    const writer = await open(prefix);
    try {
      const w = collect(watched, '/q/', await writer.currentRevision());
      await writer.create('/q/1', 'one');
      await until(() => w.events.length === 1, 'the first event');
      await proxy.cut();
      await writer.create('/q/2', 'two');
      await writer.create('/q/3', 'three');
      await writer.compact(await writer.currentRevision());
      await proxy.restore();
      await until(() => w.errors.length === 1, 'a Compacted error');
      expect(w.errors[0].code).toBe('Compacted');
      expect(w.events).toHaveLength(1);
    } finally {
      await watched.close();
      await writer.close();
      await proxy.close();
    }
  });

  it('reports progress on a quiet prefix, never behind the events it delivered', async () => {
    const s = await open(uniquePrefix());
    try {
      const log: Array<['event' | 'progress', number]> = [];
      const errors: StorageError[] = [];
      const handle = s.watch('/quiet/', await s.currentRevision(), {
        onEvents: (batch) => log.push(...batch.map((e) => ['event', e.revision] as ['event', number])),
        onProgress: (rv) => log.push(['progress', rv]),
        onError: (err) => errors.push(err),
      });
      const event = await s.create('/quiet/a', 'a');
      const outside = await s.create('/loud/b', 'b');
      await until(
        () => log.some(([kind, rv]) => kind === 'progress' && rv >= outside.modRevision),
        'progress past a write outside the prefix',
      );
      handle.cancel();
      expect(errors).toEqual([]);
      expect(log.filter(([kind]) => kind === 'event')).toEqual([['event', event.modRevision]]);
      // Progress R promises every event <= R was delivered: later events are above it.
      let high = 0;
      for (const [, rv] of log) {
        expect(rv).toBeGreaterThan(high);
        high = rv;
      }
    } finally {
      await s.close();
    }
  });

  it('stops a watch whose callback throws, without crashing', async () => {
    const s = await open(uniquePrefix());
    try {
      const errors: StorageError[] = [];
      let calls = 0;
      s.watch('/t/', await s.currentRevision(), {
        onEvents: () => {
          calls++;
          throw new Error('consumer bug');
        },
        onError: (err) => errors.push(err),
      });
      await s.create('/t/1', 'x');
      await until(() => errors.length === 1, 'the watch to stop');
      await s.create('/t/2', 'y');
      await new Promise((r) => setTimeout(r, 100));
      expect(calls).toBe(1);
      expect(errors[0].message).toContain('consumer bug');
    } finally {
      await s.close();
    }
  });

  it('ends watches and refuses calls after close', async () => {
    const s = await open(uniquePrefix());
    const w = collect(s, '/c/', await s.currentRevision());
    await s.close();
    await expectCode(s.get('/c/a'), 'Unavailable');
    const late = collect(s, '/c/', 0);
    expect(late.errors).toEqual([]);
    await until(() => late.errors.length === 1, 'the closed-store error');
    expect(late.errors[0].code).toBe('Unavailable');
    expect(w.errors).toEqual([]);
  });
});
