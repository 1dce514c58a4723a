/**
 * The gRPC server: the Resources service, the agents' tunnels, server reflection and the
 * standard health service, TLS by default with bearer tokens checked on every call (health excepted), keepalive pings
 * both ways so half-open connections are found. Plaintext is refused off loopback. What one
 * client may hold (connections, streams, turns at large lists) is bounded (limits.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { ApiError } from '../../client/api/errors.js';
import { realClock, type Clock } from '../../client/util/clock.js';
import type { ApiServer } from '../apiserver/apiserver.js';
import type { Logger } from '../logging.js';
import { addReflection } from './reflection.js';
import { ConnectionGuard } from './connectionguard.js';
import type { IngressBrake } from './ingressbrake.js';
import { addHealthService } from './health.js';
import { largeListInterceptor } from './largelists.js';
import { serverLimits, type ServerLimits } from './limits.js';
import { identityOf } from './handlers.js';
import { resourcesHandlers } from './resources.js';
import type { TokenStore } from './tokens.js';
import { safeService, serverDefinition, toServiceError } from './wire.js';
import { BootstrapService, TokensService } from '../../proto/gen/kubelab/v1/cluster.js';
import { MetricsService } from '../../proto/gen/kubelab/v1/metrics.js';
import { AgentTunnelService } from '../../proto/gen/kubelab/v1/tunnel.js';
import { agentTunnelHandlers } from './agenttunnel.js';
import type { TunnelRegistry } from './tunnel.js';
import { bootstrapHandlers, metricsHandlers, tokensHandlers } from './cluster.js';
import type { Pki } from './pki.js';
import type { RestDoor } from '../rest/server.js';

export const SERVICE_NAME = 'kubelab.v1.Resources';
/** Requests larger than this are refused with RESOURCE_EXHAUSTED (objects are limited to 1.5 MiB). */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

export interface GrpcServerOptions {
  api: ApiServer;
  tokens: TokenStore;
  /** host:port; port 0 picks a free one. */
  listen: string;
  /** TLS material; absent means plaintext (loopback only). */
  tls?: { certPem: string; keyPem: string };
  /** The cluster PKI, for agents joining (absent when plaintext). */
  pki?: Pki;
  /** Where agents' tunnels (AgentTunnel.Connect) are kept; the apiserver reaches agents through it. */
  tunnels: TunnelRegistry;
  logger: Logger;
  /** Per watch: bytes of events a client that stopped reading may leave unsent before its watch is ended. */
  watchBufferBytes?: number;
  /** What one client may hold; DEFAULT_SERVER_LIMITS for what is not given. */
  limits?: Partial<ServerLimits>;
  /** Times the connection and large-list limits (default: the real clock). */
  clock?: Clock;
  /** The Kubernetes REST API, served on the same port (connections that are not gRPC). */
  rest?: RestDoor;
  /** Holds back connections whose requests keep being refused (shared with the REST door). */
  brake?: IngressBrake;
}

export interface RunningGrpcServer {
  port: number;
  address: string;
  health: HealthImplementation;
  /** Stops accepting calls, ends watches, waits for in-flight calls (up to `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

export function splitHostPort(listen: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(listen);
  if (!m) throw new Error(`--listen "${listen}" is not host:port (e.g. 0.0.0.0:6443 or 127.0.0.1:0)`);
  return { host: m[1], port: Number(m[2]) };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Calls that need no token: health checks, and fetching the CA a join token pins. */
const OPEN_METHODS = ['/grpc.health.v1.Health/', '/kubelab.v1.Bootstrap/GetCA'];

/** Rejects calls without a valid token before they reach a handler (the open ones excepted). */
function authInterceptor(tokens: TokenStore): grpc.ServerInterceptor {
  return (methodDescriptor, call) => {
    const open = OPEN_METHODS.some((prefix) => methodDescriptor.path.startsWith(prefix));
    const listener = new grpc.ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        if (open) return next(metadata);
        try {
          identityOf(metadata, tokens);
          next(metadata);
        } catch (err) {
          const e = err as ApiError;
          const se = toServiceError(e);
          call.sendStatus({ code: e.code, details: e.message, metadata: se.metadata! });
        }
      })
      .build();
    const responder = new grpc.ResponderBuilder().withStart((next) => next(listener)).build();
    return new grpc.ServerInterceptingCall(call, responder);
  };
}

export async function startGrpcServer(options: GrpcServerOptions): Promise<RunningGrpcServer> {
  const { host } = splitHostPort(options.listen);
  if (!options.tls && !isLoopback(host)) {
    throw new Error(
      `plaintext is only allowed on a loopback address (127.0.0.1, ::1, localhost), not "${host}"; drop --plaintext to use TLS`,
    );
  }
  const limits = serverLimits(options.limits);
  const clock = options.clock ?? realClock;
  const server = new grpc.Server({
    interceptors: [
      authInterceptor(options.tokens),
      largeListInterceptor({
        minBytes: limits.largeListBytes,
        concurrency: limits.largeListConcurrency,
        turnMs: limits.largeListTurnMs,
        clock,
      }),
    ],
    // The server's pings only find clients that vanished (a half-open connection after sleep or
    // a network change): no hurry. The timeout outlasts a stalled event loop on either side (a
    // busy agent, a garbage collection here); after a long stall the timeout timer can fire
    // before the ping's answer waiting in the socket is read, and dropping a connection that
    // carries a hollow fleet fails thousands of calls at once.
    'grpc.keepalive_time_ms': 60_000,
    'grpc.keepalive_timeout_ms': 30_000,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.http2.min_ping_interval_without_data_ms': 5_000,
    'grpc.max_receive_message_length': MAX_REQUEST_BYTES,
    'grpc.max_send_message_length': -1,
    'grpc-node.flow_control_window': 16 * 1024 * 1024,
    'grpc.max_concurrent_streams': limits.maxConcurrentStreams,
    // grpc-js's channelz bookkeeping (per-call trackers, timestamps, closures) is read by
    // nothing here; kubelab serves no channelz service.
    'grpc.enable_channelz': 0,
  });
  // Long-lived streams that would hold a graceful shutdown open end when it begins.
  const closing = new AbortController();
  server.addService(
    serverDefinition(),
    resourcesHandlers(
      options.api,
      options.tokens,
      options.logger,
      options.watchBufferBytes,
      options.brake,
      closing.signal,
    ),
  );
  server.addService(
    safeService(BootstrapService),
    bootstrapHandlers(options.tokens, options.pki, options.logger),
  );
  server.addService(safeService(TokensService), tokensHandlers(options.tokens, options.pki, options.logger));
  server.addService(
    safeService(MetricsService),
    metricsHandlers(options.api, options.tokens, options.logger),
  );
  server.addService(
    safeService(AgentTunnelService),
    agentTunnelHandlers(options.tunnels, options.tokens, options.logger),
  );

  addReflection(server);
  const health = new HealthImplementation({ '': 'SERVING', [SERVICE_NAME]: 'SERVING' });
  addHealthService(server, health);

  // The guard accepts every connection and terminates TLS (it must see the HTTP/2 preface);
  // grpc-js serves HTTP/2 on what it hands over, so grpc-js itself gets no TLS credentials.
  const guard = new ConnectionGuard({
    host,
    port: splitHostPort(options.listen).port,
    tls: options.tls,
    injector: server.createConnectionInjector(grpc.ServerCredentials.createInsecure()),
    rest: options.rest,
    prefaceTimeoutMs: limits.prefaceTimeoutMs,
    maxConnectionsPerAddress: limits.maxConnectionsPerAddress,
    clock,
    logger: options.logger,
  });
  let port: number;
  try {
    port = await guard.listen();
  } catch (err) {
    guard.close();
    server.forceShutdown();
    throw new Error(
      `cannot listen on ${options.listen}: ${(err as Error).message}; stop what holds the port or choose another --listen address`,
    );
  }

  return {
    port,
    address: `${host.includes(':') ? `[${host}]` : host}:${port}`,
    health,
    async close(graceMs = 5_000) {
      health.setStatus('', 'NOT_SERVING');
      health.setStatus(SERVICE_NAME, 'NOT_SERVING');
      guard.close();
      options.rest?.close();
      closing.abort();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
