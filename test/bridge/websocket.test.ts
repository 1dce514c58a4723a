/**
 * Browser mode end to end: a real control plane, the GUI server on loopback and a real
 * WebSocket speaking the bridge protocol, signed in as a browser would be.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindInfo } from '../../client/api/kinds.js';
import type { KubeObject, ListResult, WatchEvent } from '../../client/api/types.js';
import { watchEventsIn, type BridgeHello, type BridgeMessage } from '../../client/bridge/protocol.js';
import { ensureUiToken } from '../../main/bridge/uitoken.js';
import { TOKEN_DELETED } from '../../main/bridge/websocket.js';
import { eventually } from '../support/wait.js';
import { APP_JS, INDEX_HTML, startFixture, type Conn, type Fixture } from './support.js';

let f: Fixture;
let adminCookie: string;
let gui: Conn;

beforeAll(async () => {
  f = await startFixture();
  adminCookie = await f.login(ensureUiToken(f.tcp.cp.tokens, f.tcp.dataDir));
  gui = await f.connect({ cookie: adminCookie });
});
afterAll(() => f?.close());

const ns = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels },
});

const daemonSet = (name: string, image = 'exporter:1') => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name, namespace: 'default' },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'agent', image }] },
    },
  },
});

const eventsOf = (conn: Conn, id: number) =>
  conn.of(id).flatMap((m) => watchEventsIn(m).filter((e) => e.type !== 'BOOKMARK'));

const namesIn = (events: WatchEvent[]) => events.map((e) => `${e.type} ${e.object.metadata?.name}`);

describe('the bridge over a WebSocket', () => {
  it('says hello with the protocol version and who the page acts as', async () => {
    const hello = await gui.value<BridgeHello>({ op: 'hello' });
    expect(hello).toMatchObject({ protocol: 1, user: 'ui', server: { store: 'sqlite' } });
    expect(hello.server.listen).toBe(`127.0.0.1:${f.tcp.cp.port}`);
    expect(hello.server.dataDir).toBe(f.tcp.dataDir);
  });

  it('lists objects', async () => {
    await f.tcp.cp.client().create(ns('listed', { team: 'list' }));
    const list = await gui.value<ListResult>({
      op: 'list',
      kind: 'Namespace',
      options: { labelSelector: 'team=list' },
    });
    expect(list.items.map((o) => o.metadata?.name)).toEqual(['listed']);
    expect(Number(list.resourceVersion)).toBeGreaterThan(0);
  });

  it('multiplexes two watches on one socket, each getting its own events, and cancel stops one', async () => {
    const rv = (await gui.value<ListResult>({ op: 'list', kind: 'Namespace' })).resourceVersion;
    const watchA = gui.send({
      op: 'watch',
      kind: 'Namespace',
      options: { resourceVersion: rv, labelSelector: 'team=a' },
    });
    const watchB = gui.send({
      op: 'watch',
      kind: 'Namespace',
      options: { resourceVersion: rv, labelSelector: 'team=b' },
    });
    const admin = f.tcp.cp.client();
    await admin.create(ns('a-1', { team: 'a' }));
    await admin.create(ns('b-1', { team: 'b' }));
    await gui.next((m) => m.id === watchA && watchEventsIn(m).length > 0, 'watch A to see a-1');
    await gui.next((m) => m.id === watchB && watchEventsIn(m).length > 0, 'watch B to see b-1');
    expect(namesIn(eventsOf(gui, watchA))).toEqual(['ADDED a-1']);
    expect(namesIn(eventsOf(gui, watchB))).toEqual(['ADDED b-1']);

    const cancelled = await gui.value({ op: 'cancel', target: watchA });
    expect(cancelled).toBeNull();
    await gui.next((m) => m.id === watchA && m.op === 'end', 'watch A to end');
    expect(gui.of(watchA).find((m) => m.op === 'end')).toEqual({ id: watchA, op: 'end' });

    await admin.create(ns('a-2', { team: 'a' }));
    await admin.create(ns('b-2', { team: 'b' }));
    await gui.next(
      (m) => m.id === watchB && watchEventsIn(m).some((e) => e.object.metadata?.name === 'b-2'),
      'watch B to see b-2',
    );
    // a-2 was written before b-2: had watch A still run, its event would be here by now.
    expect(namesIn(eventsOf(gui, watchA))).toEqual(['ADDED a-1']);
    expect(namesIn(eventsOf(gui, watchB))).toEqual(['ADDED b-1', 'ADDED b-2']);
    await gui.value({ op: 'cancel', target: watchB });
  });

  it('creates, gets, patches and deletes', async () => {
    const created = await gui.value<KubeObject>({ op: 'create', object: daemonSet('crud') });
    expect(created.metadata?.uid).toBeTruthy();

    const got = await gui.value<KubeObject>({
      op: 'get',
      kind: 'DaemonSet',
      name: 'crud',
      namespace: 'default',
    });
    expect(got.metadata?.uid).toBe(created.metadata?.uid);

    const patched = await gui.value<KubeObject>({
      op: 'patch',
      kind: 'DaemonSet',
      name: 'crud',
      patch: { metadata: { labels: { tier: 'monitoring' } } },
      options: { namespace: 'default' },
    });
    expect(patched.metadata?.labels).toEqual({ tier: 'monitoring' });

    const deleted = await gui.value<KubeObject>({
      op: 'delete',
      kind: 'DaemonSet',
      name: 'crud',
      options: { namespace: 'default' },
    });
    expect(deleted.metadata?.name).toBe('crud');
    const gone = await gui.call({ op: 'get', kind: 'DaemonSet', name: 'crud', namespace: 'default' });
    expect(gone).toMatchObject({ op: 'error', error: { reason: 'NotFound' } });
  });

  it('applies a multi-document YAML: creates, then updates on a second apply', async () => {
    const manifest = (image: string) => `
apiVersion: v1
kind: Namespace
metadata:
  name: applied
  labels: { stage: one }
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: node-exporter
  namespace: applied
spec:
  selector:
    matchLabels: { app: node-exporter }
  template:
    metadata:
      labels: { app: node-exporter }
    spec:
      containers:
        - name: exporter
          image: ${image}
`;
    const first = await gui.value<KubeObject[]>({ op: 'apply', manifest: manifest('exporter:1') });
    expect(first.map((o) => `${o.kind}/${o.metadata?.name}`)).toEqual([
      'Namespace/applied',
      'DaemonSet/node-exporter',
    ]);
    const second = await gui.value<any[]>({ op: 'apply', manifest: manifest('exporter:2') });
    expect(second[1].metadata.uid).toBe(first[1].metadata?.uid);
    expect(second[1].spec.template.spec.containers[0].image).toBe('exporter:2');
    expect(Number(second[1].metadata.resourceVersion)).toBeGreaterThan(
      Number(first[1].metadata?.resourceVersion),
    );
  });

  it('returns an invalid manifest error with causes naming the fields', async () => {
    const bad = daemonSet('mismatched');
    bad.spec.template.metadata.labels = { app: 'other' };
    const created = await gui.call({ op: 'create', object: bad });
    expect(created.op).toBe('error');
    const error = (created as Extract<BridgeMessage, { op: 'error' }>).error;
    expect(error.reason).toBe('Invalid');
    expect(error.causes?.map((c) => c.field)).toContain('spec.template.metadata.labels');

    const applied = await gui.call({
      op: 'apply',
      manifest: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: Not_A_Name\n',
    });
    expect(applied).toMatchObject({ op: 'error', error: { reason: 'Invalid' } });
    const causes = (applied as Extract<BridgeMessage, { op: 'error' }>).error.causes ?? [];
    expect(causes.map((c) => c.field)).toContain('metadata.name');

    const broken = await gui.call({ op: 'apply', manifest: 'kind: [unclosed' });
    expect(broken).toMatchObject({ op: 'error', error: { reason: 'BadRequest' } });
  });

  it('answers malformed messages with BadRequest and keeps the socket usable', async () => {
    gui.sendRaw('{ not json');
    const notJson = await gui.next(
      (m) => m.op === 'error' && m.id === 0 && m.error.message.startsWith('not JSON'),
      'the answer to bad JSON',
    );
    expect(notJson).toMatchObject({ error: { reason: 'BadRequest' } });

    gui.sendRaw(Buffer.from([1, 2, 3]));
    await gui.next(
      (m) => m.op === 'error' && m.id === 0 && /binary/.test(m.error.message),
      'the answer to a binary frame',
    );

    gui.sendRaw(JSON.stringify([1, 2]));
    await gui.next(
      (m) => m.op === 'error' && m.id === 0 && /JSON object/.test(m.error.message),
      'the answer to an array',
    );

    const unknownOp = await gui.call({ op: 'explode' as 'hello' });
    expect(unknownOp).toMatchObject({ op: 'error', error: { reason: 'BadRequest' } });
    const unknownKind = await gui.call({ op: 'list', kind: 'Gadget' });
    expect(unknownKind).toMatchObject({ op: 'error', error: { reason: 'BadRequest' } });
    expect((unknownKind as any).error.message).toMatch(/^kind: "Gadget" is not a known kind/);
    const noName = await gui.call({ op: 'delete', kind: 'Namespace' });
    expect((noName as any).error.message).toBe('name: required for "delete"');

    expect(gui.ws.readyState).toBe(gui.ws.OPEN);
    expect(await gui.value<BridgeHello>({ op: 'hello' })).toMatchObject({ protocol: 1 });
  });

  it('closes the session, and its watches, when the socket closes', async () => {
    const cache = f.tcp.cp.api.cacher.cache(kindInfo('Namespace'));
    const before = cache.watcherCount;
    const conn = await f.connect({ cookie: adminCookie });
    const connections = f.ui.connections;
    const watch = conn.send({ op: 'watch', kind: 'Namespace', options: { resourceVersion: '0' } });
    await conn.next((m) => m.id === watch && watchEventsIn(m).length > 0, 'the initial events');
    expect(cache.watcherCount).toBe(before + 1);
    conn.ws.close();
    await eventually(() => f.ui.connections === connections - 1, 'the session to close');
    await eventually(() => cache.watcherCount === before, 'the watch to stop');
  });
});

describe('signing in', () => {
  it('swaps the printed token for an HttpOnly SameSite=Strict cookie and drops the token from the address', async () => {
    const token = ensureUiToken(f.tcp.cp.tokens, f.tcp.dataDir);
    const res = await f.get(`/?token=${token}`);
    expect(res.status).toBe(200);
    const cookie = res.headers['set-cookie']![0];
    expect(cookie).toMatch(new RegExp(`^kubelab_session_${f.ui.port}=[A-Za-z0-9_-]{43}; `));
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).not.toContain(token.split('.')[1]);
    expect(res.body).toContain('<meta http-equiv="refresh" content="0;url=/">');
    expect(res.body).not.toContain(token);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');

    const page = await f.get('/', { cookie: cookie.split(';')[0] });
    expect(page.status).toBe(200);
    expect(page.body).toBe(INDEX_HTML);
  });

  it('keeps the same token across restarts, and the printed URL carries it', () => {
    const token = ensureUiToken(f.tcp.cp.tokens, f.tcp.dataDir);
    expect(ensureUiToken(f.tcp.cp.tokens, f.tcp.dataDir)).toBe(token);
    expect(f.tcp.cp.tokens.authenticate(token)).toEqual({
      name: 'ui',
      role: 'admin',
      tokenId: token.slice(0, 6),
    });
    expect(f.ui.url(token)).toBe(`http://127.0.0.1:${f.ui.port}/?token=${token}`);
  });

  it('refuses HTTP without a token, or with a wrong one, with 401', async () => {
    expect((await f.get('/')).status).toBe(401);
    expect((await f.get('/assets/index-abc123.js')).status).toBe(401);
    const wrong = await f.get('/?token=abcdef.0123456789abcdef0123456789abcdef');
    expect(wrong.status).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.body).toContain('not valid');
    expect((await f.get('/', { cookie: `kubelab_session_${f.ui.port}=forged` })).status).toBe(401);
    const join = f.tcp.cp.tokens.create({ name: 'join', role: 'join' }).token;
    expect((await f.get(`/?token=${join}`)).status).toBe(403);
  });

  it('closes a WebSocket without a token, or with a wrong one, with a clear reason', async () => {
    const none = await f.connect();
    expect(await none.closed).toEqual({
      code: 4401,
      reason: 'unauthorized: sign in with the URL kubelab server --ui printed',
    });
    const forged = await f.connect({ cookie: `kubelab_session_${f.ui.port}=forged` });
    expect((await forged.closed).code).toBe(4401);
    const wrongBearer = await f.connect({ bearer: 'abcdef.0123456789abcdef0123456789abcdef', origin: null });
    expect(await wrongBearer.closed).toMatchObject({
      code: 4401,
      reason: expect.stringMatching(/^unauthorized/),
    });
    const nodeToken = f.tcp.cp.tokens.create({ name: 'system:node:pi', role: 'node', nodeName: 'pi' }).token;
    const node = await f.connect({ bearer: nodeToken, origin: null });
    expect((await node.closed).code).toBe(4403);
  });

  it('accepts a bearer token from a script (no Origin), acting as that token', async () => {
    const conn = await f.connect({ bearer: f.tcp.cp.adminToken, origin: null });
    expect(await conn.value<BridgeHello>({ op: 'hello' })).toMatchObject({ user: 'admin' });
    conn.ws.close();
  });

  it('refuses a WebSocket from another origin, and requests naming a non-loopback host', async () => {
    await expect(f.connect({ cookie: adminCookie, origin: 'http://127.0.0.1:9999' })).rejects.toThrow(/403/);
    await expect(f.connect({ cookie: adminCookie, origin: 'https://evil.example' })).rejects.toThrow(/403/);
    const rebound = await f.get('/', { cookie: adminCookie, host: `evil.example:${f.ui.port}` });
    expect(rebound.status).toBe(421);
    expect((await f.get('/', { cookie: adminCookie, host: `localhost:${f.ui.port}` })).status).toBe(200);
  });

  it('lets a viewer read but not write (Forbidden)', async () => {
    const cookie = await f.login(f.tcp.tokenFor('viewer', 'vera'));
    const viewer = await f.connect({ cookie });
    expect(await viewer.value<BridgeHello>({ op: 'hello' })).toMatchObject({ user: 'vera' });
    expect((await viewer.value<BridgeHello>({ op: 'hello' })).server.dataDir).toBeUndefined();
    const list = await viewer.value<ListResult>({ op: 'list', kind: 'Namespace' });
    expect(list.items.length).toBeGreaterThan(0);
    const created = await viewer.call({ op: 'create', object: ns('by-viewer') });
    expect(created).toMatchObject({ op: 'error', error: { reason: 'Forbidden' } });
    expect((created as any).error.message).toContain('viewer role may only get, list and watch');
    const applied = await viewer.call({ op: 'apply', manifest: JSON.stringify(ns('by-viewer')) });
    expect(applied).toMatchObject({ op: 'error', error: { reason: 'Forbidden' } });
    viewer.ws.close();
  });

  it('ends a session when its token is deleted', async () => {
    const { token, record } = f.tcp.cp.tokens.create({ name: 'temp', role: 'viewer' });
    const cookie = await f.login(token);
    expect((await f.get('/', { cookie })).status).toBe(200);
    f.tcp.cp.tokens.delete(record.id);
    expect((await f.get('/', { cookie })).status).toBe(401);
    expect((await (await f.connect({ cookie })).closed).code).toBe(4401);
  });

  it('closes the open pages signed in with a token as soon as it is deleted in Settings', async () => {
    const { token, record } = f.tcp.cp.tokens.create({ name: 'housemate', role: 'viewer' });
    const page = await f.connect({ cookie: await f.login(token) });
    const script = await f.connect({ bearer: token, origin: null });
    // The page is watching when its token goes.
    const watch = page.send({ op: 'watch', kind: 'Namespace' });
    await page.next((m) => m.id === watch && watchEventsIn(m).length > 0, 'the watch to start');

    expect(await gui.value({ op: 'deleteToken', tokenId: record.id })).toBeNull();

    for (const conn of [page, script]) {
      const closed = await Promise.race([
        conn.closed,
        new Promise((resolve) => setTimeout(() => resolve('still open 10 s after the deletion'), 10_000)),
      ]);
      expect(closed).toEqual({ code: 4401, reason: TOKEN_DELETED });
    }
    // The admin's page, signed in with another token, stays open and served.
    expect(await gui.value<BridgeHello>({ op: 'hello' })).toMatchObject({ user: 'ui' });
  });
});

describe('the GUI files', () => {
  it('serves the built renderer with its content types', async () => {
    const index = await f.get('/', { cookie: adminCookie });
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.headers['x-frame-options']).toBe('DENY');
    const js = await f.get('/assets/index-abc123.js', { cookie: adminCookie });
    expect(js).toMatchObject({ status: 200, body: APP_JS });
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toContain('immutable');
    expect(js.headers['x-content-type-options']).toBe('nosniff');
    const css = await f.get('/assets/index-abc123.css', { cookie: adminCookie });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const svg = await f.get('/logo.svg', { cookie: adminCookie });
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    // The GUI's own routes are index.html; a missing file is not.
    expect((await f.get('/nodes/pi-1', { cookie: adminCookie })).body).toBe(INDEX_HTML);
    expect((await f.get('/assets/missing.js', { cookie: adminCookie })).status).toBe(404);
  });

  it('refuses .. traversal, however it is spelled, and symlinks out of the folder', async () => {
    for (const path of [
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/..%5csecret.txt',
      '/%2E%2E%2Fsecret.txt',
      '/assets/%00',
      '/%',
    ]) {
      const res = await f.get(path, { cookie: adminCookie });
      expect(res.status, path).toBe(403);
      expect(res.body, path).not.toContain('secret beside');
    }
    const link = await f.get('/link.txt', { cookie: adminCookie });
    expect(link.status).toBe(404);
    expect(link.body).not.toContain('secret beside');
  });

  it('answers only GET and HEAD', async () => {
    const head = await new Promise<number>((resolve, reject) => {
      import('node:http').then(({ request }) => {
        const req = request(
          { host: '127.0.0.1', port: f.ui.port, path: '/', method: 'POST', headers: { cookie: adminCookie } },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.on('error', reject);
        req.end();
      }, reject);
    });
    expect(head).toBe(405);
  });
});
