/**
 * Explaining a failed connection the way a person can act on it. The client words what went
 * wrong (nothing listens there, the port is not TLS, the certificate); labctl adds where the
 * address came from and where to change it. Without a CA for a server, labctl first asks what
 * answers there (without sending the token): a wrong port should not read as a missing CA.
 */
import { ApiError } from '../client/api/errors.js';
import { fetchClusterCA } from '../client/grpc/cluster.js';
import { ConnectionError } from '../client/grpc/connection.js';
import { CliError } from './errors.js';
import { MissingCaError, type ServerOrigin, type Session } from './session.js';

/** How long asking an address for its CA may take when labctl has none for it. */
const PROBE_TIMEOUT_MS = 10_000;

/** Where the address came from and how to change it. */
export function originHint(origin: ServerOrigin): string {
  if (origin.source === 'context') {
    const name = origin.contextName ?? '';
    return `The address is context "${name}"'s: change it with \`labctl config set-context ${name} --server https://<host>:<port>\`, or log in again.`;
  }
  const flag = origin.source === '--server' ? '--server' : '$KUBELAB_SERVER';
  const context = origin.contextServer
    ? ` (the current context "${origin.contextName}" uses ${origin.contextServer})`
    : '';
  return `The address came from ${flag}${context}.`;
}

/** A connection failure other than the certificate's (which formatError explains) with its origin. */
function withOrigin(err: unknown, origin: ServerOrigin): unknown {
  if (!(err instanceof ConnectionError) || err.failure === 'certificate') return err;
  return new CliError(`${err.message}\n${originHint(origin)}`);
}

/** What does answer at a server labctl has no CA for: nothing, something that is not kubelab, or kubelab. */
async function explainMissingCa(err: MissingCaError, timeoutMs: number): Promise<unknown> {
  try {
    await fetchClusterCA(err.server, timeoutMs);
  } catch (probe) {
    if (probe instanceof ConnectionError) return withOrigin(probe, err.origin);
    if (probe instanceof ApiError && probe.reason === 'Timeout') return probe;
  }
  // A kubelab server (or at least a TLS one) answers: the CA really is what is missing.
  return err;
}

/** The error to report for `err`, a verb's failure. */
export async function explainFailure(err: unknown, session: Session): Promise<unknown> {
  if (err instanceof MissingCaError)
    return explainMissingCa(err, session.requestTimeoutMs ?? PROBE_TIMEOUT_MS);
  const target = session.resolved;
  return target ? withOrigin(err, target.origin) : err;
}
