/**
 * Browser mode under test: a real control plane, the GUI server on loopback serving a small
 * stand-in for the built renderer, and a WebSocket client that speaks the bridge protocol.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import type { BridgeMessage, BridgeRequest } from '../../client/bridge/protocol.js';
import { startUiServer, type UiServer, type UiServerOptions } from '../../main/bridge/websocket.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

export const INDEX_HTML = '<!doctype html><title>kubelab test GUI</title><div id="app"></div>\n';
export const APP_JS = 'export const gui = true;\n';
export const SECRET = 'the secret beside the renderer folder\n';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface Fixture {
  tcp: TestControlPlane;
  ui: UiServer;
  /** The folder holding renderer/ and, beside it, secret.txt. */
  dir: string;
  /** A raw GET: the path is sent exactly as given (no URL normalisation). */
  get(path: string, headers?: Record<string, string>): Promise<HttpAnswer>;
  /** Signs in with a token as a browser would; returns the `Cookie` header to send. */
  login(token: string): Promise<string>;
  /** Opens the bridge WebSocket (a browser's Origin unless `origin: null`). */
  connect(options?: { cookie?: string; bearer?: string; origin?: string | null }): Promise<Conn>;
  close(): Promise<void>;
}

export async function startFixture(options: Partial<UiServerOptions> = {}): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-ui-'));
  const rendererDir = join(dir, 'renderer');
  mkdirSync(join(rendererDir, 'assets'), { recursive: true });
  writeFileSync(join(rendererDir, 'index.html'), INDEX_HTML);
  writeFileSync(join(rendererDir, 'assets', 'index-abc123.js'), APP_JS);
  writeFileSync(join(rendererDir, 'assets', 'index-abc123.css'), 'body { margin: 0 }\n');
  writeFileSync(join(rendererDir, 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>\n');
  writeFileSync(join(dir, 'secret.txt'), SECRET);
  symlinkSync(join(dir, 'secret.txt'), join(rendererDir, 'link.txt'));

  const tcp = await startTestControlPlane({ plaintext: true, controllers: false });
  const ui = await startUiServer({ controlPlane: tcp.cp, listen: '127.0.0.1:0', rendererDir, ...options });
  const conns: Conn[] = [];

  const get = (path: string, headers: Record<string, string> = {}) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: ui.port, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      });
      req.on('error', reject);
      req.end();
    });

  return {
    tcp,
    ui,
    dir,
    get,
    async login(token) {
      const res = await get(`/?token=${encodeURIComponent(token)}`);
      if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.body}`);
      const setCookie = res.headers['set-cookie']![0];
      return setCookie.split(';')[0];
    },
    async connect({ cookie, bearer, origin } = {}) {
      const headers: Record<string, string> = {};
      if (cookie) headers.cookie = cookie;
      if (bearer) headers.authorization = `Bearer ${bearer}`;
      const conn = new Conn(
        new WebSocket(`ws://127.0.0.1:${ui.port}/bridge`, {
          headers,
          ...(origin === null ? {} : { origin: origin ?? `http://127.0.0.1:${ui.port}` }),
        }),
      );
      conns.push(conn);
      await conn.opened;
      return conn;
    },
    async close() {
      for (const c of conns) c.ws.terminate();
      await ui.close();
      await tcp.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One bridge connection: every message it received, and helpers to wait for them. */
export class Conn {
  readonly messages: BridgeMessage[] = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<{ code: number; reason: string }>;
  private nextId = 1;
  private waiters: Array<() => void> = [];

  constructor(readonly ws: WebSocket) {
    this.opened = new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    ws.on('message', (data) => {
      this.messages.push(JSON.parse(data.toString()) as BridgeMessage);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** Sends a request with a fresh id; returns the id. */
  send(req: Record<string, unknown> & { op: BridgeRequest['op'] }): number {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ ...req, id }));
    return id;
  }

  sendRaw(data: string | Buffer): void {
    this.ws.send(data);
  }

  /** Resolves with the first message (received so far or later) that `match` accepts. */
  async next(match: (m: BridgeMessage) => boolean, what = 'a message', ms = 10_000): Promise<BridgeMessage> {
    const deadline = Date.now() + ms;
    let seen = 0;
    for (;;) {
      for (; seen < this.messages.length; seen++) if (match(this.messages[seen])) return this.messages[seen];
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends a one-shot request and resolves with its result or error message. */
  async call(req: Record<string, unknown> & { op: BridgeRequest['op'] }): Promise<BridgeMessage> {
    const id = this.send(req);
    return this.next(
      (m) => m.id === id && (m.op === 'result' || m.op === 'error'),
      `the answer to ${req.op}`,
    );
  }

  /** Like call, but the result's value (an error fails the test). */
  async value<T = any>(req: Record<string, unknown> & { op: BridgeRequest['op'] }): Promise<T> {
    const m = await this.call(req);
    if (m.op !== 'result') throw new Error(`${req.op} failed: ${JSON.stringify(m)}`);
    return m.value as T;
  }

  /** The messages of one stream so far. */
  of(id: number): BridgeMessage[] {
    return this.messages.filter((m) => m.id === id);
  }
}
