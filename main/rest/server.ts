/**
 * The REST door's HTTP server. It never listens: the connection guard (grpc/connectionguard.ts)
 * accepts every connection on the API port, terminates TLS, and hands over those that are not
 * gRPC, so kubectl and agents share port 6443, over HTTP/1.1 or HTTP/2 (see the guard).
 */
import * as http from 'node:http';
import * as http2 from 'node:http2';
import type * as net from 'node:net';
import type { RestRequestMessage, RestResponse } from './handler.js';

export interface RestDoor {
  /**
   * Serves an HTTP/1.1 connection (TLS already terminated); `firstRequest` is called when its
   * first request's headers have arrived.
   */
  connection(socket: net.Socket, firstRequest: () => void): void;
  /** Serves an HTTP/2 connection (TLS terminated; its first request already seen, not read). */
  http2(socket: net.Socket): void;
  /** Ends every connection it serves. */
  close(): void;
}

/** Kubernetes' default for concurrent streams per HTTP/2 connection. */
const MAX_CONCURRENT_STREAMS = 250;

export function restDoor(handler: (req: RestRequestMessage, res: RestResponse) => void): RestDoor {
  // Watches stay open without traffic for as long as the client likes (kubectl get -w); what
  // bounds idle and half-sent connections is the guard's per-address connection limit.
  const server = http.createServer(
    { requestTimeout: 0, headersTimeout: 30_000, keepAliveTimeout: 60_000 },
    handler,
  );
  // A request HTTP itself cannot read gets a Status, then the connection is closed.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
    const overflow = err.code === 'HPE_HEADER_OVERFLOW';
    const code = overflow ? 431 : 400;
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: overflow
        ? 'the request line and headers are larger than 16 KiB; shorten the URL (fewer selector terms, a shorter name) or the headers'
        : 'the request is not valid HTTP/1.1',
      reason: 'BadRequest',
      code,
    };
    const body = JSON.stringify(status);
    socket.end(
      `HTTP/1.1 ${code} ${overflow ? 'Request Header Fields Too Large' : 'Bad Request'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  const h2 = http2.createServer({ settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS } }, handler);
  h2.on('sessionError', () => undefined);
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  const sockets = new Set<net.Socket>();
  const waiting = new WeakMap<net.Socket, () => void>();
  server.on('request', (req: http.IncomingMessage) => {
    const first = waiting.get(req.socket);
    if (!first) return;
    waiting.delete(req.socket);
    first();
  });
  return {
    connection(socket, firstRequest) {
      waiting.set(socket, firstRequest);
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      server.emit('connection', socket);
    },
    http2(socket) {
      h2.emit('connection', socket);
    },
    close() {
      for (const s of sessions) s.destroy();
      for (const s of sockets) s.destroy();
    },
  };
}
