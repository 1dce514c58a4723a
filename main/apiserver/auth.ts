/**
 * Authorization by role (DESIGN.md §7): admin may do anything, viewer may only read. The
 * node role's narrower rules live with the node authorizer.
 */
import { ApiError, echo } from '../../client/api/errors.js';
import type { KindInfo } from '../../client/api/kinds.js';
import type { Identity } from '../../client/api/local.js';
import type { FieldSelector } from '../../client/api/selectors.js';
import { nodeAuthorizer } from './nodeauth.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

export interface RequestAttributes {
  verb: Verb;
  info: KindInfo;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** For list and watch: the field selector sent (the node authorizer needs it pinned). */
  fieldSelector?: FieldSelector;
  /**
   * Deciding from a write's envelope, before its object is read: a namespace or name left
   * undefined is not known yet, and is checked once it is.
   */
  partial?: boolean;
}

export const READ_VERBS: readonly Verb[] = ['get', 'list', 'watch'];

export function forbidden(id: Identity, attrs: RequestAttributes, why: string): ApiError {
  const resource = attrs.subresource ? `${attrs.info.plural}/${attrs.subresource}` : attrs.info.plural;
  const where =
    attrs.info.namespaced && attrs.namespace
      ? ` in namespace "${echo(attrs.namespace)}"`
      : attrs.info.namespaced && !attrs.partial
        ? ' across all namespaces'
        : '';
  const target = attrs.name ? ` "${echo(attrs.name, 300)}"` : '';
  const err = new ApiError(
    'Forbidden',
    `${resource}${target} is forbidden: user "${echo(id.name)}" cannot ${attrs.verb} resource "${resource}"${where}: ${why}`,
    { kind: attrs.info.kind, name: attrs.name, namespace: attrs.namespace },
  );
  return Object.assign(err, { why });
}

/** The authorizer's reason alone (what `kubectl auth can-i` prints after "no - "). */
export function whyForbidden(err: ApiError): string {
  return (err as ApiError & { why?: string }).why ?? err.message;
}

/** Decides on the request line alone; object-level rules for nodes run in admission. */
export type Authorizer = (id: Identity, attrs: RequestAttributes) => void;

/** Why a role may not write at all, whatever the kind (undefined: it may write something). */
export function cannotWrite(role: Identity['role']): string | undefined {
  switch (role) {
    case 'viewer':
      return 'the viewer role may only get, list and watch; use an admin token to make changes';
    case 'join':
      return 'a join token can only join a node: start kubelab-agent with it';
    default:
      return undefined;
  }
}

/** The identity the apiserver writes its own objects as (the kubernetes Service). */
export const APISERVER_IDENTITY: Identity = { name: 'system:apiserver', role: 'admin' };

export const roleAuthorizer: Authorizer = (id, attrs) => {
  if (attrs.info.readOnly && !READ_VERBS.includes(attrs.verb) && id.name !== APISERVER_IDENTITY.name)
    throw forbidden(id, attrs, attrs.info.readOnly);
  switch (id.role) {
    case 'admin':
      return;
    case 'viewer':
      if (READ_VERBS.includes(attrs.verb)) return;
      throw forbidden(id, attrs, cannotWrite('viewer')!);
    case 'node':
      return nodeAuthorizer(id, attrs);
    case 'join':
      throw forbidden(id, attrs, cannotWrite('join')!);
    default:
      throw forbidden(id, attrs, 'this credential has no role the server knows');
  }
};
