/**
 * One gRPC connection to the control plane: TLS pinned to the cluster's CA (or plaintext to a
 * loopback server), the bearer token on every call, keepalive pings so a dead connection is
 * noticed, a way to dial again, and gRPC statuses turned back into typed ApiErrors — a failed
 * connection worded by its likely cause (nothing listening, not a TLS port, a certificate).
 */
import * as grpc from '@grpc/grpc-js';
import { ApiError, type ErrorDetails, type Reason } from '../api/errors.js';
import type { CallRequest, CallResult } from '../../proto/gen/kubelab/v1/api.js';
import { CallStream, STREAMABLE_METHODS } from './callstream.js';
import { decodeWithWireReader } from './wirereader.js';

export const STATUS_METADATA_KEY = 'kubelab-status-bin';

export interface ConnectionOptions {
  /** host:port, or https://host:port (the scheme is ignored; TLS unless `plaintext`). */
  server: string;
  /** The bearer token; empty for calls that need none (fetching the CA). */
  token: string;
  /** PEM of the cluster CA; required unless `plaintext` or `insecureSkipVerify`. */
  caPem?: string;
  /** Only for a server on loopback started with --plaintext. */
  plaintext?: boolean;
  /** TLS without checking the server: only to fetch the CA a join token then pins. */
  insecureSkipVerify?: boolean;
  /** Per-call deadline for unary calls (default 30 s). */
  timeoutMs?: number;

  /**
   * Let clients to the same server share one connection (many hollow nodes in one process).
   * Otherwise each client dials its own, so a reconnect really dials again.
   */
  shareConnection?: boolean;
  /**
   * Send the Resources service's writes and gets as messages on one long-lived Calls stream
   * (callstream.ts) instead of a call each: for a client that calls all the time, an agent.
   */
  callStream?: boolean;
  channelOptions?: grpc.ChannelOptions;
}

export function targetOf(server: string): { target: string; host: string } {
  const stripped = server.replace(/^(https?|grpcs?):\/\//, '').replace(/\/+$/, '');
  const m = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(stripped);
  const host = m?.[1] ?? stripped;
  const port = m?.[2] ?? '6443';
  return { target: `${host.includes(':') ? `[${host}]` : host}:${port}`, host };
}

function isIp(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}

/** Why a connection to the server failed, as far as the client can tell. */
export type ConnectionFailure = 'refused' | 'not-tls' | 'certificate' | 'unreachable';

/**
 * The server could not be reached (UNAVAILABLE), with the likely cause: callers that know where
 * the address came from (labctl's flag, variable or context) can say where to fix it.
 */
export class ConnectionError extends ApiError {
  constructor(
    readonly failure: ConnectionFailure,
    message: string,
  ) {
    super('Unavailable', message);
  }
}

/**
 * The useful part of grpc-js's connection error text. grpc-js writes "No connection
 * established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1. Resolution note: " (the
 * note is empty unless name resolution had something to say) and OpenSSL's reasons as
 * "80DC…:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/….c:350:";
 * a person needs "connect ECONNREFUSED 127.0.0.1:1" and "wrong version number".
 */
export function connectionErrorText(details: string): string {
  let text = details.trim();
  const established =
    /^No connection established\. Last error: ([\s\S]*?)\.?\s*(?:Resolution note:\s*([\s\S]*))?$/.exec(text);
  if (established) {
    const lastError = established[1].trim();
    const note = established[2]?.trim();
    text = [lastError === 'null' ? 'no connection established' : lastError, note].filter(Boolean).join('; ');
  }
  return (
    text
      .replace(/^Error: /, '')
      // OpenSSL: "<hex>:error:<hex>:<library>:<function>:<reason>:<source file>:<line>:".
      .replace(/[0-9A-F]+:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):[^:\s]*:\d+:\s*/g, '$1')
      // grpc-js stamps some errors with the time, e.g. "Failed to connect (2026-12-02T10:13:25.372Z)".
      .replace(/ \(\d{4}-\d\d-\d\dT[\d:.]+Z\)/g, '')
      .trim()
  );
}

/**
 * OpenSSL's reasons when the other side answered a TLS ClientHello with something that is not
 * TLS — an HTTP server's "HTTP/1.1 400 Bad Request" read as a record header.
 */
const NOT_TLS = /wrong version number|packet length too long|unknown protocol|http request/i;
const CERTIFICATE = /certificate|self.signed|unable to verify|altnames|hostname/i;

/** An UNAVAILABLE status of grpc-js's own (no status from the server): the connection failed. */
function connectionError(details: string, server: string): ConnectionError {
  const text = connectionErrorText(details);
  if (NOT_TLS.test(text)) {
    return new ConnectionError(
      'not-tls',
      `${server} is not kubelab's gRPC port: the TLS handshake got a plain-text answer (${JSON.stringify(NOT_TLS.exec(text)![0])}), as from an HTTP server — it may be kubelab's GUI (--ui) or metrics port; use the address \`kubelab server\` prints after "listening on"`,
    );
  }
  if (CERTIFICATE.test(text)) {
    return new ConnectionError(
      'certificate',
      `TLS failed talking to ${server}: ${text}; check that the CA certificate is the cluster's (<data-dir>/pki/ca.crt) and the address is right`,
    );
  }
  if (/ECONNREFUSED/.test(text)) {
    return new ConnectionError(
      'refused',
      `nothing answers at ${server} (connection refused): check the address and port, and that the kubelab server is running there`,
    );
  }
  return new ConnectionError(
    'unreachable',
    `cannot reach the kubelab server at ${server}: ${text}; check the address and that the server is running`,
  );
}

/**
 * grpc-js's words for a stream HTTP/2 reset before the server's code saw it, by status: what the
 * reset was and what to do.
 */
const REFUSED_BY_HTTP2: ReadonlyArray<{
  code: grpc.status;
  details: string;
  what: string;
  advice: string;
}> = [
  {
    code: grpc.status.UNAVAILABLE,
    details: 'Stream refused by server',
    what: 'HTTP/2 REFUSED_STREAM: no room for another stream on this connection',
    advice: 'send it again',
  },
  {
    code: grpc.status.RESOURCE_EXHAUSTED,
    details: 'Bandwidth exhausted or memory limit exceeded',
    what: 'HTTP/2 ENHANCE_YOUR_CALM: too many streams at once on this connection',
    advice: 'send it again more slowly',
  },
];

export function toApiErrorFromGrpc(err: grpc.ServiceError, server: string): ApiError {
  const raw = err.metadata?.get(STATUS_METADATA_KEY)?.[0];
  if (raw) {
    try {
      const status = JSON.parse(Buffer.from(raw as Buffer).toString('utf8')) as {
        reason?: Reason;
        message?: string;
        details?: ErrorDetails;
      };
      return ApiError.fromStatus(err.code, status.message ?? err.details, status);
    } catch {
      // Fall through to the plain status.
    }
  }
  // HTTP/2 turned the call away before the server's code saw it (RFC 9113 §8.7): nothing of it
  // was done, so it may be sent again, whatever it was — as a 429 without a hint.
  const refused = REFUSED_BY_HTTP2.find((r) => r.code === err.code && r.details === err.details);
  if (refused)
    return new ApiError(
      'TooManyRequests',
      `${server} refused the call before processing it (${refused.what}); nothing was done, ${refused.advice}`,
    );
  if (err.code === grpc.status.UNAVAILABLE) return connectionError(err.details ?? '', server);
  if (err.code === grpc.status.RESOURCE_EXHAUSTED)
    return new ApiError('RequestEntityTooLarge', `the request or response is too large: ${err.details}`);
  if (err.code === grpc.status.CANCELLED)
    return new ApiError('Unavailable', `the call was cancelled: ${connectionErrorText(err.details ?? '')}`);
  if (err.code === grpc.status.DEADLINE_EXCEEDED)
    return new ApiError(
      'Timeout',
      `${server} did not answer in time; check that it is reachable and not overloaded`,
    );
  return ApiError.fromStatus(err.code, err.details);
}

/**
 * grpc-js shares a connection between channels only when their credentials are the same
 * object (it compares TLS contexts by identity): thousands of hollow nodes that ask to share
 * must get one credentials object per CA, or each dials — and TLS-handshakes — on its own.
 */
const tlsCredentialsByCa = new Map<string, grpc.ChannelCredentials>();

/**
 * Credentials that verify nothing (fetching the cluster's CA before joining) carry no secret,
 * so one object serves every connection: made per connection, each loaded Node's whole default
 * CA store into a TLS context of its own, 40 % of a hollow fleet's CPU while 10,000 nodes joined.
 */
let unverifiedTlsCredentials: grpc.ChannelCredentials | undefined;

function sharedUnverifiedTlsCredentials(): grpc.ChannelCredentials {
  return (unverifiedTlsCredentials ??= grpc.credentials.createSsl(null, null, null, {
    rejectUnauthorized: false,
  }));
}

function sharedTlsCredentials(caPem: string): grpc.ChannelCredentials {
  let credentials = tlsCredentialsByCa.get(caPem);
  if (!credentials) {
    credentials = grpc.credentials.createSsl(Buffer.from(caPem));
    tlsCredentialsByCa.set(caPem, credentials);
  }
  return credentials;
}

type UnaryMethod = (
  req: unknown,
  md: grpc.Metadata,
  o: grpc.CallOptions,
  cb: (e: grpc.ServiceError | null, v: unknown) => void,
) => void;

interface MethodCodec {
  path: string;
  requestSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): unknown;
}

export class Connection {
  private current: grpc.Client;
  private readonly calls?: CallStream;
  private streamable = new Set<string>();
  private readonly dial: () => grpc.Client;
  readonly timeoutMs: number;

  constructor(
    readonly options: ConnectionOptions,
    service: grpc.ServiceDefinition,
    serviceName: string,
  ) {
    const { target, host } = targetOf(options.server);
    const channelOptions: grpc.ChannelOptions = {
      // As client-go's HTTP/2 health check (a ping after 30 s, 15 s to answer), with room for
      // a stalled event loop on either side: a dead connection is still noticed within a minute.
      'grpc.keepalive_time_ms': 30_000,
      'grpc.keepalive_timeout_ms': 20_000,
      'grpc.keepalive_permit_without_calls': 1,
      // A control plane that comes back after minutes is found within seconds, not after
      // grpc-js's default 2-minute reconnect backoff.
      'grpc.max_reconnect_backoff_ms': 5_000,
      'grpc.max_receive_message_length': 512 * 1024 * 1024,
      'grpc.max_send_message_length': 16 * 1024 * 1024,
      // A larger HTTP/2 window lets a big list arrive without waiting for window updates.
      'grpc-node.flow_control_window': 16 * 1024 * 1024,
      // grpc-js's channelz bookkeeping (per-call trackers, timestamps, trace events) is read by
      // nothing here, and a hollow fleet runs thousands of channels.
      'grpc.enable_channelz': 0,
      ...(options.shareConnection ? {} : { 'grpc.use_local_subchannel_pool': 1 }),
      ...options.channelOptions,
    };
    let credentials: grpc.ChannelCredentials;
    if (options.plaintext) {
      credentials = grpc.credentials.createInsecure();
    } else if (options.insecureSkipVerify) {
      credentials = sharedUnverifiedTlsCredentials();
      if (isIp(host)) channelOptions['grpc.ssl_target_name_override'] = 'localhost';
    } else {
      if (!options.caPem) {
        throw new ApiError(
          'BadRequest',
          'a CA certificate is needed for TLS; pass the cluster CA (<data-dir>/pki/ca.crt) or use plaintext for a loopback server',
        );
      }
      credentials = options.shareConnection
        ? sharedTlsCredentials(options.caPem)
        : grpc.credentials.createSsl(Buffer.from(options.caPem));
      // The serving certificate names localhost and this machine's addresses; checking an IP
      // through SNI is deprecated in Node, so name the certificate's DNS entry instead.
      if (isIp(host)) channelOptions['grpc.ssl_target_name_override'] = 'localhost';
    }
    const definition = decodeWithWireReader(service, 'response') as unknown as Record<string, MethodCodec>;
    const Client = grpc.makeGenericClientConstructor(
      definition as unknown as grpc.ServiceDefinition,
      serviceName,
    );
    this.dial = () => new Client(target, credentials, channelOptions);
    this.current = this.dial();
    this.timeoutMs = options.timeoutMs ?? 30_000;
    if (options.callStream && definition.calls) this.calls = this.callStream(definition);
  }

  private callStream(definition: Record<string, MethodCodec>): CallStream {
    const rpcName = (key: string) => definition[key]?.path.slice(definition[key].path.lastIndexOf('/') + 1);
    this.streamable = new Set(Object.keys(definition).filter((k) => STREAMABLE_METHODS.includes(rpcName(k))));
    return new CallStream({
      open: () =>
        (
          this.current as unknown as {
            calls(md: grpc.Metadata): grpc.ClientDuplexStream<CallRequest, CallResult>;
          }
        ).calls(this.metadata()),
      unary: (method, request) => this.unaryCall(method, request),
      method: (key) => ({
        name: rpcName(key),
        encode: (request) => definition[key].requestSerialize(request),
        decode: (bytes) => definition[key].responseDeserialize(bytes),
      }),
      toError: (code, details, status) => {
        const metadata = new grpc.Metadata();
        if (status) metadata.set(STATUS_METADATA_KEY, status);
        return toApiErrorFromGrpc({ code, details, metadata } as grpc.ServiceError, this.options.server);
      },
      timeoutMs: this.timeoutMs,
    });
  }

  get client(): grpc.Client {
    return this.current;
  }

  /** The token goes on every call as metadata (so channels can be shared between tokens). */
  metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.options.token) md.set('authorization', `Bearer ${this.options.token}`);
    return md;
  }

  unary<Req, Res>(method: string, req: Req): Promise<Res> {
    if (this.calls && this.streamable.has(method)) return this.calls.call<Res>(method, req);
    return this.unaryCall(method, req);
  }

  private unaryCall<Req, Res>(method: string, req: Req): Promise<Res> {
    return new Promise((resolve, reject) => {
      const call = (this.current as unknown as Record<string, UnaryMethod>)[method];
      call.call(
        this.current,
        req,
        this.metadata(),
        { deadline: new Date(Date.now() + this.timeoutMs) },
        (err, value) => (err ? reject(toApiErrorFromGrpc(err, this.options.server)) : resolve(value as Res)),
      );
    });
  }

  /** A fresh channel: calls on the old one end (and are retried by their callers). */
  reconnect(): void {
    const old = this.current;
    this.current = this.dial();
    this.calls?.close();
    old.close();
  }

  close(): void {
    this.calls?.close();
    this.current.close();
  }
}
