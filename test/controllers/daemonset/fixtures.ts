/** Small builders for DaemonSet decision tests. */
import type { DaemonSet, Node, Pod, PodSpec, Taint } from '../../../client/api/types.js';
import { REVISION_HASH_LABEL } from '../../../main/controllers/daemonset/util.js';

export function node(name: string, opts: { labels?: Record<string, string>; taints?: Taint[] } = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...opts.labels } },
    spec: { taints: opts.taints },
    status: { allocatable: { cpu: '1', memory: '1Gi', pods: '110' } },
  };
}

export function ds(
  spec: Partial<PodSpec> = {},
  extra: Partial<NonNullable<DaemonSet['spec']>> = {},
): DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'default', uid: 'ds-uid', generation: 1 },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: {
        metadata: { labels: { app: 'agent' } },
        spec: { containers: [{ name: 'c', image: 'x' }], ...spec },
      },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      ...extra,
    },
    status: { observedGeneration: 1 },
  };
}

let seq = 0;
export function pod(
  nodeName: string,
  opts: {
    phase?: string;
    ready?: boolean;
    hash?: string;
    created?: string;
    deleting?: boolean;
    readySince?: string;
    name?: string;
  } = {},
): Pod {
  seq++;
  const ready = opts.ready ?? (opts.phase ?? 'Running') === 'Running';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: opts.name ?? `agent-${seq}`,
      namespace: 'default',
      uid: `pod-${seq}`,
      creationTimestamp: opts.created ?? `2026-01-01T00:00:${String(seq % 60).padStart(2, '0')}Z`,
      labels: { app: 'agent', [REVISION_HASH_LABEL]: opts.hash ?? 'new' },
      ...(opts.deleting ? { deletionTimestamp: '2026-01-01T01:00:00Z' } : {}),
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true },
      ],
    },
    spec: { nodeName, containers: [{ name: 'c', image: 'x' }] },
    status: {
      phase: opts.phase ?? 'Running',
      conditions: [
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          lastTransitionTime: opts.readySince ?? '2026-01-01T00:00:00Z',
        },
      ],
    },
  };
}
