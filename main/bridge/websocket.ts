/**
 * Browser mode (`kubelab server --ui`): a small HTTP server on a loopback address that serves
 * the built GUI (out/renderer) and carries the bridge (client/bridge/protocol.ts) over a
 * WebSocket at /bridge, one BridgeSession per connection acting as the signed-in identity.
 *
 * Authentication (see login.ts): the printed URL carries a token once; the server swaps it for
 * an HttpOnly, SameSite=Strict session cookie and a page that drops the token from the address
 * bar. The cookie is signed with a key kept in the data folder, so it outlives a restart: the
 * page's WebSocket reconnects signed in. Static files and the WebSocket need that cookie
 * (scripts may instead send `Authorization: Bearer <token>` on the upgrade, which no web page
 * can set). Requests must name a loopback host (no DNS rebinding) and a WebSocket's Origin
 * must be this server's own (no other local page may open one with the user's cookie).
 */
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { Identity } from '../../client/api/local.js';
import type { BridgeMessage } from '../../client/bridge/protocol.js';
import { realClock } from '../../client/util/clock.js';
import type { ControlPlane } from '../controlplane.js';
import { isLoopback, MAX_REQUEST_BYTES, splitHostPort } from '../grpc/server.js';
import type { Logger } from '../logging.js';
import { guiSession, type BridgeEndpoint } from './guisession.js';
import { LoginSessions } from './login.js';
import { ensureLoginKey } from './loginkey.js';
import { parseBridgeMessage, toBridgeError, type UnreadableMessage } from './session.js';
import { sessionFor } from './sessionfor.js';
import { serveStatic } from './static.js';

export const DEFAULT_UI_LISTEN = '127.0.0.1:6080';
export const BRIDGE_PATH = '/bridge';
/** Stream bytes a connection may leave unsent before its streams are ended. */
export const DEFAULT_MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** WebSocket close codes (4000–4999 are the application's): the HTTP status plus 4000. */
export const CLOSE_UNAUTHORIZED = 4401;
export const CLOSE_FORBIDDEN = 4403;
/** Why an open page is signed out (a close reason holds at most 123 bytes). */
export const TOKEN_DELETED =
  'unauthorized: the token this page signed in with was deleted; sign in with a current token';

/** Where electron-vite puts the built renderer (electron.vite.config.ts). */
export function defaultRendererDir(): string {
  return resolve(import.meta.dirname, '..', '..', 'out', 'renderer');
}

export interface UiServerOptions {
  controlPlane: ControlPlane;
  /** host:port on a loopback address (default 127.0.0.1:6080; port 0 picks a free one). */
  listen?: string;
  /** The built GUI (default out/renderer). */
  rendererDir?: string;
  /** Per connection: stream bytes not yet written out before its streams are ended (default 4 MiB). */
  maxBufferedBytes?: number;
  /** How often idle connections are pinged; one that misses a pong is dropped (default 30 s). */
  heartbeatMs?: number;
  logger?: Logger;
}

export interface UiServer {
  readonly host: string;
  readonly port: number;
  /** Open bridge connections (each has one BridgeSession). */
  readonly connections: number;
  /** The address to open in a browser, signed in with `token`. */
  url(token: string): string;
  close(): Promise<void>;
}

/** What a bridge sender needs of a socket (ws's WebSocket has it). */
export interface MessageSocket {
  readonly readyState: number;
  /** Bytes given to `send` and not yet handed to the operating system. */
  readonly bufferedAmount: number;
  send(data: string, cb?: (err?: Error) => void): void;
}

/**
 * Sends bridge messages as JSON text frames, and watches how far the reader is behind: when a
 * stream message (watch event, log data) finds more than `maxBufferedBytes` of stream data
 * waiting in the socket, `onBehind` is called (the caller ends the connection's streams)
 * instead of buffering without end. One-shot replies waiting to go out are not counted: a
 * large list the GUI asked for is no reason to end its watches, and the GUI asks for those
 * one at a time. (They are subtracted once written out, so the estimate can only err low.)
 */
export function bridgeSender(
  socket: MessageSocket,
  maxBufferedBytes: number,
  onBehind: (bufferedBytes: number) => void,
): (message: BridgeMessage) => void {
  let repliesUnsent = 0;
  return (message) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    const data = JSON.stringify(message);
    if (message.op === 'event' || message.op === 'events' || message.op === 'data') {
      socket.send(data);
      const behind = socket.bufferedAmount - repliesUnsent;
      if (behind > maxBufferedBytes) onBehind(behind);
      return;
    }
    const bytes = Buffer.byteLength(data);
    repliesUnsent += bytes;
    socket.send(data, () => (repliesUnsent -= bytes));
  };
}

/** The host of a Host header, if it is a loopback name (a DNS-rebound name is refused). */
function loopbackHost(header: string | undefined): boolean {
  if (!header) return false;
  const m = /^(?:\[([^\]]+)\]|([^:]+))(?::\d+)?$/.exec(header);
  const host = (m?.[1] ?? m?.[2] ?? '').toLowerCase();
  return isLoopback(host);
}

/** The path of a request as sent (still percent-encoded), without its query. */
function rawPath(url: string | undefined): string {
  const path = (url ?? '/').split(/[?#]/, 1)[0];
  return path || '/';
}

function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "frame-ancestors 'none'",
};

function page(res: ServerResponse, status: number, title: string, body: string, headers = {}): void {
  res.writeHead(status, {
    ...headers,
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
  });
  res.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>kubelab: ${escapeHtml(title)}</title></head>` +
      `<body style="font-family:system-ui,sans-serif;margin:3rem;max-width:40rem"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(body)}</p></body></html>\n`,
  );
}

/** Refuses a WebSocket upgrade with a plain HTTP answer. */
function refuseUpgrade(socket: Duplex, status: number, message: string): void {
  const body = message + '\n';
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n` +
      `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const cp = options.controlPlane;
  const listen = options.listen ?? DEFAULT_UI_LISTEN;
  const { host, port: wantedPort } = splitHostPort(listen);
  if (!isLoopback(host)) {
    throw new Error(
      `--ui-listen must be a loopback address (127.0.0.1, ::1, localhost), not "${host}": the GUI is served over plain HTTP. ` +
        `To use it from another machine, tunnel it: ssh -L 6080:127.0.0.1:6080 <this machine>`,
    );
  }
  const rendererDir = options.rendererDir ?? defaultRendererDir();
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const logger = options.logger ?? cp.logger.child({ component: 'ui' });
  let port = wantedPort;
  const clock = cp.options.clock ?? realClock;
  const logins = new LoginSessions({
    tokens: cp.tokens,
    key: ensureLoginKey(cp.options.dataDir),
    nameOfCookie: () => `kubelab_session_${port}`,
    now: () => clock.now(),
  });
  const sessions = new Map<WebSocket, { session: BridgeEndpoint; alive: boolean }>();

  const onRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    if (!loopbackHost(req.headers.host)) {
      page(
        res,
        421,
        'Wrong address',
        `This server answers only to a loopback address: open http://127.0.0.1:${port}/ (the URL kubelab server --ui printed).`,
      );
      return;
    }
    const token = new URL(req.url ?? '/', 'http://localhost').searchParams.get('token');
    if (token !== null) {
      const result = logins.login(token);
      if (!result.ok) {
        page(res, result.status, 'Cannot sign in', result.message);
        return;
      }
      logger.info({ user: result.identity.name }, 'signed in to the GUI');
      // A page, not a redirect: its own navigation to / is same-site, so the SameSite=Strict
      // cookie goes along even when the link was opened from another site; and the token
      // leaves the address bar and history.
      res.writeHead(200, {
        'set-cookie': logins.cookie(result.sessionId),
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
      });
      res.end(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/">` +
          `<title>kubelab</title></head><body><p>Signed in as ${escapeHtml(result.identity.name)}. <a href="/">Open kubelab</a></p></body></html>\n`,
      );
      return;
    }
    const bearer = logins.identityFromBearer(req.headers.authorization);
    const identity = bearer?.ok ? bearer.identity : logins.identityFromCookie(req.headers.cookie);
    if (!identity) {
      const status = bearer && !bearer.ok ? bearer.status : 401;
      page(
        res,
        status,
        'Sign in to kubelab',
        bearer && !bearer.ok
          ? bearer.message
          : 'Open the URL that `kubelab server --ui` printed: it carries a login token (or add ?token=<an admin or viewer token> to this address).',
      );
      return;
    }
    const renewed = logins.renewal(req.headers.cookie);
    if (renewed) res.setHeader('set-cookie', renewed);
    await serveStatic(rendererDir, rawPath(req.url), req, res);
  };

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_REQUEST_BYTES });
  // A page that stays open reconnects now and then without loading anything: renew its
  // sign-in on the upgrade's answer too (browsers keep cookies set there).
  wss.on('headers', (headers: string[], req: IncomingMessage) => {
    const renewed = logins.renewal(req.headers.cookie);
    if (renewed) headers.push(`Set-Cookie: ${renewed}`);
  });

  const server = createServer((req, res) => {
    onRequest(req, res).catch((err: Error) => {
      logger.error({ err }, 'serving a GUI request failed');
      if (!res.headersSent) page(res, 500, 'Internal error', err.message);
      else res.destroy();
    });
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    if (rawPath(req.url) !== BRIDGE_PATH) {
      refuseUpgrade(socket, 404, `no WebSocket here: the bridge is at ${BRIDGE_PATH}`);
      return;
    }
    if (!loopbackHost(req.headers.host)) {
      refuseUpgrade(socket, 421, `connect to a loopback address: ws://127.0.0.1:${port}${BRIDGE_PATH}`);
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${req.headers.host}`) {
      refuseUpgrade(socket, 403, `a page from ${origin} may not open the kubelab bridge`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, req));
  });

  const onConnection = (ws: WebSocket, req: IncomingMessage): void => {
    // Refused after the upgrade, so that the GUI can read why (a refused upgrade shows as 1006).
    const bearer = logins.identityFromBearer(req.headers.authorization);
    if (bearer && !bearer.ok) {
      ws.close(
        bearer.status === 403 ? CLOSE_FORBIDDEN : CLOSE_UNAUTHORIZED,
        bearer.status === 403
          ? 'forbidden: use an admin or viewer token'
          : 'unauthorized: the token is not valid; sign in with the URL kubelab server --ui printed',
      );
      return;
    }
    const identity: Identity | undefined = bearer?.identity ?? logins.identityFromCookie(req.headers.cookie);
    if (!identity) {
      ws.close(CLOSE_UNAUTHORIZED, 'unauthorized: sign in with the URL kubelab server --ui printed');
      return;
    }
    const send = bridgeSender(ws, maxBufferedBytes, (bufferedBytes) => {
      logger.warn({ user: identity.name, bufferedBytes }, 'a GUI connection fell behind: ending its streams');
      session.endStreams({
        reason: 'TooManyRequests',
        message: `this connection fell more than ${Math.round(maxBufferedBytes / 1024)} KiB behind (the page is not reading fast enough): its watches and log streams were ended; watch again`,
      });
    });
    const session = guiSession(cp, identity, sessionFor(cp, identity, send), send, {
      uiAddress: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    });
    const entry = { session, alive: true };
    sessions.set(ws, entry);
    logger.debug({ user: identity.name }, 'GUI connected');
    // Deleting the token this page signed in with ends the page's session at once: no call
    // of its (a token created, a watch) is served after the deletion.
    const forgetRevocation = cp.tokens.revocations.whenRevoked(identity, () => {
      logger.info({ user: identity.name }, 'its token was deleted: ending the GUI session');
      session.close();
      ws.close(CLOSE_UNAUTHORIZED, TOKEN_DELETED);
    });

    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) {
        send({
          id: 0,
          op: 'error',
          error: { reason: 'BadRequest', message: 'binary frames are not understood: send JSON text' },
        });
        return;
      }
      let message: unknown;
      try {
        message = parseBridgeMessage(rawText(data));
      } catch (err) {
        const unreadable = err as UnreadableMessage;
        send({ id: unreadable.id ?? 0, op: 'error', error: toBridgeError(unreadable.error ?? err) });
        return;
      }
      session.handle(message);
    });
    ws.on('pong', () => (entry.alive = true));
    ws.on('error', (err) => logger.debug({ err }, 'GUI connection error'));
    ws.on('close', () => {
      forgetRevocation();
      session.close();
      sessions.delete(ws);
      logger.debug({ user: identity.name }, 'GUI disconnected');
    });
  };

  const heartbeat = setInterval(() => {
    for (const [ws, entry] of sessions) {
      if (!entry.alive) {
        ws.terminate();
        continue;
      }
      entry.alive = false;
      ws.ping();
    }
  }, options.heartbeatMs ?? 30_000);
  heartbeat.unref();

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', (err) => reject(new Error(`cannot serve the GUI on ${listen}: ${err.message}`)));
    server.listen(wantedPort, host, resolveListen);
  });
  server.on('error', (err) => logger.error({ err }, 'the GUI server failed'));
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : wantedPort;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  return {
    host,
    get port() {
      return port;
    },
    get connections() {
      return sessions.size;
    },
    url: (token) => `http://${urlHost}:${port}/?token=${encodeURIComponent(token)}`,
    close() {
      closing ??= (async () => {
        clearInterval(heartbeat);
        for (const [ws, { session }] of sessions) {
          session.close();
          ws.close(1001, 'kubelab is shutting down');
        }
        // Give the close frames a moment to leave, then cut whoever did not answer.
        const cut = setTimeout(() => {
          for (const ws of sessions.keys()) ws.terminate();
        }, 1000);
        cut.unref();
        wss.close();
        await new Promise<void>((done) => {
          server.close(() => done());
          server.closeIdleConnections();
        });
        clearTimeout(cut);
      })();
      return closing;
    },
  };
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
