/**
 * ReplicaSets (NAME DESIRED CURRENT READY AGE) and Deployments (NAME READY UP-TO-DATE
 * AVAILABLE AGE), as kubectl's printReplicaSet and printDeployment; wide adds CONTAINERS
 * IMAGES SELECTOR.
 */
import type { Deployment, PodTemplateSpec, ReplicaSet } from '../../api/types.js';
import type { LabelSelector } from '../../../proto/gen/kubelab/v1/meta.js';
import { ageOf } from '../age.js';
import { selectorText } from './daemonset.js';
import { appendedHeaders, orNone, type KindColumns } from './types.js';

const WIDE = ['CONTAINERS', 'IMAGES', 'SELECTOR'];

function wideCells(template: PodTemplateSpec | undefined, selector: LabelSelector | undefined): string[] {
  const containers = template?.spec?.containers ?? [];
  return [
    containers.map((c) => c.name ?? '').join(','),
    containers.map((c) => c.image || '<none>').join(','),
    orNone(selectorText(selector)),
  ];
}

export const replicaSetColumns: KindColumns<ReplicaSet> = {
  headers: appendedHeaders(['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE'], WIDE),
  cells(rs, now, wide) {
    const cells = [
      rs.metadata?.name ?? '',
      String(rs.spec?.replicas ?? 0),
      String(rs.status?.replicas ?? 0),
      String(rs.status?.readyReplicas ?? 0),
      ageOf(rs.metadata?.creationTimestamp, now),
    ];
    return wide ? [...cells, ...wideCells(rs.spec?.template, rs.spec?.selector)] : cells;
  },
};

export const deploymentColumns: KindColumns<Deployment> = {
  headers: appendedHeaders(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE'], WIDE),
  cells(d, now, wide) {
    const s = d.status ?? {};
    const cells = [
      d.metadata?.name ?? '',
      `${s.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`,
      String(s.updatedReplicas ?? 0),
      String(s.availableReplicas ?? 0),
      ageOf(d.metadata?.creationTimestamp, now),
    ];
    return wide ? [...cells, ...wideCells(d.spec?.template, d.spec?.selector)] : cells;
  },
};
