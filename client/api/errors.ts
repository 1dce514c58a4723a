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
  | 'UnsupportedMediaType'
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
  UnsupportedMediaType: GrpcCode.INVALID_ARGUMENT,
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

/**
 * How much of a client's input an error may repeat. A request naming a megabyte-long kind,
 * name or selector must not get a megabyte back (over gRPC the status travels in a trailer,
 * which has to stay small), and a document with thousands of faults gets the first of them.
 */
const MAX_MESSAGE_CHARS = 2000;
const MAX_CAUSES = 50;
const MAX_CAUSE_FIELD_CHARS = 256;
const MAX_CAUSE_MESSAGE_CHARS = 400;
const MAX_CAUSE_VALUE_CHARS = 200;
/** Longer than any Kubernetes name (253), so names are repeated whole. */
const MAX_NAME_CHARS = 300;

/** `s`, or its start and how much was left out when it is longer than `max`. */
export function echo(s: string, max = 100): string {
  return s.length <= max ? s : `${s.slice(0, max)}…(${s.length - max} more characters)`;
}

function boundedValue(value: unknown): unknown {
  if (typeof value === 'string') return echo(value, MAX_CAUSE_VALUE_CHARS);
  if (typeof value !== 'object' || value === null) return value;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return '(a value that cannot be shown)';
  }
  return json === undefined || json.length <= MAX_CAUSE_VALUE_CHARS
    ? value
    : echo(json, MAX_CAUSE_VALUE_CHARS);
}

function boundedCause(c: FieldError): FieldError {
  const out: FieldError = {
    field: echo(c.field ?? '', MAX_CAUSE_FIELD_CHARS),
    type: c.type,
    message: echo(c.message ?? '', MAX_CAUSE_MESSAGE_CHARS),
  };
  if (Object.prototype.hasOwnProperty.call(c, 'value')) out.value = boundedValue(c.value);
  return out;
}

function boundedDetails(details: ErrorDetails): ErrorDetails {
  const out: ErrorDetails = { ...details };
  for (const k of ['kind', 'name', 'namespace'] as const) {
    const v = out[k];
    if (typeof v === 'string') out[k] = echo(v, MAX_NAME_CHARS);
    else if (v !== undefined) delete out[k];
  }
  if (details.causes) out.causes = details.causes.slice(0, MAX_CAUSES).map(boundedCause);
  return out;
}

export class ApiError extends Error {
  readonly code: number;
  readonly causes: FieldError[];
  readonly details: ErrorDetails;

  constructor(
    readonly reason: Reason,
    message: string,
    details: ErrorDetails = {},
  ) {
    super(echo(String(message), MAX_MESSAGE_CHARS));
    this.name = 'ApiError';
    this.code = codeOfReason[reason] ?? GrpcCode.INTERNAL;
    this.details = boundedDetails(details);
    this.causes = this.details.causes ?? [];
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
  const where = namespace ? ` in namespace "${echo(namespace)}"` : '';
  return new ApiError('NotFound', `${echo(kind)} "${echo(name, MAX_NAME_CHARS)}" not found${where}`, {
    kind,
    name,
    namespace,
  });
}

/** Lines of causes the message lists; every cause (up to MAX_CAUSES) is in `causes`. */
const MAX_CAUSE_LINES = 20;

export function invalid(kind: string, name: string, causes: FieldError[]): ApiError {
  const shown = causes.slice(0, MAX_CAUSE_LINES).map((c) => `  ${formatFieldError(boundedCause(c))}`);
  if (causes.length > MAX_CAUSE_LINES) shown.push(`  … and ${causes.length - MAX_CAUSE_LINES} more`);
  return new ApiError(
    'Invalid',
    `${echo(kind)} "${echo(name, MAX_NAME_CHARS)}" is invalid:\n${shown.join('\n')}`,
    {
      kind,
      name,
      causes,
    },
  );
}
