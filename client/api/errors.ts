/**
 * Typed API errors. Each reason maps to one gRPC status code (DESIGN.md §3); the message says
 * what went wrong and what to do; `causes` lists every failing field with its path.
 */
import { formatFieldError, type FieldError } from './validation.js';

export type Reason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'BadRequest'
  | 'Expired'
  | 'Unauthorized'
  | 'Forbidden'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'FailedPrecondition'
  | 'Unavailable'
  | 'Timeout'
  | 'NotImplemented'
  | 'InternalError';

/** gRPC status codes (the numbers are fixed by the gRPC specification). */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

const codeOfReason: Record<Reason, number> = {
  NotFound: GrpcCode.NOT_FOUND,
  AlreadyExists: GrpcCode.ALREADY_EXISTS,
  Conflict: GrpcCode.ABORTED,
  Invalid: GrpcCode.INVALID_ARGUMENT,
  BadRequest: GrpcCode.INVALID_ARGUMENT,
  Expired: GrpcCode.OUT_OF_RANGE,
  Unauthorized: GrpcCode.UNAUTHENTICATED,
  Forbidden: GrpcCode.PERMISSION_DENIED,
  RequestEntityTooLarge: GrpcCode.RESOURCE_EXHAUSTED,
  TooManyRequests: GrpcCode.RESOURCE_EXHAUSTED,
  FailedPrecondition: GrpcCode.FAILED_PRECONDITION,
  Unavailable: GrpcCode.UNAVAILABLE,
  Timeout: GrpcCode.DEADLINE_EXCEEDED,
  NotImplemented: GrpcCode.UNIMPLEMENTED,
  InternalError: GrpcCode.INTERNAL,
};

const reasonOfCode = new Map<number, Reason>([
  [GrpcCode.NOT_FOUND, 'NotFound'],
  [GrpcCode.ALREADY_EXISTS, 'AlreadyExists'],
  [GrpcCode.ABORTED, 'Conflict'],
  [GrpcCode.INVALID_ARGUMENT, 'BadRequest'],
  [GrpcCode.OUT_OF_RANGE, 'Expired'],
  [GrpcCode.UNAUTHENTICATED, 'Unauthorized'],
  [GrpcCode.PERMISSION_DENIED, 'Forbidden'],
  [GrpcCode.RESOURCE_EXHAUSTED, 'TooManyRequests'],
  [GrpcCode.FAILED_PRECONDITION, 'FailedPrecondition'],
  [GrpcCode.UNAVAILABLE, 'Unavailable'],
  [GrpcCode.DEADLINE_EXCEEDED, 'Timeout'],
  [GrpcCode.UNIMPLEMENTED, 'NotImplemented'],
]);

export interface ErrorDetails {
  kind?: string;
  name?: string;
  namespace?: string;
  causes?: FieldError[];
  /** For rate limiting: when to try again. */
  retryAfterSeconds?: number;
}

export class ApiError extends Error {
  readonly code: number;
  readonly causes: FieldError[];

  constructor(
    readonly reason: Reason,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = codeOfReason[reason];
    this.causes = details.causes ?? [];
  }

  /** The JSON carried beside the gRPC status (metadata `kubelab-status-bin`). */
  toStatus(): { reason: Reason; message: string; details: ErrorDetails } {
    return { reason: this.reason, message: this.message, details: this.details };
  }

  static fromStatus(
    code: number,
    message: string,
    status?: { reason?: Reason; details?: ErrorDetails },
  ): ApiError {
    const reason = status?.reason ?? reasonOfCode.get(code) ?? 'InternalError';
    return new ApiError(reason, message, status?.details ?? {});
  }
}

export function isApiError(err: unknown, reason?: Reason): err is ApiError {
  return err instanceof ApiError && (reason === undefined || err.reason === reason);
}

export const isNotFound = (err: unknown): boolean => isApiError(err, 'NotFound');
export const isAlreadyExists = (err: unknown): boolean => isApiError(err, 'AlreadyExists');
export const isConflict = (err: unknown): boolean => isApiError(err, 'Conflict');
/** The resourceVersion is too old (compacted): list again. */
export const isExpired = (err: unknown): boolean => isApiError(err, 'Expired');

export function notFound(kind: string, name: string, namespace?: string): ApiError {
  const where = namespace ? ` in namespace "${namespace}"` : '';
  return new ApiError('NotFound', `${kind} "${name}" not found${where}`, { kind, name, namespace });
}

export function invalid(kind: string, name: string, causes: FieldError[]): ApiError {
  const lines = causes.map((c) => `  ${formatFieldError(c)}`).join('\n');
  return new ApiError('Invalid', `${kind} "${name}" is invalid:\n${lines}`, { kind, name, causes });
}
