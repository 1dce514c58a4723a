/**
 * End to end over gRPC with TLS and a bearer token: a client that watches survives cut
 * connections by resuming from its last resourceVersion, seeing every event exactly once and
 * in order; a watch from a resourceVersion the server no longer keeps gets OUT_OF_RANGE and the
 * client lists again; a client that stops reading has its watch ended instead of the server
 * queueing for it without bound.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, isExpired } from '../../client/api/errors.js';
import type { Pod } from '../../client/api/types.js';
import type { Client, Watch } from '../../client/client.js';
import { startProxy, type CuttableProxy } from '../support/proxy.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const REPO = join(import.meta.dirname, '..', '..');
const STALLED_WATCHER = join(REPO, 'test', 'support', 'stalledwatcher.ts');

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', command: ['sleep', '1'] }] },
});

let t: TestControlPlane | undefined;
let proxy: CuttableProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await t?.close();
  proxy = undefined;
  t = undefined;
});

/** A minimal list-then-watch loop with resume, as a reflector does. */
function follow(client: Client) {
  const seen: string[] = [];
  let rv = '';
  let stopped = false;
  let current: Watch<Pod> | undefined;
  let resumes = 0;
  let relists = 0;
  const loop = (async () => {
    rv = (await client.list('Pod')).resourceVersion;
    while (!stopped) {
      try {
        current = await client.watch('Pod', { resourceVersion: rv, allowWatchBookmarks: true });
        for await (const ev of current) {
          if (ev.type !== 'BOOKMARK')
            seen.push(`${ev.type} ${ev.object.metadata?.name} ${ev.object.metadata?.resourceVersion}`);
          rv = ev.object.metadata!.resourceVersion!;
        }
      } catch (err) {
        if (stopped) break;
        if (isExpired(err)) {
          relists++;
          rv = (await client.list('Pod')).resourceVersion;
        } else {
          expect(err).toBeInstanceOf(ApiError);
          resumes++;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    }
  })();
  return {
    seen,
    get rv() {
      return rv;
    },
    get resumes() {
      return resumes;
    },
    get relists() {
      return relists;
    },
    async stop() {
      stopped = true;
      current?.stop();
      await loop;
    },
  };
}

describe('gRPC watch', () => {
  it('resumes after the connection is cut and sees every event exactly once, in order', async () => {
    t = await startTestControlPlane({ controllers: false });
    proxy = await startProxy(t.cp.port);
    const watcher = t.client({ server: `127.0.0.1:${proxy.port}` });
    const writer = t.client();
    const f = follow(watcher);
    await eventually(() => f.rv !== '', 'the initial list');

    const expected: string[] = [];
    for (let i = 0; i < 60; i++) {
      const name = `p${i % 20}`;
      let line: string;
      if (i < 20) {
        const created = await writer.create(pod(name));
        line = `ADDED ${name} ${created.metadata?.resourceVersion}`;
      } else if (i < 40) {
        const patched = await writer.patch('Pod', name, { metadata: { labels: { round: String(i) } } });
        line = `MODIFIED ${name} ${patched.metadata?.resourceVersion}`;
      } else {
        const gone = await writer.delete('Pod', name);
        line = `DELETED ${name} ${gone.object.metadata?.resourceVersion}`;
      }
      expected.push(line);
      if (i === 15 || i === 33 || i === 50) proxy.cut();
    }
    const last = expected[expected.length - 1].split(' ')[2];
    await eventually(() => f.rv === last, 'the watcher to catch up');
    await f.stop();
    expect(f.resumes).toBeGreaterThanOrEqual(1);
    expect(f.relists).toBe(0);
    expect(f.seen).toEqual(expected);
  });

  it('answers OUT_OF_RANGE for a compacted resourceVersion; the client lists again and carries on', async () => {
    t = await startTestControlPlane({ historyMs: 1, controllers: false });
    const client = t.client();
    const before = (await client.list('Pod')).resourceVersion;
    await client.create(pod('a'));
    await new Promise((r) => setTimeout(r, 5));
    await client.create(pod('b'));

    let err: unknown;
    try {
      await client.watch('Pod', { resourceVersion: before });
    } catch (e) {
      err = e;
    }
    expect(isExpired(err)).toBe(true);
    expect((err as ApiError).code).toBe(11);
    expect((err as ApiError).message).toContain('too old resource version');

    const relist = await client.list('Pod');
    expect(relist.items.map((p) => p.metadata?.name)).toEqual(['a', 'b']);
    const w = await client.watch('Pod', { resourceVersion: relist.resourceVersion });
    await client.create(pod('c'));
    const it = w[Symbol.asyncIterator]();
    expect((await it.next()).value.object.metadata.name).toBe('c');
    w.stop();
  });

  it('ends a watch whose client stopped reading once its unsent events pass the limit, and only that one', async () => {
    t = await startTestControlPlane({ controllers: false, watchBufferBytes: 1024 * 1024 });
    const PODS = 120;
    const client = t.client();
    const rv = (await client.list('Pod')).resourceVersion;
    const caFile = join(t.dataDir, 'stalled-ca.pem');
    writeFileSync(caFile, t.caPem);
    const stalled = spawn(
      process.execPath,
      ['--import', 'tsx', STALLED_WATCHER, `127.0.0.1:${t.cp.port}`, t.cp.adminToken, caFile, rv],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    stalled.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await eventually(() => out.includes('established'), 'the watch to be established');
      const healthy = await client.watch('Pod', { resourceVersion: rv });
      const healthySeen = (async () => {
        let n = 0;
        for await (const ev of healthy) if (ev.type === 'ADDED' && ++n === PODS) break;
        return n;
      })();

      // 120 pods of 200 KiB while it is stopped: 24 MiB of events, far more than its socket takes.
      const big = 'x'.repeat(200 * 1024);
      for (let i = 0; i < PODS; i++) {
        await client.create({ ...pod(`big-${i}`), metadata: { name: `big-${i}`, annotations: { big } } });
      }
      expect(await healthySeen).toBe(PODS);

      stalled.kill('SIGCONT');
      await eventually(() => out.includes('"error"'), 'the stalled watcher to read to the end');
      const seen = JSON.parse(out.split('\n')[1]) as { events: number; error: string };
      expect(seen.error).toMatch(/fell too far behind .* watch again from the last resourceVersion/);
      expect(seen.events).toBeGreaterThan(0);
      expect(seen.events).toBeLessThan(PODS);
      // The server carries on for everyone else.
      expect((await client.list('Pod')).items).toHaveLength(PODS);
    } finally {
      stalled.kill('SIGKILL');
    }
  });

  it('a watch from "now" over gRPC starts with the current state', async () => {
    t = await startTestControlPlane({ controllers: false });
    const client = t.client();
    await client.create(pod('a'));
    const w = await client.watch('Pod');
    const it = w[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.value.type).toBe('ADDED');
    expect(first.value.object.metadata.name).toBe('a');
    expect(first.value.object.spec.containers[0].command).toEqual(['sleep', '1']);
    w.stop();
  });
});
