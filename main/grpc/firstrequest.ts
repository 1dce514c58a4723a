/**
 * Which API an HTTP/2 connection speaks, when its client offered both HTTP/2 and HTTP/1.1 by
 * ALPN — kubectl and curl do, and so do gRPC tools built on a general HTTP stack (buf curl).
 * grpc-js takes whole connections, so the decision is made per connection, from its first
 * request's content-type (application/grpc), before a byte is answered: the headers are read
 * by an HTTP/2 session of Node's own whose writes go nowhere (HPACK and all), and every byte
 * read is put back for whichever server takes the connection.
 *
 * A client that waits for the server's SETTINGS before its first request never sends one here:
 * gRPC clients wait (grpc-js, grpc-go), general HTTP clients do not (Go's, curl's, browsers').
 * So a connection quiet for QUIET_MS after its preface, without a request, is gRPC.
 */
import * as http2 from 'node:http2';
import type * as net from 'node:net';
import { Duplex } from 'node:stream';
import type { Clock, TimerHandle } from '../../client/util/clock.js';

/** The preface, SETTINGS, WINDOW_UPDATE and one header block fit with room to spare. */
export const MAX_SNIFFED_BYTES = 64 * 1024;
/** How long a client that sent its preface but no request is taken to be waiting for SETTINGS. */
export const QUIET_MS = 250;

export type FirstRequest = 'grpc' | 'http';

/**
 * Calls `then` once the connection's API is known, every byte read put back into `socket`
 * (paused). Not at all if the socket closes first.
 */
export function sniffFirstRequest(socket: net.Socket, clock: Clock, then: (api: FirstRequest) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let decided = false;
  let quiet: TimerHandle | undefined;
  const tap = new Duplex({
    read() {},
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
  tap.on('error', () => undefined);
  const session = http2.performServerHandshake(tap);
  session.on('error', () => decide('grpc'));
  session.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    decide(String(headers['content-type'] ?? '').startsWith('application/grpc') ? 'grpc' : 'http');
  });

  function stop(): void {
    decided = true;
    if (quiet) clock.clearTimeout(quiet);
    socket.off('data', onData);
    socket.off('close', stop);
    session.destroy();
    tap.destroy();
  }
  function decide(api: FirstRequest): void {
    if (decided) return;
    stop();
    socket.pause();
    if (chunks.length) socket.unshift(Buffer.concat(chunks));
    then(api);
  }
  function onData(chunk: Buffer): void {
    chunks.push(chunk);
    received += chunk.length;
    tap.push(chunk);
    if (received > MAX_SNIFFED_BYTES) return decide('grpc');
    if (quiet) clock.clearTimeout(quiet);
    // Checked on the next turn too: bytes that arrived meanwhile are read first.
    quiet = clock.setTimeout(() => setImmediate(() => decide('grpc')), QUIET_MS);
  }
  socket.on('data', onData);
  socket.once('close', stop);
  socket.resume();
}
