/**
 * Shared by labctl's tables and the REST API's Table answers (`as=Table`): one definition,
 * two printers. Which table each kind prints as.
 */
import type { KindName, KubeObject } from '../../api/types.js';
import { daemonSetColumns } from './daemonset.js';
import { eventColumns } from './event.js';
import { nodeColumns } from './node.js';
import {
  configMapColumns,
  secretColumns,
  serviceColumns,
  controllerRevisionColumns,
  genericColumns,
  leaseColumns,
  namespaceColumns,
  nodeMetricsColumns,
} from './others.js';
import { podColumns } from './pod.js';
import type { KindColumns } from './types.js';
import { cronJobColumns, deploymentColumns, jobColumns, replicaSetColumns } from './workloads.js';

const byKind: Partial<Record<KindName, KindColumns<never>>> = {
  Pod: podColumns,
  Node: nodeColumns,
  DaemonSet: daemonSetColumns,
  Event: eventColumns,
  Namespace: namespaceColumns,
  Lease: leaseColumns,
  ControllerRevision: controllerRevisionColumns,
  NodeMetrics: nodeMetricsColumns,
  ConfigMap: configMapColumns,
  Service: serviceColumns,
  ReplicaSet: replicaSetColumns,
  Deployment: deploymentColumns,
  Job: jobColumns,
  CronJob: cronJobColumns,
  Secret: secretColumns,
};

export function columnsFor(kind: KindName): KindColumns<KubeObject> {
  return (byKind[kind] ?? genericColumns) as KindColumns<KubeObject>;
}
