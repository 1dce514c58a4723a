/**
 * The API port's own listening sockets: every connection is accepted here first, counted
 * against its client address, given a deadline to finish the TLS handshake and send the
 * HTTP/2 preface, and only then handed to grpc-js (Server.createConnectionInjector). grpc-js
 * alone would keep a connection that never speaks for as long as the client likes, and any
 * number of them from one address.
 *
 * TLS is terminated here (with the serving certificate grpc-js was given before) because the
 * preface is only visible in the clear; grpc-js then serves HTTP/2 over the TLS socket.
 */
import type * as grpc from '@grpc/grpc-js';
import type { RestDoor } from '../rest/server.js';
import { sniffFirstRequest } from './firstrequest.js';
import { lookup } from 'node:dns/promises';
import * as net from 'node:net';
import * as tls from 'node:tls';
import type { Clock, TimerHandle } from '../../client/util/clock.js';
import type { Logger } from '../logging.js';

/** The client connection preface (RFC 9113 §3.4): what a client sends first, after TLS. */
const PREFACE_LENGTH = Buffer.byteLength('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export interface ConnectionGuardOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Absent: plaintext (the caller allows that on loopback only). */
  tls?: { certPem: string; keyPem: string };
  injector: grpc.ConnectionInjector;
  /**
   * The Kubernetes REST API on the same port: HTTP/1.1 connections go here (gRPC is HTTP/2
   * only). Absent: every connection is gRPC.
   */
  rest?: RestDoor;
  prefaceTimeoutMs: number;
  /** 0: no limit. */
  maxConnectionsPerAddress: number;
  clock: Clock;
  logger: Logger;
}

/** "::ffff:10.0.0.5" (an IPv4 client on a dual-stack socket) counts as "10.0.0.5". */
function clientAddress(socket: net.Socket): string {
  const address = socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** A connection accepted and not yet handed to grpc-js. */
interface Pending {
  socket: net.Socket;
  deadline: TimerHandle;
}

/** The TCP connection a TLS socket runs on (the same 4-tuple), while it lives. */
function connectionKey(socket: net.Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}|${socket.localAddress}|${socket.localPort}`;
}

export class ConnectionGuard {
  private readonly servers: net.Server[] = [];
  private readonly perAddress = new Map<string, number>();
  /** Addresses whose refusals were logged since they last went below the limit. */
  private readonly refusalLogged = new Set<string>();
  private readonly pending = new Map<string, Pending>();
  /** Never listens: accepted sockets are handed to it (tls.Server does the handshake and ALPN). */
  private readonly tlsServer: tls.Server | undefined;
  private closing = false;

  constructor(private readonly options: ConnectionGuardOptions) {
    if (options.tls) {
      this.tlsServer = tls.createServer({
        cert: options.tls.certPem,
        key: options.tls.keyPem,
        ...(options.rest
          ? {
              ALPNCallback(this: tls.TLSSocket, { protocols }: { protocols: string[] }) {
                if (protocols.includes('h2') && protocols.includes('http/1.1')) offersBoth.add(this);
                return protocols.includes('h2')
                  ? 'h2'
                  : protocols.includes('http/1.1')
                    ? 'http/1.1'
                    : undefined;
              },
            }
          : { ALPNProtocols: ['h2'] }),
        requestCert: false,
        // As grpc-js's own TLS did: this environment variable still chooses the ciphers.
        ciphers: process.env.GRPC_SSL_CIPHER_SUITES,
      });
      this.tlsServer.on('secureConnection', (socket: tls.TLSSocket) => {
        socket.on('error', () => socket.destroy());
        const rest = this.options.rest;
        // HTTP/1.1 by ALPN, or no ALPN at all: the REST API (gRPC is HTTP/2 only).
        if (rest && socket.alpnProtocol !== 'h2') return this.handOver(socket, 'rest');
        // HTTP/2 from a client that offered HTTP/1.1 too: its first request tells.
        if (rest && offersBoth.has(socket))
          return afterPreface(socket, () =>
            sniffFirstRequest(socket, this.options.clock, (api) =>
              this.handOver(socket, api === 'grpc' ? 'grpc' : 'rest-http2'),
            ),
          );
        afterPreface(socket, () => this.handOver(socket, 'grpc'));
      });
    }
  }

  /**
   * Listens on every address the host resolves to (as grpc-js does: "localhost" is 127.0.0.1
   * and ::1), failing only if none can be listened on; resolves to the port.
   */
  async listen(): Promise<number> {
    const { host } = this.options;
    const addresses = net.isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
    let port = this.options.port;
    const failures: string[] = [];
    for (const address of addresses) {
      // TCP_NODELAY, as Go's and http.Server's listeners set it: without it a small write
      // (a watch event, a REST answer) waits for the peer's delayed ACK, tens of milliseconds.
      const server = net.createServer({ noDelay: true }, (socket) => this.accept(socket));
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen({ host: address, port }, () => {
            server.off('error', reject);
            resolve();
          });
        });
      } catch (err) {
        failures.push(`${address}: ${(err as Error).message}`);
        continue;
      }
      this.servers.push(server);
      port = (server.address() as net.AddressInfo).port;
    }
    if (!this.servers.length) throw new Error(failures.join('; '));
    return port;
  }

  /**
   * Stops accepting and closes the connections not yet handed to grpc-js; grpc-js closes the
   * rest (the listening sockets' own close waits for those, so it is not awaited here).
   */
  close(): void {
    this.closing = true;
    for (const { socket } of this.pending.values()) socket.destroy();
    for (const server of this.servers) server.close();
  }

  private accept(socket: net.Socket): void {
    // A reset from the client is its own business; without a listener it would crash us.
    socket.on('error', () => {});
    if (this.closing) return void socket.destroy();
    const address = clientAddress(socket);
    const open = this.perAddress.get(address) ?? 0;
    const max = this.options.maxConnectionsPerAddress;
    if (max > 0 && open >= max) {
      this.logRefusal(address, max);
      return void socket.destroy();
    }
    this.perAddress.set(address, open + 1);
    const key = connectionKey(socket);
    const deadline = this.options.clock.setTimeout(() => socket.destroy(), this.options.prefaceTimeoutMs);
    this.pending.set(key, { socket, deadline });
    socket.once('close', () => {
      this.stopWaiting(key);
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
      if (left < max) this.refusalLogged.delete(address);
    });
    if (this.tlsServer) this.tlsServer.emit('connection', socket);
    // Plaintext (loopback, development) serves gRPC only: peeking at the first bytes to tell
    // HTTP/1.1 apart would leave them where Node's HTTP parser, reading the socket's handle
    // directly, never looks.
    else afterPreface(socket, () => this.handOver(socket, 'grpc'));
  }

  private handOver(socket: net.Socket, to: 'grpc' | 'rest' | 'rest-http2'): void {
    const key = connectionKey(socket);
    // An HTTP/1.1 connection stays on its deadline until its first request has arrived whole.
    if (to === 'rest' && this.options.rest) {
      if (!this.pending.has(key)) return void socket.destroy();
      return this.options.rest.connection(socket, () => this.stopWaiting(key));
    }
    if (!this.stopWaiting(key)) return void socket.destroy();
    if (to === 'rest-http2' && this.options.rest) this.options.rest.http2(socket);
    else this.options.injector.injectConnection(socket);
  }

  /** False when the connection is no longer waiting (its deadline passed, or it closed). */
  private stopWaiting(key: string): boolean {
    const pending = this.pending.get(key);
    if (!pending) return false;
    this.options.clock.clearTimeout(pending.deadline);
    this.pending.delete(key);
    return true;
  }

  private logRefusal(address: string, max: number): void {
    if (this.refusalLogged.has(address)) return;
    this.refusalLogged.add(address);
    this.options.logger.warn(
      { address, max },
      `refusing connections from ${address}: it already has ${max} open; if many agents share this address (a NAT), raise the limit (kubelab server --max-connections-per-address)`,
    );
  }
}

/**
 * gRPC and the Kubernetes REST API share the port, as on a Kubernetes control plane, and are
 * told apart by ALPN first: gRPC is HTTP/2 only, so HTTP/1.1 (or no ALPN) is the REST API, and
 * HTTP/2 from a client that offered only h2 (grpc-js, grpc-go) is gRPC. A client that offered
 * both (kubectl, curl, buf curl) gets HTTP/2, and its first request decides (firstrequest.ts).
 * Node calls ALPNCallback on the TLS socket itself, which is how the offer is remembered.
 */
const offersBoth = new WeakSet<tls.TLSSocket>();

/**
 * Calls `then` once the first PREFACE_LENGTH bytes arrived, with those bytes put back so the
 * HTTP/2 session that takes the socket reads them first. A client that sends less never
 * gets its connection served (the deadline closes it).
 */
function afterPreface(socket: net.Socket, then: () => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
    if (received < PREFACE_LENGTH) return;
    socket.off('data', onData);
    socket.pause();
    socket.unshift(Buffer.concat(chunks));
    then();
  };
  socket.on('data', onData);
}
