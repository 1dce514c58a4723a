/**
 * What a request's query string says (dryRun, whole numbers, flags) and the DeleteOptions a
 * delete or an eviction carries in its body or its query, checked before anything acts on them.
 */
import { ApiError, echo } from '../../client/api/errors.js';
import type { DeleteRequest } from '../../client/api/types.js';

export function dryRunOf(url: URL): boolean {
  const values = url.searchParams.getAll('dryRun');
  for (const v of values)
    if (v !== 'All')
      throw new ApiError('BadRequest', `dryRun "${echo(v, 40)}" is not supported; the only value is All`);
  return values.length > 0;
}

export function intParam(url: URL, name: string): number | undefined {
  const v = url.searchParams.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d{1,12}$/.test(v))
    throw new ApiError('BadRequest', `${name} "${echo(v, 40)}" is not a whole number`);
  return Number(v);
}

export function param(url: URL, name: string): string | undefined {
  return url.searchParams.get(name) ?? undefined;
}

/** DeleteOptions from the body (kubectl sends them there) and the query (curl users do). */
export function deleteOptions(options: Record<string, unknown>, url: URL): Partial<DeleteRequest> {
  const grace = options.gracePeriodSeconds ?? intParam(url, 'gracePeriodSeconds');
  if (grace !== undefined && (typeof grace !== 'number' || !Number.isInteger(grace)))
    throw new ApiError('BadRequest', 'gracePeriodSeconds must be a whole number of seconds');
  const propagation = options.propagationPolicy ?? param(url, 'propagationPolicy');
  if (propagation !== undefined && typeof propagation !== 'string')
    throw new ApiError('BadRequest', 'propagationPolicy must be Background, Foreground or Orphan');
  const pre = options.preconditions as { uid?: unknown; resourceVersion?: unknown } | undefined;
  if (pre !== undefined && (typeof pre !== 'object' || pre === null))
    throw new ApiError('BadRequest', 'preconditions must be an object with uid and/or resourceVersion');
  const dryRun = options.dryRun;
  if (dryRun !== undefined && !(Array.isArray(dryRun) && dryRun.every((d) => d === 'All')))
    throw new ApiError('BadRequest', 'dryRun must be ["All"] or left out');
  return {
    gracePeriodSeconds: grace as number | undefined,
    propagationPolicy: propagation as string | undefined,
    preconditions: pre
      ? {
          uid: typeof pre.uid === 'string' ? pre.uid : undefined,
          resourceVersion: typeof pre.resourceVersion === 'string' ? pre.resourceVersion : undefined,
        }
      : undefined,
    dryRun: Array.isArray(dryRun) && dryRun.length > 0,
  };
}

/** A boolean query parameter: true or 1. */
export function flag(url: URL, name: string): boolean {
  const v = url.searchParams.get(name);
  return v === 'true' || v === '1';
}

/**
 * fieldValidation: what to do with fields the schema does not know. Kubernetes' own default
 * (no parameter) is Warn; kubelab's is Strict, as on its gRPC API — a typo is refused by name
 * rather than lost. kubectl sends Strict unless told `--validate=warn` or `--validate=false`.
 */
export function fieldValidationOf(url: URL): 'Strict' | 'Warn' | 'Ignore' {
  const v = url.searchParams.get('fieldValidation');
  if (v === null || v === '' || v === 'Strict') return 'Strict';
  if (v === 'Warn' || v === 'Ignore') return v;
  throw new ApiError('BadRequest', `fieldValidation "${echo(v, 40)}" is not one of Strict, Warn or Ignore`);
}

/**
 * The manager a write is recorded for (metadata.managedFields): the fieldManager parameter,
 * else — as Kubernetes does — the client's User-Agent up to its first "/" ("kubectl",
 * "helm"), else the server names it after the credential.
 */
export function fieldManagerOf(url: URL, userAgent: string | undefined): string | undefined {
  const named = url.searchParams.get('fieldManager');
  if (named) return named;
  const prefix = userAgent?.split('/', 1)[0]?.trim();
  return prefix ? prefix.slice(0, 128) : undefined;
}
