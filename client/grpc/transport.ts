/**
 * The gRPC transport: TLS pinned to the cluster's CA (or plaintext to a loopback server),
 * the bearer token on every call, keepalive pings so a dead connection is noticed, and
 * gRPC statuses turned back into typed ApiErrors.
 */
import * as grpc from '@grpc/grpc-js';
import {
  ApiObject,
  ListResponse,
  ResourcesService,
  WatchEvent as WireWatchEvent,
} from '../../proto/gen/kubelab/v1/api.js';
import { ApiError, type ErrorDetails, type Reason } from '../api/errors.js';
import { fromApiObject, resolveKind, toApiObject } from '../api/kinds.js';
import type { LocalWatch, LocalWatchSink, WriteRequest } from '../api/local.js';
import type { DeleteResponse, KubeObject, ListResult } from '../api/types.js';
import { ApiClient, type Client, type Transport } from '../client.js';
import type { RetryPolicy } from '../retry.js';

export const STATUS_METADATA_KEY = 'kubelab-status-bin';

export interface GrpcClientOptions {
  /** host:port, or https://host:port (the scheme is ignored; TLS unless `plaintext`). */
  server: string;
  token: string;
  /** PEM of the cluster CA; required unless `plaintext`. */
  caPem?: string;
  /** Only for a server on loopback started with --plaintext. */
  plaintext?: boolean;
  /** Per-call deadline for unary calls (default 30 s). */
  timeoutMs?: number;
  retry?: RetryPolicy;
  channelOptions?: grpc.ChannelOptions;
}

const GenericClient = grpc.makeGenericClientConstructor(
  ResourcesService as unknown as grpc.ServiceDefinition,
  'kubelab.v1.Resources',
);

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
  if (err.code === grpc.status.UNAVAILABLE) {
    return new ApiError(
      'Unavailable',
      `cannot reach the kubelab server at ${server}: ${err.details}; check the address and that the server is running`,
    );
  }
  if (err.code === grpc.status.RESOURCE_EXHAUSTED) {
    return new ApiError('RequestEntityTooLarge', `the request or response is too large: ${err.details}`);
  }
  if (err.code === grpc.status.CANCELLED)
    return new ApiError('Unavailable', `the call was cancelled: ${err.details}`);
  if (/certificate|self.signed|SSL|TLS/i.test(err.details ?? '')) {
    return new ApiError(
      'Unavailable',
      `TLS failed talking to ${server}: ${err.details}; check that the CA certificate is the cluster's (<data-dir>/pki/ca.crt)`,
    );
  }
  return ApiError.fromStatus(err.code, err.details);
}

function objectIn(o: ApiObject | undefined): KubeObject {
  const u = fromApiObject(o);
  if (!u) throw new ApiError('InternalError', 'the server sent an empty object');
  return u.object;
}

function wireWrite(req: WriteRequest): {
  object?: ApiObject;
  manifest: string;
  namespace: string;
  dryRun: boolean;
} {
  let object: ApiObject | undefined;
  if (req.object) {
    const info = resolveKind(req.wireKind ?? req.object.kind ?? '');
    if (!info)
      throw new ApiError(
        'BadRequest',
        `the object has no known kind (${req.object.kind}); set kind and apiVersion`,
      );
    object = toApiObject(info, req.object);
  }
  return {
    ...(object ? { object } : {}),
    manifest: req.manifest ?? '',
    namespace: req.namespace ?? '',
    dryRun: req.dryRun ?? false,
  };
}

export class GrpcTransport implements Transport {
  private client: grpc.Client;
  private readonly dial: () => grpc.Client;
  private readonly timeoutMs: number;

  constructor(private readonly options: GrpcClientOptions) {
    const { target, host } = targetOf(options.server);
    let credentials: grpc.ChannelCredentials;
    const channelOptions: grpc.ChannelOptions = {
      'grpc.keepalive_time_ms': 20_000,
      'grpc.keepalive_timeout_ms': 10_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.max_receive_message_length': 512 * 1024 * 1024,
      'grpc.max_send_message_length': 16 * 1024 * 1024,
      // A reconnect must dial a new connection, not reuse the silent one from a shared pool.
      'grpc.use_local_subchannel_pool': 1,
      ...options.channelOptions,
    };
    if (options.plaintext) {
      credentials = grpc.credentials.createInsecure();
    } else {
      if (!options.caPem)
        throw new ApiError(
          'BadRequest',
          'a CA certificate is needed for TLS; pass the cluster CA (<data-dir>/pki/ca.crt) or use plaintext for a loopback server',
        );
      const ssl = grpc.credentials.createSsl(Buffer.from(options.caPem));
      const token = options.token;
      const perCall = grpc.credentials.createFromMetadataGenerator((_params, cb) => {
        const md = new grpc.Metadata();
        md.set('authorization', `Bearer ${token}`);
        cb(null, md);
      });
      credentials = grpc.credentials.combineChannelCredentials(ssl, perCall);
      // The serving certificate names localhost and this machine's addresses; checking an IP
      // through SNI is deprecated in Node, so name the certificate's DNS entry instead.
      if (isIp(host)) channelOptions['grpc.ssl_target_name_override'] = 'localhost';
    }
    this.dial = () => new GenericClient(target, credentials, channelOptions);
    this.client = this.dial();
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** A fresh channel: calls on the old one end (and are retried by their callers). */
  reconnect(): void {
    const old = this.client;
    this.client = this.dial();
    old.close();
  }

  private metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    // Call credentials cannot ride on an insecure channel in grpc-js: add the header by hand.
    if (this.options.plaintext) md.set('authorization', `Bearer ${this.options.token}`);
    return md;
  }

  private unary<Req, Res>(method: string, req: Req): Promise<Res> {
    return new Promise((resolve, reject) => {
      const deadline = new Date(Date.now() + this.timeoutMs);
      (
        this.client as unknown as Record<
          string,
          (
            r: Req,
            md: grpc.Metadata,
            o: grpc.CallOptions,
            cb: (e: grpc.ServiceError | null, v: Res) => void,
          ) => void
        >
      )[method](req, this.metadata(), { deadline }, (err, value) =>
        err ? reject(toApiErrorFromGrpc(err, this.options.server)) : resolve(value),
      );
    });
  }

  async get(req: Parameters<Transport['get']>[0]): Promise<KubeObject> {
    return objectIn(await this.unary<typeof req, ApiObject>('get', req));
  }

  async list(req: Parameters<Transport['list']>[0]): Promise<ListResult> {
    const res = await this.unary<typeof req, ListResponse>('list', req);
    return {
      items: (res.items ?? []).map(objectIn),
      resourceVersion: res.resourceVersion ?? '',
      ...(res.continue ? { continue: res.continue } : {}),
      ...(res.remainingItemCount !== undefined ? { remainingItemCount: res.remainingItemCount } : {}),
    };
  }

  watch(req: Parameters<Transport['watch']>[0], sink: LocalWatchSink): Promise<LocalWatch> {
    const call = (
      this.client as unknown as {
        watch(r: unknown, md: grpc.Metadata): grpc.ClientReadableStream<WireWatchEvent>;
      }
    ).watch(req, this.metadata());
    let cancelled = false;
    let ended = false;
    const finish = (err?: ApiError) => {
      if (ended) return;
      ended = true;
      sink.end(err);
    };
    return new Promise((resolve, reject) => {
      let started = false;
      // A watch that is not established in time (no headers) is as good as dead.
      const establish = setTimeout(() => {
        if (started) return;
        cancelled = true;
        call.cancel();
        ended = true;
        reject(
          new ApiError(
            'Unavailable',
            `the watch was not established within ${this.timeoutMs / 1000} s; the connection may be dead`,
          ),
        );
      }, this.timeoutMs);
      establish.unref?.();
      const start = () => {
        if (!started) {
          started = true;
          clearTimeout(establish);
          resolve({
            stop: () => {
              cancelled = true;
              call.cancel();
              finish();
            },
          });
        }
      };
      call.on('metadata', start);
      call.on('data', (ev: WireWatchEvent) => {
        start();
        const object = objectIn(ev.object);
        if (ev.type === 'BOOKMARK') {
          sink.bookmark(
            object.metadata?.resourceVersion ?? '',
            object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true',
          );
        } else if (!sink.event(ev.type as 'ADDED' | 'MODIFIED' | 'DELETED', object)) {
          cancelled = true;
          call.cancel();
          finish(
            new ApiError(
              'Unavailable',
              'the watch was stopped because events were not consumed fast enough; watch again from the last resourceVersion',
            ),
          );
        }
      });
      call.on('error', (err: grpc.ServiceError) => {
        if (cancelled) return finish();
        const e = toApiErrorFromGrpc(err, this.options.server);
        if (!started) {
          ended = true;
          clearTimeout(establish);
          return reject(e);
        }
        finish(e);
      });
      call.on('end', () => {
        start();
        finish();
      });
    });
  }

  async create(req: WriteRequest): Promise<KubeObject> {
    return objectIn(await this.unary('create', wireWrite(req)));
  }

  async update(req: WriteRequest): Promise<KubeObject> {
    return objectIn(await this.unary('update', wireWrite(req)));
  }

  async updateStatus(req: WriteRequest): Promise<KubeObject> {
    return objectIn(await this.unary('updateStatus', wireWrite(req)));
  }

  async patch(req: Parameters<Transport['patch']>[0]): Promise<KubeObject> {
    return objectIn(await this.unary('patch', req));
  }

  async delete(req: Parameters<Transport['delete']>[0]): Promise<{ object: KubeObject; deleted: boolean }> {
    const res = await this.unary<typeof req, DeleteResponse>('delete', req);
    return { object: objectIn(res.object), deleted: res.deleted ?? false };
  }

  close(): void {
    this.client.close();
  }
}

export function grpcClient(options: GrpcClientOptions): Client {
  return new ApiClient(new GrpcTransport(options), options.retry);
}
