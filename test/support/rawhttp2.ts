/**
 * An HTTP/2 client over TLS written frame by frame, for what a well-behaved client never does:
 * ignore the server's stream limit, never read its answers (no WINDOW_UPDATE), stall. It sends
 * the connection preface and its SETTINGS at once, acknowledges the server's SETTINGS, and
 * records every frame it receives.
 */
import * as tls from 'node:tls';

export const FrameType = {
  DATA: 0,
  HEADERS: 1,
  RST_STREAM: 3,
  SETTINGS: 4,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
} as const;
const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;
export const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
export const ErrorCode = { NO_ERROR: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2, CANCEL: 8 } as const;

export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** HPACK integer with an n-bit prefix (RFC 7541 §5.1). */
function hpackInteger(value: number, prefixBits: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [value];
  const out = [max];
  value -= max;
  while (value >= 128) {
    out.push((value % 128) + 128);
    value = Math.floor(value / 128);
  }
  out.push(value);
  return out;
}

/** Each header as "literal without indexing, new name" (RFC 7541 §6.2.2): no table state. */
function headerBlock(headers: Array<[string, string]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of headers) {
    parts.push(Buffer.from([0, ...hpackInteger(name.length, 7)]), Buffer.from(name));
    parts.push(Buffer.from(hpackInteger(Buffer.byteLength(value), 7)), Buffer.from(value));
  }
  return Buffer.concat(parts);
}

/** A gRPC message: compressed flag, length, bytes. */
export function grpcMessage(bytes: Uint8Array): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([prefix, bytes]);
}

/** A TLS connection to the server on 127.0.0.1 that offers HTTP/2, as gRPC clients do. */
export function tlsToLoopback(port: number, caPem: string): tls.TLSSocket {
  return tls.connect({ host: '127.0.0.1', port, ca: caPem, servername: 'localhost', ALPNProtocols: ['h2'] });
}

export class RawHttp2 {
  readonly frames: Frame[] = [];
  /** The server's first SETTINGS, by identifier. */
  readonly serverSettings = new Map<number, number>();
  /** Resolves when the connection has ended, whoever ended it. */
  readonly closed: Promise<void>;
  private waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  private buffered = Buffer.alloc(0);

  private constructor(private readonly socket: tls.TLSSocket) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
  }

  /** Connects, sends the preface, and resolves once the server's SETTINGS arrived. */
  static async connect(port: number, caPem: string): Promise<RawHttp2> {
    const socket = tlsToLoopback(port, caPem);
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', () => resolve());
      socket.once('error', reject);
    });
    const conn = new RawHttp2(socket);
    socket.write(Buffer.concat([PREFACE, frame(FrameType.SETTINGS, 0, 0)]));
    await conn.next((f) => f.type === FrameType.SETTINGS && !(f.flags & Flag.ACK));
    return conn;
  }

  /** The first frame received (already or later) that matches. */
  next(match: (f: Frame) => boolean): Promise<Frame> {
    const seen = this.frames.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Opens a stream with a gRPC POST to `path`; with `message`, sends it and half-closes. */
  request(streamId: number, path: string, options: { token?: string; message?: Uint8Array } = {}): void {
    const headers: Array<[string, string]> = [
      [':method', 'POST'],
      [':scheme', 'https'],
      [':path', path],
      [':authority', 'localhost'],
      ['content-type', 'application/grpc'],
      ['te', 'trailers'],
    ];
    if (options.token) headers.push(['authorization', `Bearer ${options.token}`]);
    this.socket.write(frame(FrameType.HEADERS, Flag.END_HEADERS, streamId, headerBlock(headers)));
    if (options.message) {
      this.socket.write(frame(FrameType.DATA, Flag.END_STREAM, streamId, grpcMessage(options.message)));
    }
  }

  /** Lets the server send `bytes` more on the stream and on the connection. */
  windowUpdate(streamId: number, bytes: number): void {
    const increment = Buffer.alloc(4);
    increment.writeUInt32BE(bytes);
    this.socket.write(frame(FrameType.WINDOW_UPDATE, 0, 0, increment));
    this.socket.write(frame(FrameType.WINDOW_UPDATE, 0, streamId, increment));
  }

  reset(streamId: number, code: number = ErrorCode.CANCEL): void {
    const payload = Buffer.alloc(4);
    payload.writeUInt32BE(code);
    this.socket.write(frame(FrameType.RST_STREAM, 0, streamId, payload));
  }

  /** Bytes of DATA received on a stream so far. */
  dataBytes(streamId: number): number {
    return this.frames
      .filter((f) => f.type === FrameType.DATA && f.streamId === streamId)
      .reduce((n, f) => n + f.payload.length, 0);
  }

  close(): void {
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 9) {
      const length = this.buffered.readUIntBE(0, 3);
      if (this.buffered.length < 9 + length) return;
      const f: Frame = {
        type: this.buffered[3],
        flags: this.buffered[4],
        streamId: this.buffered.readUInt32BE(5) & 0x7fffffff,
        payload: this.buffered.subarray(9, 9 + length),
      };
      this.buffered = this.buffered.subarray(9 + length);
      if (f.type === FrameType.SETTINGS && !(f.flags & Flag.ACK)) {
        if (!this.frames.some((g) => g.type === FrameType.SETTINGS)) {
          for (let at = 0; at + 6 <= f.payload.length; at += 6) {
            this.serverSettings.set(f.payload.readUInt16BE(at), f.payload.readUInt32BE(at + 2));
          }
        }
        this.socket.write(frame(FrameType.SETTINGS, Flag.ACK, 0));
      }
      this.frames.push(f);
      for (const w of this.waiters.filter((w) => w.match(f))) w.resolve(f);
      this.waiters = this.waiters.filter((w) => !w.match(f));
    }
  }
}
