/**
 * NodeRestriction (Kubernetes' admission plugin): what a node credential may write, checked
 * against the objects themselves — on an update, against the stored object as well as the new
 * one. A node may change its own Node's status and its labels outside the reserved prefixes
 * (never its spec once registered), its own Lease and NodeMetrics, the status of pods bound to
 * it, delete those pods once stopped, and record events about itself and its pods.
 */
import { ApiError } from '../../client/api/errors.js';
import { kindInfo, type KindInfo } from '../../client/api/kinds.js';
import type { Identity } from '../../client/api/local.js';
import type { Event, KubeObject, Node, Pod } from '../../client/api/types.js';
import { deepEqual } from '../../client/util/objects.js';
import { podReferences } from '../../client/api/podrefs.js';
import { NODE_LEASE_NAMESPACE } from '../../client/api/wellknown.js';
import type { AdmissionContext } from './admission.js';

/** Labels in the kubernetes.io and k8s.io namespaces that a node may set on itself. */
const ALLOWED_RESERVED_LABELS = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
]);
const ALLOWED_RESERVED_PREFIXES = ['kubelet.kubernetes.io/', 'node.kubernetes.io/'];

/** A label a node may set on its own Node. */
export function isNodeSettableLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return true;
  const prefix = key.slice(0, slash);
  const reserved =
    prefix === 'kubernetes.io' ||
    prefix.endsWith('.kubernetes.io') ||
    prefix === 'k8s.io' ||
    prefix.endsWith('.k8s.io');
  if (!reserved) return true;
  if (prefix === 'node-restriction.kubernetes.io') return false;
  return ALLOWED_RESERVED_LABELS.has(key) || ALLOWED_RESERVED_PREFIXES.some((p) => key.startsWith(p));
}

function denied(id: Identity, what: string): ApiError {
  return new ApiError(
    'Forbidden',
    `node "${id.nodeName}" may not ${what}; a node may only touch its own objects`,
  );
}

function labelChanges(before: Record<string, string> = {}, after: Record<string, string> = {}): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => before[k] !== after[k]);
}

async function podBoundHere(
  ctx: AdmissionContext,
  namespace: string | undefined,
  name: string,
): Promise<boolean> {
  const pod = (await ctx.lookup(kindInfo('Pod'), namespace, name)) as Pod | undefined;
  return pod?.spec?.nodeName === ctx.id.nodeName;
}

/** An object named in an error: at most a line of it, since admission runs before validation. */
function shown(value: string | undefined): string {
  const text = value ?? '';
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

export async function nodeRestriction(ctx: AdmissionContext): Promise<void> {
  if (ctx.id.role !== 'node') return;
  if (!ctx.id.nodeName)
    throw denied(ctx.id, 'write anything: its credential names no node; join the node again');
  // An update (or patch, or status write) must leave the object the node's both before and
  // after: checking only the new one would let node A rewrite an event about node B into one
  // about itself, and checking only the old one would let it hand its objects to B. Kubernetes'
  // NodeRestriction checks the stored pod on status writes the same way.
  const states = ctx.op === 'update' && ctx.old ? [ctx.old, ctx.object] : [ctx.object];
  for (const object of states) await requireOwn(ctx, object);
  if (ctx.info.kind === 'Node' && ctx.op !== 'delete') restrictNodeChanges(ctx);
}

/** The object is one the node may write: its own Node, Lease or NodeMetrics, a pod bound to it, an event about either. */
async function requireOwn(ctx: AdmissionContext, object: KubeObject): Promise<void> {
  const { id, op } = ctx;
  const self = id.nodeName;
  const name = object.metadata?.name;
  switch (ctx.info.kind) {
    case 'Node':
    case 'NodeMetrics':
      if (name !== self) throw denied(id, `${op} ${ctx.info.kind} "${shown(name)}"`);
      return;
    case 'Lease':
      if (name !== self || object.metadata?.namespace !== NODE_LEASE_NAMESPACE)
        throw denied(id, `${op} Lease ${shown(object.metadata?.namespace)}/${shown(name)}`);
      return;
    case 'Pod': {
      const pod = object as Pod;
      if (pod.spec?.nodeName !== self)
        throw denied(
          id,
          `${op} pod ${shown(pod.metadata?.namespace)}/${shown(name)}, which is not bound to it`,
        );
      return;
    }
    case 'Event': {
      const ref = (object as Event).involvedObject ?? {};
      if (ref.kind === 'Node' && ref.name === self) return;
      if (ref.kind === 'Pod' && ref.name && (await podBoundHere(ctx, ref.namespace, ref.name))) return;
      const what = ctx.old && object === ctx.old ? `${op} an event that is` : 'record events';
      throw denied(id, `${what} about ${shown(ref.kind) || '?'} "${shown(ref.name)}"`);
    }
    default:
      return;
  }
}

/** What a node may not change on its own Node: reserved labels, and its spec once registered. */
function restrictNodeChanges(ctx: AdmissionContext): void {
  const { id, op } = ctx;
  const node = ctx.object as Node;
  const old = ctx.old as Node | undefined;
  const changed = labelChanges(old?.metadata?.labels, node.metadata?.labels).filter(
    (k) => !isNodeSettableLabel(k),
  );
  if (changed.length) throw denied(id, `set the reserved labels ${changed.map(shown).join(', ')}`);
  if (op === 'update' && ctx.subresource !== 'status' && !deepEqual(old?.spec, node.spec)) {
    throw denied(id, 'change its own spec (taints, unschedulable) after registering; an admin does that');
  }
}

/**
 * Reads a node may make of a single object: a pod, or its log (pods/log), only when the pod
 * is bound to it.
 */
export function nodeCanRead(id: Identity, info: KindInfo, obj: KubeObject, subresource?: 'log'): void {
  if (id.role !== 'node' || info.kind !== 'Pod') return;
  const pod = obj as Pod;
  if (pod.spec?.nodeName === id.nodeName) return;
  const key = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  if (subresource === 'log')
    throw new ApiError(
      'Forbidden',
      `node "${id.nodeName}" may not read the logs of pod ${key}, which is not bound to it: a node credential may read (get pods/log) only the logs of pods bound to its own node; use an admin or viewer token`,
      { kind: 'Pod', name: pod.metadata?.name, namespace: pod.metadata?.namespace },
    );
  throw denied(id, `read pod ${key}, which is not bound to it`);
}

/**
 * A node may get a Secret or ConfigMap only when a pod bound to it uses it (the Node
 * authorizer's graph), checked before the object is read, so a node cannot even learn whether
 * others exist. `boundPods` are the namespace's pods on that node.
 */
export function nodeMayReadConfig(
  id: Identity,
  info: KindInfo,
  namespace: string,
  name: string,
  boundPods: Pod[],
): void {
  if (id.role !== 'node' || (info.kind !== 'Secret' && info.kind !== 'ConfigMap')) return;
  const used = boundPods.some((p) => {
    const refs = podReferences(p);
    return (info.kind === 'Secret' ? refs.secrets : refs.configMaps).has(name);
  });
  if (!used) throw denied(id, `get ${info.singular} ${namespace}/${name}: no pod bound to it uses it`);
}
