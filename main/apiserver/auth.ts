/**
 * Authorization by role (DESIGN.md §7): admin may do anything, viewer may only read. The
 * node role's narrower rules live with the node authorizer.
 */
import { ApiError } from '../../client/api/errors.js';
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
}

export const READ_VERBS: readonly Verb[] = ['get', 'list', 'watch'];

export function forbidden(id: Identity, attrs: RequestAttributes, why: string): ApiError {
  const resource = attrs.subresource ? `${attrs.info.plural}/${attrs.subresource}` : attrs.info.plural;
  const where =
    attrs.info.namespaced && attrs.namespace
      ? ` in namespace "${attrs.namespace}"`
      : attrs.info.namespaced
        ? ' across all namespaces'
        : '';
  const target = attrs.name ? ` "${attrs.name}"` : '';
  return new ApiError(
    'Forbidden',
    `${resource}${target} is forbidden: user "${id.name}" cannot ${attrs.verb} resource "${resource}"${where}: ${why}`,
    { kind: attrs.info.kind, name: attrs.name, namespace: attrs.namespace },
  );
}

/** Decides on the request line alone; object-level rules for nodes run in admission. */
export type Authorizer = (id: Identity, attrs: RequestAttributes) => void;

export const roleAuthorizer: Authorizer = (id, attrs) => {
  switch (id.role) {
    case 'admin':
      return;
    case 'viewer':
      if (READ_VERBS.includes(attrs.verb)) return;
      throw forbidden(
        id,
        attrs,
        'the viewer role may only get, list and watch; use an admin token to make changes',
      );
    case 'node':
      return nodeAuthorizer(id, attrs);
    case 'join':
      throw forbidden(id, attrs, 'a join token can only join a node: start kubelab-agent with it');
  }
};
