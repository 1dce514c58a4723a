/**
 * What server-side apply must know of a kind's schema beyond what a value shows: how each list
 * is merged and owned (x-kubernetes-list-type), and which structs and maps are one value
 * (x-kubernetes-map-type: atomic). Kubernetes derives these from the same patch strategies as
 * the strategic merge patch, so this starts from that table: a list merged on a key is a map
 * list, a merged list of scalars a set, every other list atomic; then the few places where
 * Kubernetes' apply schema says otherwise.
 */
import { mergeRules } from '../../../client/api/mergekeys.js';

export type ListType =
  | { type: 'atomic' }
  | { type: 'set' }
  | { type: 'map'; keys: readonly string[]; defaults?: Readonly<Record<string, unknown>> };

export interface Shape {
  /** How the list at `path` ("spec.containers[].ports") is merged and owned. */
  listType(path: string): ListType;
  /** The struct or map at `path` is replaced whole, and owned as one field. */
  isAtomic(path: string): boolean;
}

const ATOMIC: ListType = { type: 'atomic' };
const SET: ListType = { type: 'set' };

/** Container ports are keyed on port and protocol, the protocol defaulting to TCP. */
const PORTS: ListType = { type: 'map', keys: ['containerPort', 'protocol'], defaults: { protocol: 'TCP' } };

/** Lists whose apply schema differs from their patch strategy, by the path's last part. */
function override(path: string): ListType | undefined {
  if (path.endsWith('containers[].ports')) return PORTS;
  // Node addresses merge on `type` in a patch, but are atomic for apply (types repeat).
  if (path === 'status.addresses') return ATOMIC;
  return undefined;
}

/** Label selectors and node selectors are single values in Kubernetes' apply schema. */
const ATOMIC_VALUES: Record<string, readonly string[]> = {
  Pod: ['spec.nodeSelector'],
  DaemonSet: ['spec.selector', 'spec.template.spec.nodeSelector'],
  ReplicaSet: ['spec.selector', 'spec.template.spec.nodeSelector'],
  Deployment: ['spec.selector', 'spec.template.spec.nodeSelector'],
  Job: ['spec.selector', 'spec.template.spec.nodeSelector'],
  CronJob: ['spec.jobTemplate.spec.selector', 'spec.jobTemplate.spec.template.spec.nodeSelector'],
};

const shapes = new Map<string, Shape>();

export function shapeOf(kind: string): Shape {
  let shape = shapes.get(kind);
  if (!shape) {
    const rules = mergeRules(kind);
    const atomic = new Set(ATOMIC_VALUES[kind] ?? []);
    shape = {
      listType(path) {
        const special = override(path);
        if (special) return special;
        const rule = rules[path];
        if (rule === undefined) return ATOMIC;
        return rule === '' ? SET : { type: 'map', keys: [rule] };
      },
      isAtomic: (path) => atomic.has(path),
    };
    shapes.set(kind, shape);
  }
  return shape;
}
