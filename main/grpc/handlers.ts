/**
 * The shape of every unary handler: refuse undecodable requests, authenticate, run, and turn
 * any failure into a gRPC status with an actionable message.
 */
import * as grpc from '@grpc/grpc-js';
import type { Http2Session } from 'node:http2';
import { ApiError } from '../../client/api/errors.js';
import type { Identity } from '../../client/api/local.js';
import { toApiError } from '../apiserver/apiserver.js';
import type { FlowControl } from '../apiserver/flowcontrol/dispatcher.js';
import type { Logger } from '../logging.js';
import type { IngressBrake } from './ingressbrake.js';
import type { TokenStore } from './tokens.js';
import { kindOfObjectBytes } from './writeenvelope.js';
import { isMalformed, toServiceError } from './wire.js';

export function identityOf(metadata: grpc.Metadata, tokens: TokenStore): Identity {
  const header = metadata.get('authorization')[0];
  if (header === undefined) {
    throw new ApiError(
      'Unauthorized',
      `no bearer token: send the metadata "authorization: Bearer <token>" (the admin token is in ${tokens.adminTokenPath})`,
    );
  }
  const m = /^Bearer\s+(\S+)$/i.exec(String(header));
  const id = m ? tokens.authenticate(m[1]) : undefined;
  if (!id) {
    throw new ApiError(
      'Unauthorized',
      'the bearer token is not valid (unknown, malformed or expired); get a current token from the cluster admin',
    );
  }
  return id;
}

export function rejectMalformed(request: unknown): void {
  if (isMalformed(request)) {
    throw new ApiError(
      'BadRequest',
      `the request is not a valid protobuf message (${request.malformed}); check the client's generated code matches kubelab.v1`,
    );
  }
}

export type UnaryFactory = <Req, Res>(
  fn: (id: Identity, req: Req) => Promise<Res>,
) => grpc.handleUnaryCall<Req, Res>;

/**
 * Builds unary handlers that authenticate with `tokens` (or not, for public calls); with
 * `flowControl`, an authenticated call runs in a seat of its caller's priority level.
 */
export function unaryHandlers(
  tokens: TokenStore,
  logger: Logger,
  flowControl?: FlowControl,
  brake?: IngressBrake,
): {
  authenticated: UnaryFactory;
  open: <Req, Res>(fn: (req: Req) => Promise<Res>) => grpc.handleUnaryCall<Req, Res>;
} {
  const run = <Req, Res>(
    call: grpc.ServerUnaryCall<Req, Res>,
    callback: grpc.sendUnaryData<Res>,
    body: () => Promise<Res>,
  ) => {
    (async () => {
      rejectMalformed(call.request);
      return body();
    })().then(
      (res) => callback(null, res),
      (err) => callback(toServiceError(toApiError(err, logger)) as grpc.ServiceError),
    );
  };
  return {
    authenticated: (fn) => (call, callback) =>
      run(call, callback, () => {
        const id = identityOf(call.metadata, tokens);
        if (!flowControl) return fn(id, call.request);
        const running = flowControl.run(id, () => fn(id, call.request), requestKind(call.request));
        return brake ? brake.watch(running, id, () => sessionOf(call)) : running;
      }),
    open: (fn) => (call, callback) => run(call, callback, () => fn(call.request)),
  };
}

/**
 * The HTTP/2 session a call came on. grpc-js does not expose it: it is the stream's, under the
 * interceptors' layers of the call (a test fails if a grpc-js upgrade moves it).
 */
function sessionOf(call: grpc.ServerUnaryCall<unknown, unknown>): Http2Session | undefined {
  let layer = (call as unknown as { call?: unknown }).call as
    { stream?: { session?: Http2Session }; nextCall?: unknown } | undefined;
  for (let depth = 0; layer && depth < 16; depth++) {
    if (layer.stream?.session) return layer.stream.session;
    layer = layer.nextCall as typeof layer;
  }
  return undefined;
}

/**
 * The kind a request names, for its priority level: its `kind` field, or the kind a typed
 * object's bytes carry (read from their field tags; the request is decoded later, and refused
 * then if it is malformed).
 */
function requestKind(request: unknown): string | undefined {
  const r = request as { kind?: unknown; object?: unknown };
  if (typeof r?.kind === 'string' && r.kind) return r.kind;
  if (!(r?.object instanceof Uint8Array)) return undefined;
  try {
    return kindOfObjectBytes(r.object)?.kind;
  } catch {
    return undefined;
  }
}
