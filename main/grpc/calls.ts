/**
 * Resources.Calls: the service's unary methods as messages on one long-lived stream.
 *
 * An agent renews its Lease and sends NodeMetrics every 10 s. As unary calls, each is a new
 * HTTP/2 stream, and Node's HTTP/2 makes every header value of it (about nine a call) an
 * external string; those a scavenge promotes are finalized one by one in the next
 * mark-compact's pause, which at 5,000 nodes they dominated. On this stream a call is one
 * message each way.
 *
 * Each call runs through the very handler its unary call would (handlers.ts): the token read
 * again per call (an expired one stops working), a seat of the caller's priority level, the
 * same errors. Its outcome goes back as a CallResult. Revoking the token ends the stream; a
 * bad call is answered, not allowed to end the stream.
 */
import * as grpc from '@grpc/grpc-js';
import { ApiError } from '../../client/api/errors.js';
import type { Identity } from '../../client/api/local.js';
import { MAX_CALLS_IN_FLIGHT, STREAMABLE_METHODS } from '../../client/grpc/callstream.js';
import { STATUS_METADATA_KEY } from '../../client/grpc/connection.js';
import type { CallRequest, CallResult } from '../../proto/gen/kubelab/v1/api.js';
import { toApiError } from '../apiserver/apiserver.js';
import type { Logger } from '../logging.js';
import { identityOf } from './handlers.js';
import { revokedError } from './revocations.js';
import type { TokenStore } from './tokens.js';
import { isMalformed, toServiceError, type Malformed } from './wire.js';

interface MethodDefinition {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: unknown): Buffer;
}

interface StreamedMethod {
  decode(bytes: Buffer): unknown;
  encode(value: unknown): Buffer;
  handler: grpc.handleUnaryCall<unknown, unknown>;
}

export interface CallsHandlerOptions {
  /** The unary handlers, by the service definition's method keys (get, update, …). */
  handlers: Record<string, unknown>;
  /** The service definition the server registers: each method's request decoder and answer encoder. */
  definition: grpc.ServiceDefinition;
  tokens: TokenStore;
  logger: Logger;
  /**
   * Aborted when the server begins to shut down: a stream then runs no new call, answers those
   * in flight and ends (Unavailable), so its client goes on with another server or waits.
   */
  closing?: AbortSignal;
}

const shuttingDown = () =>
  new ApiError(
    'Unavailable',
    'the control plane is shutting down; the call was not run: send it again when it is back',
  );

/** The longest method name an error repeats back. */
const MAX_ECHOED_METHOD = 64;

function failure(id: number, err: Partial<grpc.ServiceError>): CallResult {
  const status = err.metadata?.get(STATUS_METADATA_KEY)?.[0];
  return {
    id,
    code: err.code ?? grpc.status.INTERNAL,
    message: err.details ?? '',
    ...(Buffer.isBuffer(status) ? { status } : {}),
  };
}

export function callsHandler(
  options: CallsHandlerOptions,
): grpc.handleBidiStreamingCall<CallRequest | Malformed, CallResult> {
  const methods = new Map<string, StreamedMethod>();
  for (const [key, def] of Object.entries(
    options.definition as unknown as Record<string, MethodDefinition>,
  )) {
    const name = def.path.slice(def.path.lastIndexOf('/') + 1);
    if (!STREAMABLE_METHODS.includes(name) || def.requestStream || def.responseStream) continue;
    methods.set(name, {
      decode: (b) => def.requestDeserialize(b),
      encode: (v) => def.responseSerialize(v),
      handler: options.handlers[key] as grpc.handleUnaryCall<unknown, unknown>,
    });
  }
  const { tokens, logger, closing } = options;

  return (stream) => {
    let ended = false;
    let halfClosed = false;
    let draining = false;
    let inFlight = 0;
    let forgetRevocation = (): void => undefined;
    const drain = () => {
      draining = true;
      if (inFlight === 0) end(shuttingDown());
    };
    const end = (err?: ApiError) => {
      if (ended) return;
      ended = true;
      forgetRevocation();
      closing?.removeEventListener('abort', drain);
      if (err) stream.emit('error', toServiceError(err));
      else stream.end();
    };
    stream.on('cancelled', () => {
      ended = true;
      forgetRevocation();
      closing?.removeEventListener('abort', drain);
    });
    if (closing?.aborted) return end(shuttingDown());
    closing?.addEventListener('abort', drain, { once: true });

    let id: Identity;
    try {
      id = identityOf(stream.metadata, tokens);
    } catch (err) {
      return end(toApiError(err, logger));
    }
    forgetRevocation = tokens.revocations.whenRevoked(id, () => end(revokedError(id, 'call stream')));

    // The answer goes out; its slot frees once the connection took it, so a client that stops
    // reading answers cannot make the server hold more than MAX_CALLS_IN_FLIGHT of them.
    const refuse = (callId: number, err: ApiError) => answer(failure(callId, toServiceError(err)));
    const answer = (result: CallResult) => {
      if (ended) return;
      stream.write(result, () => {
        inFlight--;
        if (inFlight === 0 && draining) end(shuttingDown());
        else if (inFlight === 0 && halfClosed) end();
      });
    };

    stream.on('data', (msg: CallRequest | Malformed) => {
      if (ended) return;
      if (isMalformed(msg))
        return end(
          new ApiError(
            'BadRequest',
            `a CallRequest is not a valid protobuf message (${msg.malformed}); check the client's generated code matches kubelab.v1`,
          ),
        );
      const callId = msg.id ?? 0;
      inFlight++;
      if (draining) return refuse(callId, shuttingDown());
      if (inFlight > MAX_CALLS_IN_FLIGHT)
        return refuse(
          callId,
          new ApiError(
            'TooManyRequests',
            `more than ${MAX_CALLS_IN_FLIGHT} calls are in flight on this Calls stream; nothing was done: wait for an answer before sending another`,
            { retryAfterSeconds: 1 },
          ),
        );
      const method = methods.get(msg.method ?? '');
      if (!method) {
        const named = (msg.method ?? '').slice(0, MAX_ECHOED_METHOD);
        return refuse(
          callId,
          new ApiError(
            'BadRequest',
            `"${named}" is not a method a Calls stream carries; send one of ${STREAMABLE_METHODS.join(', ')} (List as a call of its own)`,
          ),
        );
      }
      const request = method.decode(Buffer.from(msg.request ?? Buffer.alloc(0)));
      // The unary handlers read a call's request and metadata, and the brake its HTTP/2
      // session under `call` (handlers.ts, sessionOf): this stream's own.
      const call = {
        request,
        metadata: stream.metadata,
        call: (stream as unknown as { call?: unknown }).call,
      };
      method.handler(call as unknown as grpc.ServerUnaryCall<unknown, unknown>, (err, value) => {
        if (err) return answer(failure(callId, err));
        try {
          answer({ id: callId, code: 0, response: method.encode(value) });
        } catch (e) {
          refuse(callId, toApiError(e, logger));
        }
      });
    });
    stream.on('end', () => {
      halfClosed = true;
      if (inFlight === 0) end();
    });
  };
}
