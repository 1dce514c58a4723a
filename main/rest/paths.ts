/**
 * What a Kubernetes API path and method ask for (k8s.io/apiserver's RequestInfoFactory): the
 * discovery documents, or a verb on a resource of a kind kubelab serves. Pure: the handler
 * acts on the answer.
 */
import { ApiError, echo } from '../../client/api/errors.js';
import { KINDS, type KindInfo } from '../../client/api/kinds.js';
import { REVIEW_GROUP, REVIEW_RESOURCES, REVIEW_VERSION, type ReviewResource } from './reviews.js';

export type RestVerb =
  'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export type RestRequest =
  | { type: 'version' }
  | { type: 'health'; check: 'healthz' | 'livez' | 'readyz' }
  | { type: 'openapiV2' }
  | { type: 'openapiV3'; path: string[] }
  | { type: 'legacyVersions' }
  | { type: 'groups' }
  | { type: 'group'; group: string }
  | { type: 'resources'; group: string; version: string }
  | { type: 'review'; review: ReviewResource }
  | {
      type: 'resource';
      verb: RestVerb;
      info: KindInfo;
      namespace?: string;
      name?: string;
      subresource?: string;
    };

/** Subresources of a namespace (not resources inside it): /api/v1/namespaces/NAME/status. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** The longest path segment taken apart; longer ones are refused without being copied. */
const MAX_SEGMENT = 253;

/** The groups kubelab serves, in the order discovery lists them ("" is the core group). */
export function servedGroups(): Array<{ group: string; versions: string[] }> {
  const groups = new Map<string, Set<string>>();
  for (const k of KINDS) {
    if (!groups.has(k.group)) groups.set(k.group, new Set());
    groups.get(k.group)!.add(k.version);
  }
  groups.set(REVIEW_GROUP, new Set([REVIEW_VERSION]));
  return [...groups].map(([group, versions]) => ({ group, versions: [...versions] }));
}

export function kindsOf(group: string, version: string): KindInfo[] {
  return KINDS.filter((k) => k.group === group && k.version === version);
}

function notFoundPath(path: string): ApiError {
  return new ApiError(
    'NotFound',
    `the server could not find the requested resource (${echo(path, 200)}); \`kubectl api-resources\` lists what it serves`,
  );
}

function verbOf(method: string, hasName: boolean, watch: boolean): RestVerb {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : hasName ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      throw new ApiError(
        'NotImplemented',
        `the method ${echo(method, 20)} is not supported; use GET, POST, PUT, PATCH or DELETE`,
      );
  }
}

function isTrue(v: string | null): boolean {
  return v === 'true' || v === '1';
}

/** Takes a request's method and URL (path and query) apart. */
export function parseRestRequest(method: string, url: URL): RestRequest {
  const path = url.pathname;
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.some((p) => p.length > MAX_SEGMENT)) throw notFoundPath(path);
  const segments = parts.map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      throw new ApiError('BadRequest', `the path ${echo(path, 200)} is not valid percent-encoding`);
    }
  });
  if (segments.length === 1 && segments[0] === 'version') return { type: 'version' };
  if (segments.length >= 1 && ['healthz', 'livez', 'readyz'].includes(segments[0]))
    return { type: 'health', check: segments[0] as 'healthz' | 'livez' | 'readyz' };

  if (segments[0] === 'openapi' && segments[1] === 'v2' && segments.length === 2)
    return { type: 'openapiV2' };
  if (segments[0] === 'openapi' && segments[1] === 'v3')
    return { type: 'openapiV3', path: segments.slice(2) };

  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api') {
    if (segments.length === 1) return { type: 'legacyVersions' };
    group = '';
    version = segments[1];
    rest = segments.slice(2);
  } else if (segments[0] === 'apis') {
    if (segments.length === 1) return { type: 'groups' };
    group = segments[1];
    if (segments.length === 2) {
      if (!servedGroups().some((g) => g.group === group)) throw notFoundPath(path);
      return { type: 'group', group };
    }
    version = segments[2];
    rest = segments.slice(3);
  } else {
    throw notFoundPath(path);
  }
  if (group === REVIEW_GROUP && version === REVIEW_VERSION) {
    if (!rest.length) return { type: 'resources', group, version };
    const review = REVIEW_RESOURCES.find((r) => r.resource === rest[0]);
    if (!review || rest.length > 1) throw notFoundPath(path);
    if (method !== 'POST')
      throw new ApiError(
        'NotImplemented',
        `${review.resource} can only be created (POST): a review is answered, not kept`,
      );
    return { type: 'review', review };
  }
  if (!kindsOf(group, version).length) throw notFoundPath(path);
  if (!rest.length) return { type: 'resources', group, version };

  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) rest = rest.slice(2);
    else namespace = undefined;
  }
  const [plural, name, subresource, ...extra] = rest;
  const info = kindsOf(group, version).find((k) => k.resource === plural);
  if (!info || extra.length) throw notFoundPath(path);
  if (namespace !== undefined && !info.namespaced) throw notFoundPath(path);
  const watchParam = isTrue(url.searchParams.get('watch'));
  const verb = verbOf(method, name !== undefined, watchParam && name === undefined);
  if (verb === 'create' && name !== undefined && subresource === undefined)
    throw new ApiError(
      'NotImplemented',
      `POST to a named ${info.kind} is not supported; POST to ${info.resource} to create one`,
    );
  if (watchParam && name !== undefined)
    throw new ApiError(
      'BadRequest',
      `watch a single ${info.kind} with a fieldSelector of metadata.name=NAME on the list`,
    );
  return { type: 'resource', verb, info, namespace, name, subresource };
}
