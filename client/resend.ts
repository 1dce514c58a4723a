/**
 * When a call that failed may be sent again — to the same server after a backoff (retry.ts) or
 * to another control-plane replica (grpc/failover.ts). One rule for both, because both repeat
 * a request: a write the server may already have applied must not be repeated unless repeating
 * it cannot apply it twice.
 *
 * The rule, as client-go's with Go's HTTP transport under it: reads may always be repeated;
 * writes only when their outcome is known to be "nothing happened" — the server refused them
 * before doing anything (rate limited), or they never left this process (no connection could
 * be made) — or when a second copy could only fail (a create with a fixed name answers
 * AlreadyExists, an update pinned to a resourceVersion answers Conflict). A timeout says
 * nothing about the outcome, so only reads repeat it.
 */
import { ApiError } from './api/errors.js';
import type { WriteRequest } from './api/local.js';
import type { DeleteRequest } from './api/types.js';

/**
 * What repeating a call can do: `read` has no effect; `idempotent` cannot apply a change twice
 * (a second copy fails instead); `once` could (a generateName create, a patch, a bind).
 */
export type RetryMode = 'read' | 'idempotent' | 'once';

/**
 * How a connection failed when it never carried the request (ConnectionError.failure in
 * grpc/connection.ts): nothing answered, or the TLS handshake failed. Read structurally so that
 * this module, linked by the in-process client too, does not load gRPC.
 */
const NEVER_CONNECTED = new Set(['refused', 'not-tls', 'certificate']);

/** The request provably did not reach any server. */
export function neverSent(err: ApiError): boolean {
  const failure = (err as ApiError & { failure?: unknown }).failure;
  return err.reason === 'Unavailable' && typeof failure === 'string' && NEVER_CONNECTED.has(failure);
}

/** May a call of this mode that failed with `err` be sent again? */
export function mayResend(err: unknown, mode: RetryMode): boolean {
  if (!(err instanceof ApiError)) return false;
  // Refused before anything happened: the server said so.
  if (err.reason === 'TooManyRequests' || neverSent(err)) return true;
  if (mode === 'once') return false;
  // The server may or may not have acted; a repeat cannot act a second time.
  if (err.reason === 'Unavailable') return true;
  // A timeout may hide a write applied just now: a repeated pinned update would then answer
  // Conflict for a write that succeeded. Only reads repeat it.
  return mode === 'read' && err.reason === 'Timeout';
}

/**
 * The mode of each write of the Transport surface, from its request alone (reads are `read`):
 * what a transport that repeats calls (failover) needs, and the choices the typed client makes.
 */
export const resendModeOf = {
  /** A create with a fixed name: a second copy answers AlreadyExists. A manifest may carry generateName. */
  create: (req: WriteRequest): RetryMode => (req.object?.metadata?.name ? 'idempotent' : 'once'),
  /** An update pinned to a resourceVersion: a second copy answers Conflict. */
  update: (req: WriteRequest): RetryMode => (req.object?.metadata?.resourceVersion ? 'idempotent' : 'once'),
  /** A patch applies again to whatever is there (an `add` to a list adds twice). */
  patch: (): RetryMode => 'once',
  /** A delete with preconditions cannot delete an object of the same name created meanwhile. */
  delete: (req: DeleteRequest): RetryMode => (req.preconditions ? 'idempotent' : 'once'),
  /** Repeated after a lost answer, a bind would only report that the pod is bound. */
  bind: (): RetryMode => 'once',
} as const;
