/**
 * The node authorizer (Kubernetes' Node authorizer): a node credential reads what its node
 * needs — its Node, its Lease, its NodeMetrics, the pods bound to it and their logs, the
 * Secrets and ConfigMaps those pods use, namespaces — and writes only its own objects. This decides on the request line;
 * NodeRestriction (admission) checks the objects themselves (which node a pod is bound to,
 * what an event is about).
 */
import type { Identity } from '../../client/api/local.js';
import { forbidden, type RequestAttributes } from './auth.js';
import { NODE_LEASE_NAMESPACE } from '../../client/api/wellknown.js';

/**
 * The field selector pins `field` to `value` (so a list or watch sees only that); before the
 * selector is parsed (an envelope check) it may still.
 */
function pins(attrs: RequestAttributes, field: string, value: string): boolean {
  if (attrs.partial && attrs.fieldSelector === undefined) return true;
  return (
    attrs.fieldSelector?.requirements.some(
      (r) => r.field === field && r.operator === '=' && r.value === value,
    ) ?? false
  );
}

export function nodeAuthorizer(id: Identity, attrs: RequestAttributes): void {
  // Runs for every request an agent sends (its heartbeats among them): no closures made per call.
  switch (attrs.info.kind) {
    case 'Namespace':
      if (attrs.verb === 'get' || attrs.verb === 'list' || attrs.verb === 'watch') return;
      return deny(id, attrs, 'nodes may only read namespaces');
    case 'Node':
      if (attrs.verb === 'delete') return deny(id, attrs, 'nodes may not delete Node objects');
      return ownByName(id, attrs);
    case 'NodeMetrics':
      if (attrs.verb === 'delete') return deny(id, attrs, 'nodes may not delete metrics');
      return ownByName(id, attrs);
    case 'Lease':
      if (attrs.namespace !== NODE_LEASE_NAMESPACE && !(attrs.partial && attrs.namespace === undefined))
        return deny(id, attrs, `node leases live in namespace ${NODE_LEASE_NAMESPACE}`);
      if (attrs.verb === 'delete') return deny(id, attrs, 'nodes may not delete leases');
      return ownByName(id, attrs);
    case 'Pod':
      switch (attrs.verb) {
        case 'list':
        case 'watch':
          if (!pins(attrs, 'spec.nodeName', selfOf(id)))
            deny(
              id,
              attrs,
              `nodes may only ${attrs.verb} pods with fieldSelector spec.nodeName=${selfOf(id)}`,
            );
          return;
        case 'get':
          // The pod and its log (pods/log); NodeRestriction checks the pod is bound to this node.
          if (attrs.subresource && attrs.subresource !== 'log')
            return deny(id, attrs, `nodes may not read pods/${attrs.subresource}`);
          return;
        case 'delete':
          return; // NodeRestriction checks the pod is bound to this node.
        case 'update':
        case 'patch':
          if (attrs.subresource === 'status') return;
          return deny(id, attrs, 'nodes may only write the status of pods');
        default:
          return deny(id, attrs, 'nodes may not create pods');
      }
    case 'Secret':
    case 'ConfigMap':
      // One by name; which ones (those its pods use) is checked against the pods (nodeMayReadConfig).
      if (attrs.verb === 'get') return;
      return deny(
        id,
        attrs,
        `nodes may only get ${attrs.info.plural} by name, those the pods bound to them use`,
      );
    case 'Event':
      if (attrs.verb === 'create' || attrs.verb === 'patch' || attrs.verb === 'update') return; // About itself or its pods: NodeRestriction.
      return deny(id, attrs, 'nodes may only write events');
    default:
      return deny(id, attrs, `nodes have no access to ${attrs.info.plural}`);
  }
}

function selfOf(id: Identity): string {
  return id.nodeName ?? '';
}

function deny(id: Identity, attrs: RequestAttributes, why: string): never {
  throw forbidden(id, attrs, `${why}; a node may only touch its own objects`);
}

/** Objects named after the node: its Node, its Lease, its NodeMetrics. */
function ownByName(id: Identity, attrs: RequestAttributes): void {
  const self = selfOf(id);
  if (attrs.verb === 'list' || attrs.verb === 'watch') {
    if (!pins(attrs, 'metadata.name', self))
      deny(id, attrs, `nodes may only ${attrs.verb} with fieldSelector metadata.name=${self}`);
  } else if (attrs.name !== self && !(attrs.partial && attrs.name === undefined)) {
    deny(id, attrs, `node "${self}" may not ${attrs.verb} ${attrs.info.plural} "${attrs.name ?? ''}"`);
  }
}
