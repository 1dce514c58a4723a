/**
 * What labctl prints when something fails, kubectl's way: `Error from server (NotFound): pods
 * "x" not found`, every failing field of an invalid object on its own line, and for the
 * failures a person can fix (server unreachable, certificate mismatch, not logged in) what to
 * do next. Every failure exits with code 1.
 */
import { ApiError } from '../client/api/errors.js';
import { resolveKind } from '../client/api/kinds.js';
import { formatFieldError } from '../client/api/validation.js';
import { ConnectionError } from '../client/grpc/connection.js';

/** A failure labctl itself detected (bad flags, a missing file, a timeout): `error: <message>`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A failure whose messages were already printed (e.g. some of several names not found): exit 1 quietly. */
export class AlreadyReported extends Error {
  constructor() {
    super('already reported');
    this.name = 'AlreadyReported';
  }
}

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;

function pluralOf(kind: string | undefined): string | undefined {
  return kind ? (resolveKind(kind)?.plural ?? kind.toLowerCase()) : undefined;
}

function invalidMessage(err: ApiError): string {
  const kind = err.details.kind ?? 'object';
  const name = err.details.name ?? '';
  if (!err.causes.length) return err.message;
  const head = `The ${kind} "${name}" is invalid:`;
  if (err.causes.length === 1) return `${head} ${formatFieldError(err.causes[0])}`;
  return `${head} \n${err.causes.map((c) => `* ${formatFieldError(c)}`).join('\n')}`;
}

/** The text printed for an error (no trailing newline). */
export function formatError(err: unknown): string {
  if (err instanceof CliError) return `error: ${err.message}`;
  if (!(err instanceof ApiError)) return `error: ${err instanceof Error ? err.message : String(err)}`;
  const { kind, name } = err.details;
  switch (err.reason) {
    case 'NotFound':
      if (kind && name) return `Error from server (NotFound): ${pluralOf(kind)} "${name}" not found`;
      return `Error from server (NotFound): ${err.message}`;
    case 'AlreadyExists':
      if (kind && name)
        return `Error from server (AlreadyExists): ${pluralOf(kind)} "${name}" already exists`;
      return `Error from server (AlreadyExists): ${err.message}`;
    case 'Invalid':
      return invalidMessage(err);
    case 'Unauthorized':
      return `error: You must be logged in to the server (Unauthorized): ${err.message}\nRun \`labctl login <server> --token <token>\` with a valid token (create one on the control plane with \`kubelab token create --role admin\`).`;
    case 'Unavailable':
    case 'Timeout':
      if (err instanceof ConnectionError && err.failure === 'certificate') {
        return `error: ${err.message}\nThe server's certificate is not signed by the CA labctl trusts for it: run \`labctl login\` again, or pass the cluster's CA (<data-dir>/pki/ca.crt) with --certificate-authority.`;
      }
      // Its message says what happened and what to check (login's address is its argument).
      if (err instanceof ConnectionError) return `error: ${err.message}`;
      return `error: ${err.message}\nCheck the server address (\`labctl config get-contexts\`, --server or KUBELAB_SERVER) and that \`kubelab server\` is running there.`;
    default:
      return `Error from server (${err.reason}): ${err.message}`;
  }
}
