/**
 * authorization.k8s.io/v1 SelfSubjectAccessReview and SelfSubjectRulesReview: what
 * `kubectl auth can-i` asks. Answered by the apiserver's own authorizer (roles and the node
 * authorizer), so the answer is what the same request would meet. Nothing is stored: a review
 * is created, answered in its status, and forgotten, as on any cluster. Any authenticated
 * caller may ask about itself (Kubernetes' system:basic-user).
 */
import { invalid } from '../../client/api/errors.js';
import { required } from '../../client/api/validation.js';
import { KINDS, type KindInfo } from '../../client/api/kinds.js';
import type { Identity } from '../../client/api/local.js';
import type { ApiServer } from '../apiserver/apiserver.js';
import { READ_VERBS, type Verb } from '../apiserver/auth.js';

export const REVIEW_GROUP = 'authorization.k8s.io';
export const REVIEW_VERSION = 'v1';

export interface ReviewResource {
  resource: string;
  kind: 'SelfSubjectAccessReview' | 'SelfSubjectRulesReview';
}

/** The resources of authorization.k8s.io/v1 kubelab serves: create only, cluster-scoped. */
export const REVIEW_RESOURCES: readonly ReviewResource[] = [
  { resource: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview' },
  { resource: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview' },
];

const ALL_VERBS: readonly Verb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

/** The URLs every caller may read: discovery, health, the OpenAPI documents (system:discovery). */
const DISCOVERY_URLS = [
  '/api',
  '/api/*',
  '/apis',
  '/apis/*',
  '/healthz',
  '/livez',
  '/readyz',
  '/openapi',
  '/openapi/*',
  '/version',
  '/version/',
];

const SELF_REVIEW_RULE = {
  verbs: ['create'],
  apiGroups: [REVIEW_GROUP],
  resources: REVIEW_RESOURCES.map((r) => r.resource),
};

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** A review verb as the authorizer knows it; `deletecollection` is a delete of each. */
function authorizerVerb(verb: string): Verb | undefined {
  if (verb === 'deletecollection') return 'delete';
  return (ALL_VERBS as readonly string[]).includes(verb) ? (verb as Verb) : undefined;
}

function kindOfResource(group: string, resource: string): KindInfo | undefined {
  return KINDS.find((k) => k.resource === resource && (group === '*' || k.group === group));
}

/** A role's answer for what no kind here names (a resource kubelab does not serve, or "*"). */
function roleDecides(id: Identity, verb: string): { allowed: boolean; reason?: string } {
  if (id.role === 'admin') return { allowed: true, reason: 'the admin role may do anything' };
  if (id.role === 'viewer' && (READ_VERBS as readonly string[]).includes(verb))
    return { allowed: true, reason: 'the viewer role may get, list and watch' };
  return { allowed: false, reason: `the ${id.role} role may not ${verb} that` };
}

function accessReview(api: ApiServer, id: Identity, spec: Record<string, unknown>): Record<string, unknown> {
  const ra = spec.resourceAttributes as ResourceAttributes | undefined;
  const nra = spec.nonResourceAttributes as { path?: string; verb?: string } | undefined;
  if (!ra === !nra)
    throw invalid('SelfSubjectAccessReview', '', [
      required(
        'spec.resourceAttributes',
        'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ),
    ]);
  if (nra) {
    const verb = str(nra.verb);
    if (id.role === 'admin') return { allowed: true, reason: 'the admin role may do anything' };
    const path = str(nra.path);
    const discovery = DISCOVERY_URLS.some((u) =>
      u.endsWith('*') ? path.startsWith(u.slice(0, -1)) : path === u,
    );
    return verb === 'get' && (discovery || id.role === 'viewer')
      ? { allowed: true, reason: 'discovery and health URLs are readable by every caller' }
      : { allowed: false, reason: `the ${id.role} role may not ${verb} ${path}` };
  }
  const verb = str(ra!.verb);
  const group = str(ra!.group);
  const resource = str(ra!.resource);
  if (group === REVIEW_GROUP && REVIEW_RESOURCES.some((r) => r.resource === resource) && verb === 'create')
    return { allowed: true, reason: 'every caller may review its own access' };
  const info = kindOfResource(group, resource);
  const authVerb = authorizerVerb(verb);
  if (!info || !authVerb) return roleDecides(id, verb);
  const namespace = info.namespaced ? str(ra!.namespace) || undefined : undefined;
  const decision = api.wouldAllow(id, {
    verb: authVerb,
    info,
    namespace,
    name: str(ra!.name) || undefined,
    subresource: str(ra!.subresource) || undefined,
  });
  return decision.allowed ? { allowed: true, reason: `allowed for the ${id.role} role` } : decision;
}

type Rule = { verbs: string[]; apiGroups: string[]; resources: string[]; resourceNames?: string[] };

/**
 * The node role's rules, found by asking its authorizer about every kind and verb: allowed for
 * any object, or only for the node's own (its Node, Lease, NodeMetrics). Rules that depend on
 * the object (pods bound to the node) cannot be listed by name: the answer says it is incomplete.
 */
function nodeRules(api: ApiServer, id: Identity, namespace: string | undefined): Rule[] {
  const rules: Rule[] = [];
  for (const info of KINDS) {
    const ns = info.namespaced ? namespace : undefined;
    const any: string[] = [];
    const own: string[] = [];
    for (const verb of ALL_VERBS) {
      const ask = (name?: string, partial?: boolean) =>
        api.wouldAllow(id, { verb, info, namespace: ns, name, partial }).allowed;
      if (ask(undefined, false)) any.push(verb);
      else if (id.nodeName && ask(id.nodeName, false)) own.push(verb);
    }
    const base = { apiGroups: [info.group], resources: [info.resource] };
    if (any.length) rules.push({ verbs: any, ...base });
    if (own.length) rules.push({ verbs: own, ...base, resourceNames: [id.nodeName!] });
  }
  return rules;
}

function rulesReview(api: ApiServer, id: Identity, spec: Record<string, unknown>): Record<string, unknown> {
  const namespace = str(spec.namespace) || undefined;
  const discovery = { verbs: ['get'], nonResourceURLs: DISCOVERY_URLS };
  switch (id.role) {
    case 'admin':
      return {
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        incomplete: false,
      };
    case 'viewer':
      return {
        resourceRules: [SELF_REVIEW_RULE, { verbs: [...READ_VERBS], apiGroups: ['*'], resources: ['*'] }],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['*'] }],
        incomplete: false,
      };
    case 'node':
      return {
        resourceRules: [SELF_REVIEW_RULE, ...nodeRules(api, id, namespace)],
        nonResourceRules: [discovery],
        incomplete: true,
        evaluationError:
          'the node authorizer also decides by object: a node reads the pods bound to it and writes events about itself and its pods',
      };
    default:
      return { resourceRules: [SELF_REVIEW_RULE], nonResourceRules: [discovery], incomplete: false };
  }
}

/** POST a review: its status answered, the rest sent back as it came (Kubernetes returns 201). */
export function answerReview(
  api: ApiServer,
  id: Identity,
  review: ReviewResource,
  body: Record<string, unknown>,
): Record<string, unknown> {
  const spec = body.spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    throw invalid(review.kind, '', [required('spec', '')]);
  const status =
    review.kind === 'SelfSubjectAccessReview'
      ? accessReview(api, id, spec as Record<string, unknown>)
      : rulesReview(api, id, spec as Record<string, unknown>);
  return {
    kind: review.kind,
    apiVersion: `${REVIEW_GROUP}/${REVIEW_VERSION}`,
    metadata: { creationTimestamp: null },
    spec,
    status,
  };
}
