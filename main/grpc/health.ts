/**
 * The standard health service (grpc.health.v1.Health, from grpc-health-check), registered so
 * that a request that does not decode is answered INVALID_ARGUMENT, as our own services do,
 * rather than INTERNAL from grpc-js (which is what the package's definition leads to).
 */
import * as grpc from '@grpc/grpc-js';
import type { HealthImplementation } from 'grpc-health-check';
import { ApiError } from '../../client/api/errors.js';
import { isMalformed, toServiceError, withSafeRequests } from './wire.js';

type Handler = (
  call: { request: unknown; emit(event: 'error', err: unknown): void },
  callback?: grpc.sendUnaryData<unknown>,
) => void;

function malformedError(malformed: string): Partial<grpc.ServiceError> {
  return toServiceError(
    new ApiError(
      'BadRequest',
      `the request is not a valid grpc.health.v1.HealthCheckRequest (${malformed}); send a HealthCheckRequest, e.g. {"service": ""} for the whole server`,
    ),
  );
}

/** Each handler answers a malformed request itself, before the package's code reads it. */
function rejectingMalformed(
  implementation: grpc.UntypedServiceImplementation,
): grpc.UntypedServiceImplementation {
  const out: Record<string, Handler> = {};
  for (const [name, handler] of Object.entries(implementation as Record<string, Handler>)) {
    out[name] = (call, callback) => {
      if (!isMalformed(call.request)) return handler(call, callback);
      const err = malformedError(call.request.malformed);
      if (callback) callback(err as grpc.ServiceError);
      else call.emit('error', err);
    };
  }
  return out as unknown as grpc.UntypedServiceImplementation;
}

export function addHealthService(server: grpc.Server, health: HealthImplementation): void {
  health.addToServer({
    addService: (definition, implementation) =>
      server.addService(withSafeRequests(definition), rejectingMalformed(implementation)),
  });
}
