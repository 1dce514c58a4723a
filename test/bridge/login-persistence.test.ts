/**
 * Browser sign-in that outlives the server: the session cookie is signed with a key kept in the
 * data folder, so a restarted server (same folder, same port) lets the page back in without
 * the login link — and still refuses what it should: forged or altered cookies, expired ones,
 * another server's, and those of a deleted token.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Identity } from '../../client/api/local.js';
import { FakeClock } from '../../client/util/clock.js';
import { LoginSessions, SESSION_TTL_MS, type LoginTokens } from '../../main/bridge/login.js';
import { ensureLoginKey, loginKeyPath } from '../../main/bridge/loginkey.js';
import { ensureUiToken } from '../../main/bridge/uitoken.js';
import { startUiServer, type UiServer } from '../../main/bridge/websocket.js';
import type { TokenRecord } from '../../main/grpc/tokens.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

/** A token store with a few records; `authenticate` knows `<id>.secret` for each. */
function fakeTokens(records: TokenRecord[]): LoginTokens & { records: TokenRecord[] } {
  return {
    records,
    authenticate(token: string): Identity | undefined {
      const r = records.find((x) => token === `${x.id}.secret`);
      return r && { name: r.name, role: r.role };
    },
    get: (id: string) => records.find((r) => r.id === id),
  };
}

const record = (id: string, role: TokenRecord['role'] = 'admin', hash = 'a'.repeat(64)): TokenRecord => ({
  id,
  hash,
  name: `user-${id}`,
  role,
  createdAt: '2026-01-01T00:00:00Z',
});

const KEY = Buffer.alloc(32, 7);

function sessions(tokens: LoginTokens, clock: FakeClock, key = KEY): LoginSessions {
  return new LoginSessions({
    tokens,
    key,
    nameOfCookie: () => 'kubelab_session_6080',
    now: () => clock.now(),
  });
}

/** Signs in and returns the `Cookie` header a browser would send back. */
function signIn(s: LoginSessions, token: string): string {
  const result = s.login(token);
  if (!result.ok) throw new Error(result.message);
  return s.cookie(result.sessionId).split(';')[0];
}

describe('LoginSessions', () => {
  it('accepts its cookie in a new instance with the same key, as after a restart', () => {
    const tokens = fakeTokens([record('abc123')]);
    const clock = new FakeClock();
    const cookie = signIn(sessions(tokens, clock), 'abc123.secret');
    expect(cookie).toMatch(/^kubelab_session_6080=[A-Za-z0-9_-]{43}$/);
    expect(sessions(tokens, clock).identityFromCookie(cookie)).toEqual({
      name: 'user-abc123',
      role: 'admin',
      tokenId: 'abc123',
    });
    expect(sessions(tokens, clock, Buffer.alloc(32, 8)).identityFromCookie(cookie)).toBeUndefined();
  });

  it('refuses an altered cookie, whichever byte changed', () => {
    const tokens = fakeTokens([record('abc123'), record('xyz789')]);
    const s = sessions(tokens, new FakeClock());
    const cookie = signIn(s, 'abc123.secret');
    const value = Buffer.from(cookie.split('=')[1], 'base64url');
    for (let i = 0; i < value.length; i++) {
      const altered = Buffer.from(value);
      altered[i] ^= 1;
      expect(s.identityFromCookie(`kubelab_session_6080=${altered.toString('base64url')}`), `byte ${i}`).toBe(
        undefined,
      );
    }
    // Another token's id in an otherwise valid cookie.
    const swapped = Buffer.from(value);
    swapped.write('xyz789', 0, 'latin1');
    expect(s.identityFromCookie(`kubelab_session_6080=${swapped.toString('base64url')}`)).toBeUndefined();
    expect(s.identityFromCookie(`kubelab_session_6080=${value.toString('base64url')}x`)).toBeUndefined();
    expect(s.identityFromCookie('kubelab_session_6081=' + value.toString('base64url'))).toBeUndefined();
  });

  it('expires after its lifetime unless renewed; renewal starts past half of it', () => {
    const tokens = fakeTokens([record('abc123')]);
    const clock = new FakeClock();
    const s = sessions(tokens, clock);
    const cookie = signIn(s, 'abc123.secret');
    expect(s.renewal(cookie)).toBeUndefined();
    clock.advance(SESSION_TTL_MS / 2 + 1000);
    const renewed = s.renewal(cookie);
    expect(renewed).toMatch(/^kubelab_session_6080=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    clock.advance(SESSION_TTL_MS / 2);
    expect(s.identityFromCookie(cookie)).toBeUndefined();
    expect(s.renewal(cookie)).toBeUndefined();
    expect(s.identityFromCookie(renewed!.split(';')[0])).toEqual({
      name: 'user-abc123',
      role: 'admin',
      tokenId: 'abc123',
    });
  });

  it('ends with its token: deleted, re-created under the same id, expired, or not a person’s', () => {
    const tokens = fakeTokens([record('abc123'), record('exp001'), record('node01', 'node')]);
    const clock = new FakeClock();
    const s = sessions(tokens, clock);
    const cookie = signIn(s, 'abc123.secret');
    tokens.records[0] = record('abc123', 'admin', 'b'.repeat(64));
    expect(s.identityFromCookie(cookie)).toBeUndefined();
    tokens.records.splice(0, 1);
    expect(s.identityFromCookie(cookie)).toBeUndefined();

    tokens.records[0].expiresAt = new Date(clock.now() + 60_000).toISOString();
    const short = signIn(s, 'exp001.secret');
    expect(s.identityFromCookie(short)).toMatchObject({ name: 'user-exp001' });
    clock.advance(60_000);
    expect(s.identityFromCookie(short)).toBeUndefined();

    expect(s.login('node01.secret')).toMatchObject({ ok: false, status: 403 });
    expect(s.login('nobody.secret')).toMatchObject({ ok: false, status: 401 });
  });
});

describe('the signing key', () => {
  it('is made once, 0600, and kept; a damaged file is replaced', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubelab-loginkey-'));
    try {
      const key = ensureLoginKey(dir);
      expect(key).toHaveLength(32);
      expect(statSync(loginKeyPath(dir)).mode & 0o777).toBe(0o600);
      expect(ensureLoginKey(dir).equals(key)).toBe(true);
      writeFileSync(loginKeyPath(dir), 'not a key\n');
      const fresh = ensureLoginKey(dir);
      expect(fresh.equals(key)).toBe(false);
      expect(readFileSync(loginKeyPath(dir), 'utf8').trim()).toBe(fresh.toString('base64url'));
      expect(statSync(loginKeyPath(dir)).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a restarted server', () => {
  let dataDir: string;
  let rendererDir: string;
  let t: TestControlPlane | undefined;
  let ui: UiServer | undefined;

  const start = async (dir: string, port = 0) => {
    t = await startTestControlPlane({ dataDir: dir, plaintext: true, controllers: false });
    ui = await startUiServer({ controlPlane: t.cp, listen: `127.0.0.1:${port}`, rendererDir });
    return { t, ui };
  };
  const stop = async () => {
    await ui?.close();
    await t?.close();
    ui = undefined;
    t = undefined;
  };
  const hello = (port: number, cookie: string) =>
    new Promise<{ code?: number; message?: any }>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/bridge`, {
        headers: { cookie },
        origin: `http://127.0.0.1:${port}`,
      });
      ws.once('open', () => ws.send(JSON.stringify({ id: 1, op: 'hello' })));
      ws.once('message', (data) => {
        resolve({ message: JSON.parse(data.toString()) });
        ws.close();
      });
      ws.once('close', (code) => resolve({ code }));
      ws.once('error', reject);
    });

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'kubelab-restart-'));
    rendererDir = join(dataDir, 'renderer');
    mkdirSync(rendererDir);
    writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>test</title>\n');
  });
  afterAll(async () => {
    await stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('accepts the cookie it issued before the restart, for pages and the WebSocket', async () => {
    const first = await start(join(dataDir, 'cluster'));
    const port = first.ui.port;
    const login = await fetch(first.ui.url(ensureUiToken(first.t.cp.tokens, first.t.dataDir)));
    const cookie = login.headers.getSetCookie()[0].split(';')[0];
    expect((await hello(port, cookie)).message).toMatchObject({ id: 1, op: 'result', value: { user: 'ui' } });
    await stop();

    const second = await start(join(dataDir, 'cluster'), port);
    expect((await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie } })).status).toBe(200);
    expect((await hello(port, cookie)).message).toMatchObject({ id: 1, op: 'result', value: { user: 'ui' } });

    // Deleting the GUI's token still signs the browser out.
    const ui = second.t.cp.tokens.list().find((r) => r.name === 'ui')!;
    second.t.cp.tokens.delete(ui.id);
    expect((await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie } })).status).toBe(401);
    expect(await hello(port, cookie)).toEqual({ code: 4401 });
    await stop();
  });

  it('renews a sign-in past half its life, on a page load and on a WebSocket upgrade', async () => {
    const clock = new FakeClock(Date.now());
    t = await startTestControlPlane({
      dataDir: join(dataDir, 'renew'),
      plaintext: true,
      controllers: false,
      clock,
    });
    ui = await startUiServer({ controlPlane: t.cp, listen: '127.0.0.1:0', rendererDir });
    const port = ui.port;
    const login = await fetch(ui.url(ensureUiToken(t.cp.tokens, t.dataDir)));
    const cookie = login.headers.getSetCookie()[0].split(';')[0];
    const upgradeCookies = () =>
      new Promise<string[]>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/bridge`, {
          headers: { cookie },
          origin: `http://127.0.0.1:${port}`,
        });
        ws.once('upgrade', (res) => resolve(res.headers['set-cookie'] ?? []));
        ws.once('open', () => ws.close());
        ws.once('error', reject);
      });
    expect(
      (await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie } })).headers.getSetCookie(),
    ).toEqual([]);
    expect(await upgradeCookies()).toEqual([]);

    clock.advance(SESSION_TTL_MS / 2 + 60_000);
    const page = await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const renewed = page.headers.getSetCookie()[0].split(';')[0];
    expect(renewed).toMatch(new RegExp(`^kubelab_session_${port}=`));
    expect(renewed).not.toBe(cookie);
    expect(await upgradeCookies()).toEqual([
      expect.stringMatching(new RegExp(`^kubelab_session_${port}=.+; HttpOnly`)),
    ]);

    clock.advance(SESSION_TTL_MS / 2);
    expect((await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie } })).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie: renewed } })).status).toBe(200);
    await stop();
  });

  it('refuses a cookie another data folder signed, even on the same port', async () => {
    const first = await start(join(dataDir, 'one'));
    const port = first.ui.port;
    const login = await fetch(first.ui.url(ensureUiToken(first.t.cp.tokens, first.t.dataDir)));
    const cookie = login.headers.getSetCookie()[0].split(';')[0];
    await stop();

    await start(join(dataDir, 'two'), port);
    expect((await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie } })).status).toBe(401);
    expect(await hello(port, cookie)).toEqual({ code: 4401 });
    await stop();
  });
});
