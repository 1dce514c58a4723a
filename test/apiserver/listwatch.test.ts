import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Namespace, Pod, WatchEvent } from '../../client/api/types.js';
import type { Watch } from '../../client/client.js';
import { clone } from '../../client/util/objects.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';
import { forgedContinue } from '../support/forgedcontinue.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer({ historyMs: 60_000, bookmarkMs: 10_000 });
});
afterEach(async () => t.close());

const pod = (name: string, labels: Record<string, string> = {}, nodeName?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'c', command: ['sleep', '1'] }], ...(nodeName ? { nodeName } : {}) },
});

/** Takes the next `n` events from a watch (they arrive synchronously in-process). */
async function take<T>(w: Watch<T>, n: number): Promise<WatchEvent<T>[]> {
  const out: WatchEvent<T>[] = [];
  const it = w[Symbol.asyncIterator]();
  while (out.length < n) {
    const r = await Promise.race([
      it.next(),
      new Promise<never>((_, rej) =>
        setTimeout(() => rej(new Error(`only ${out.length} of ${n} events`)), 2000),
      ),
    ]);
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

const summary = (events: WatchEvent<Pod>[]) =>
  events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`);

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected the request to fail');
}

describe('list', () => {
  it('filters by equality- and set-based label selectors', async () => {
    await t.admin.create(pod('a', { app: 'web', env: 'prod' }));
    await t.admin.create(pod('b', { app: 'web', env: 'staging' }));
    await t.admin.create(pod('c', { app: 'db', env: 'prod', canary: 'true' }));
    const names = async (sel: string) =>
      (await t.admin.list('Pod', { labelSelector: sel })).items.map((p) => p.metadata?.name);
    expect(await names('app=web')).toEqual(['a', 'b']);
    expect(await names('app!=web')).toEqual(['c']);
    expect(await names('env in (prod),app notin (db)')).toEqual(['a']);
    expect(await names('canary')).toEqual(['c']);
    expect(await names('!canary,env=prod')).toEqual(['a']);
    expect((await rejection(t.admin.list('Pod', { labelSelector: 'app in (web' }))).reason).toBe(
      'BadRequest',
    );
  });

  it('filters by the supported field selectors and rejects others', async () => {
    await t.admin.create(pod('a', {}, 'pi-1'));
    await t.admin.create(pod('b', {}, 'pi-2'));
    await t.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } });
    await t.admin.create(pod('c', {}, 'pi-1'), { namespace: 'lab' });
    const names = async (sel: string) =>
      (await t.admin.list('Pod', { fieldSelector: sel })).items.map(
        (p) => `${p.metadata?.namespace}/${p.metadata?.name}`,
      );
    expect(await names('spec.nodeName=pi-1')).toEqual(['default/a', 'lab/c']);
    expect(await names('spec.nodeName=pi-1,metadata.namespace=lab')).toEqual(['lab/c']);
    expect(await names('metadata.name=b')).toEqual(['default/b']);
    expect(await names('status.phase=Pending,metadata.name!=a')).toEqual(['default/b', 'lab/c']);
    const bad = await rejection(t.admin.list('Pod', { fieldSelector: 'spec.hostname=x' }));
    expect(bad.reason).toBe('BadRequest');
    expect(bad.message).toContain('supported fields: metadata.name, metadata.namespace, spec.nodeName');
  });

  it('lists one namespace exactly, whatever its neighbours are called', async () => {
    for (const ns of ['lab', 'lab2', 'lab-x', 'la']) {
      await t.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await t.admin.create(pod(`in-${ns}`), { namespace: ns });
    }
    expect((await t.admin.list('Pod', { namespace: 'lab' })).items.map((p) => p.metadata?.name)).toEqual([
      'in-lab',
    ]);
    expect(
      (await t.admin.list('Pod', { namespace: 'la', resourceVersion: '0' })).items.map(
        (p) => p.metadata?.name,
      ),
    ).toEqual(['in-la']);
    expect((await t.admin.list('Pod', { namespace: 'lab', limit: 1 })).continue).toBeUndefined();
  });

  it('pages with limit/continue over one revision', async () => {
    for (let i = 0; i < 7; i++) await t.admin.create(pod(`p${i}`, { n: String(i) }));
    const page1 = await t.admin.list('Pod', { limit: 3 });
    expect(page1.items.map((p) => p.metadata?.name)).toEqual(['p0', 'p1', 'p2']);
    expect(page1.remainingItemCount).toBe(4);
    expect(page1.continue).toBeTruthy();

    // Changes after the first page do not show in later pages: they share its revision.
    await t.admin.patch('Pod', 'p4', { metadata: { labels: { n: 'changed' } } });
    await t.admin.delete('Pod', 'p5');
    await t.admin.create(pod('p9'));
    const page2 = await t.admin.list('Pod', { limit: 3, continue: page1.continue });
    expect(page2.resourceVersion).toBe(page1.resourceVersion);
    expect(page2.items.map((p) => [p.metadata?.name, p.metadata?.labels?.n])).toEqual([
      ['p3', '3'],
      ['p4', '4'],
      ['p5', '5'],
    ]);
    const page3 = await t.admin.list('Pod', { limit: 3, continue: page2.continue });
    expect(page3.items.map((p) => p.metadata?.name)).toEqual(['p6']);
    expect(page3.continue).toBeUndefined();

    expect((await rejection(t.admin.list('Pod', { continue: 'garbage' }))).reason).toBe('BadRequest');
    await t.storage.compact(await t.storage.currentRevision());
    const expired = await rejection(t.admin.list('Pod', { limit: 3, continue: page1.continue }));
    expect(expired.reason).toBe('Expired');
    expect(expired.code).toBe(11);
  });

  it('serves a consistent list that includes the caller’s own writes', async () => {
    const created = await t.admin.create(pod('mine'));
    const list = await t.admin.list('Pod');
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['mine']);
    expect(Number(list.resourceVersion)).toBeGreaterThanOrEqual(Number(created.metadata?.resourceVersion));
  });

  it('lists exactly at an older revision on request', async () => {
    await t.admin.create(pod('a'));
    const rv = (await t.admin.list('Pod')).resourceVersion;
    await t.admin.create(pod('b'));
    const then = await t.admin.list('Pod', { resourceVersion: rv, resourceVersionMatch: 'Exact' });
    expect(then.items.map((p) => p.metadata?.name)).toEqual(['a']);
  });

  it('refuses a forged continue token as invalid, never as unavailable (which clients retry forever)', async () => {
    for (let i = 0; i < 3; i++) await t.admin.create(pod(`p${i}`));
    const real = (await t.admin.list('Pod', { limit: 1 })).continue!;
    const future = (await t.storage.currentRevision()) + 1000;
    for (const rv of [future, 0, -1, 1.5, '3', null]) {
      const err = await rejection(t.admin.list('Pod', { limit: 1, continue: forgedContinue(real, { rv }) }));
      expect([err.reason, err.code, err.message], `rv ${String(rv)}`).toEqual([
        'BadRequest',
        3,
        'the continue token is invalid; list again without it',
      ]);
    }
    for (const garbage of ['bnVsbA', Buffer.from('[1,2]').toString('base64url')]) {
      expect((await rejection(t.admin.list('Pod', { continue: garbage }))).code, garbage).toBe(3);
    }
  });

  it('answers an Exact list at a future resourceVersion "too large resource version", as the client’s error', async () => {
    await t.admin.create(pod('a'));
    const current = await t.storage.currentRevision();
    const future = String(current + 1000);
    const err = await rejection(
      t.admin.list('Pod', { resourceVersion: future, resourceVersionMatch: 'Exact' }),
    );
    expect([err.reason, err.code]).toEqual(['BadRequest', 3]);
    expect(err.message).toContain(`too large resource version: ${future}, current: ${current}`);
  });
});

describe('watch', () => {
  it('from a resourceVersion delivers every later event, in order, and nothing before', async () => {
    const a = await t.admin.create(pod('a'));
    await t.admin.create(pod('b'));
    await t.admin.patch('Pod', 'a', { metadata: { labels: { x: '1' } } });
    await t.admin.delete('Pod', 'b');
    const w = await t.admin.watch('Pod', { resourceVersion: a.metadata!.resourceVersion });
    await t.admin.create(pod('c'));
    expect(summary(await take(w, 4))).toEqual(['ADDED b', 'MODIFIED a', 'DELETED b', 'ADDED c']);
    w.stop();
  });

  it('from "now" starts with the current state as ADDED events', async () => {
    await t.admin.create(pod('a'));
    await t.admin.create(pod('b'));
    const w = await t.admin.watch('Pod');
    await t.admin.delete('Pod', 'a');
    expect(summary(await take(w, 3))).toEqual(['ADDED a', 'ADDED b', 'DELETED a']);
    w.stop();
  });

  it('shows objects entering and leaving a selection as ADDED and DELETED', async () => {
    await t.admin.create(pod('a', { tier: 'web' }));
    const w = await t.admin.watch('Pod', {
      labelSelector: 'tier=web',
      resourceVersion: (await t.admin.list('Pod')).resourceVersion,
    });
    await t.admin.patch('Pod', 'a', { metadata: { labels: { tier: 'db' } } });
    await t.admin.create(pod('b', { tier: 'db' }));
    await t.admin.patch('Pod', 'b', { metadata: { labels: { tier: 'web' } } });
    await t.admin.patch('Pod', 'b', { metadata: { labels: { tier: 'web', v: '2' } } });
    const events = await take(w, 3);
    expect(summary(events)).toEqual(['DELETED a', 'ADDED b', 'MODIFIED b']);
    w.stop();
  });

  it('sends periodic BOOKMARKs carrying the latest resourceVersion', async () => {
    const w = await t.admin.watch('Pod', {
      resourceVersion: (await t.admin.list('Pod')).resourceVersion,
      allowWatchBookmarks: true,
    });
    const ns = await t.admin.create<Namespace>({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'other' },
    });
    t.clock.advance(10_000);
    const [bookmark] = await take(w, 1);
    expect(bookmark.type).toBe('BOOKMARK');
    expect(bookmark.object.metadata?.resourceVersion).toBe(ns.metadata?.resourceVersion);
    w.stop();
  });

  it('sends initial events, then a bookmark marking their end, when asked', async () => {
    await t.admin.create(pod('a'));
    const w = await t.admin.watch('Pod', { sendInitialEvents: true, allowWatchBookmarks: true });
    const events = await take(w, 2);
    expect(events[0].type).toBe('ADDED');
    expect(events[1].type).toBe('BOOKMARK');
    expect(events[1].object.metadata?.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    w.stop();
  });

  it('refuses a resourceVersion older than the history it keeps: Expired, list again', async () => {
    const before = (await t.admin.list('Pod')).resourceVersion;
    await t.admin.create(pod('a'));
    t.clock.advance(120_000);
    await t.admin.create(pod('b'));
    // The event that created "a" has left the 60 s window: a watch from before it cannot be served.
    const err = await rejection(t.admin.watch('Pod', { resourceVersion: before }));
    expect(err.reason).toBe('Expired');
    expect(err.code).toBe(11);
    expect(err.message).toContain('list again');
    const relist = await t.admin.list('Pod');
    const w = await t.admin.watch('Pod', { resourceVersion: relist.resourceVersion });
    await t.admin.create(pod('c'));
    expect(summary(await take(w, 1))).toEqual(['ADDED c']);
    w.stop();
  });

  it('ends after timeoutSeconds', async () => {
    const w = await t.admin.watch('Pod', {
      resourceVersion: (await t.admin.list('Pod')).resourceVersion,
      timeoutSeconds: 30,
    });
    t.clock.advance(30_000);
    const it = w[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(true);
  });

  it('sends a BOOKMARK at the latest resourceVersion as a watch times out, so it resumes from there', async () => {
    // Periodic bookmarks an hour apart: the one seen here is the timeout's.
    const quiet = await startTestApiServer({ historyMs: 60_000, bookmarkMs: 3_600_000 });
    try {
      const from = (await quiet.admin.list('Pod')).resourceVersion;
      const mine = await quiet.admin.watch('Pod', {
        resourceVersion: from,
        fieldSelector: 'spec.nodeName=node-a',
        allowWatchBookmarks: true,
        timeoutSeconds: 30,
      });
      const without = await quiet.admin.watch('Pod', { resourceVersion: from, timeoutSeconds: 30 });
      await quiet.admin.create(pod('a', {}, 'node-a'));
      const last = await quiet.admin.create(pod('b', {}, 'node-b'));
      quiet.clock.advance(30_000);
      const events = await take(mine, 3);
      expect(events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
      expect(events[1].object.metadata?.resourceVersion).toBe(last.metadata?.resourceVersion);
      // A watch that did not ask for bookmarks gets none, and ends the same.
      expect(summary(await take(without, 3))).toEqual(['ADDED a', 'ADDED b']);
    } finally {
      await quiet.close();
    }
  });

  it('delivers the last state of a deleted object at the delete’s resourceVersion', async () => {
    const p = await t.admin.create(pod('a', { keep: 'me' }));
    const w = await t.admin.watch('Pod', { resourceVersion: p.metadata!.resourceVersion });
    const gone = await t.admin.delete('Pod', 'a');
    const [ev] = await take(w, 1);
    expect(ev.type).toBe('DELETED');
    expect(ev.object.metadata?.labels).toEqual({ keep: 'me' });
    expect(ev.object.metadata?.resourceVersion).toBe(gone.object.metadata?.resourceVersion);
    w.stop();
  });

  it('gives frozen objects: a consumer that wants to change one must copy it', async () => {
    await t.admin.create(pod('a'));
    const [p] = (await t.admin.list('Pod', { resourceVersion: '0' })).items;
    expect(Object.isFrozen(p.metadata)).toBe(true);
    const copy = clone(p);
    copy.metadata!.labels = { mine: 'yes' };
    expect(copy.metadata?.labels).toEqual({ mine: 'yes' });
  });
});
