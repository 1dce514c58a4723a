/**
 * API errors as Kubernetes' metav1.Status, with the HTTP code a Kubernetes apiserver gives the
 * same reason, so kubectl and client libraries print and handle them as they do on any cluster
 * (kubectl's "The Pod "x" is invalid: spec.containers[0].image: Required value" is built from
 * details.causes).
 */
import type { ApiError, Reason } from '../../client/api/errors.js';
import { kindInfo } from '../../client/api/kinds.js';
import type { KindName } from '../../client/api/types.js';
import { formatFieldError } from '../../client/api/validation.js';

const HTTP_CODE: Record<Reason, number> = {
  NotFound: 404,
  AlreadyExists: 409,
  Conflict: 409,
  Invalid: 422,
  BadRequest: 400,
  Expired: 410,
  Unauthorized: 401,
  Forbidden: 403,
  RequestEntityTooLarge: 413,
  TooManyRequests: 429,
  // Kubernetes has no such reason: a request that cannot be carried out as things stand.
  FailedPrecondition: 409,
  Unavailable: 503,
  Timeout: 504,
  NotImplemented: 405,
  UnsupportedMediaType: 415,
  InternalError: 500,
};

/** Kubernetes' reason strings where kubelab's differ. */
const K8S_REASON: Partial<Record<Reason, string>> = {
  RequestEntityTooLarge: 'RequestEntityTooLarge',
  FailedPrecondition: 'Conflict',
  Unavailable: 'ServiceUnavailable',
  NotImplemented: 'MethodNotAllowed',
};

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    retryAfterSeconds?: number;
    causes?: Array<{ reason: string; message: string; field: string }>;
  };
  code: number;
}

function httpCodeOf(reason: Reason): number {
  return HTTP_CODE[reason] ?? 500;
}

/** The kind as Kubernetes' details name it: the resource's plural ("pods"), with its group. */
function detailsKind(kind: string | undefined): { kind?: string; group?: string } {
  if (!kind) return {};
  try {
    const info = kindInfo(kind as KindName);
    return { kind: info.resource, group: info.group || undefined };
  } catch {
    return { kind };
  }
}

/**
 * kubectl users compare messages with a real cluster's (and scripts grep them): the reasons
 * whose Kubernetes wording is fixed get it, from the error's details.
 */
function kubernetesMessage(err: ApiError, resource: string | undefined, group: string | undefined): string {
  const name = err.details.name;
  if (!resource || name === undefined) return err.message;
  const qualified = group ? `${resource}.${group}` : resource;
  if (err.reason === 'NotFound') return `${qualified} "${name}" not found`;
  if (err.reason === 'AlreadyExists') return `${qualified} "${name}" already exists`;
  return err.message;
}

export function statusOf(err: ApiError): Status {
  const { kind, group } = detailsKind(err.details.kind);
  const causes = err.causes.map((c) => {
    const text = formatFieldError(c);
    return {
      reason: c.type,
      message: c.field && text.startsWith(`${c.field}: `) ? text.slice(c.field.length + 2) : text,
      field: c.field,
    };
  });
  const details: Status['details'] = {
    name: err.details.name,
    group,
    // Kubernetes names the kind for Invalid ("The Pod "x" is invalid"), the resource otherwise.
    kind: err.reason === 'Invalid' ? err.details.kind : kind,
    retryAfterSeconds: err.details.retryAfterSeconds,
    causes: causes.length ? causes : undefined,
  };
  const hasDetails = Object.values(details).some((v) => v !== undefined);
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    // Kubernetes' messages are one line: the causes follow the colon.
    message:
      err.reason === 'Invalid' && causes.length
        ? `${err.message.split('\n', 1)[0]} ${causes.length === 1 ? `${causes[0].field}: ${causes[0].message}` : `[${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}]`}`
        : kubernetesMessage(err, kind, group),
    reason: K8S_REASON[err.reason] ?? err.reason,
    details: hasDetails ? details : undefined,
    code: httpCodeOf(err.reason),
  };
}
