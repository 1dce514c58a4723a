/**
 * The API types every participant links: generated from proto/kubelab/v1 (their JSON form is
 * the Kubernetes JSON), re-exported under their Kubernetes names.
 */
import type { ApiObject } from '../../proto/gen/kubelab/v1/api.js';
import type {
  ControllerRevision,
  DaemonSet,
  Deployment,
  ReplicaSet,
} from '../../proto/gen/kubelab/v1/apps.js';
import type { CronJob, Job } from '../../proto/gen/kubelab/v1/batch.js';
import type { Lease } from '../../proto/gen/kubelab/v1/coordination.js';
import type {
  ConfigMap,
  Event,
  Namespace,
  Node,
  Pod,
  Secret,
  Service,
} from '../../proto/gen/kubelab/v1/core.js';
import type { NodeMetrics } from '../../proto/gen/kubelab/v1/metrics.js';
import type { ObjectMeta } from '../../proto/gen/kubelab/v1/meta.js';

export type * from '../../proto/gen/types.js';

/** Kind name → object type. Adding a kind: one line here, one in kinds.ts, one in api.proto. */
export interface KindMap {
  Namespace: Namespace;
  Node: Node;
  Pod: Pod;
  Event: Event;
  Lease: Lease;
  DaemonSet: DaemonSet;
  ControllerRevision: ControllerRevision;
  NodeMetrics: NodeMetrics;
  ConfigMap: ConfigMap;
  Service: Service;
  ReplicaSet: ReplicaSet;
  Deployment: Deployment;
  Job: Job;
  CronJob: CronJob;
  Secret: Secret;
}

export type KindName = keyof KindMap;

/** Any object of a known kind. */
export type KubeObject = KindMap[KindName];

/** The fields every object has; what generic code (caches, controllers, GC) relies on. */
export interface ObjectLike {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent<T = KubeObject> {
  type: WatchEventType;
  object: T;
}

export interface ListResult<T = KubeObject> {
  items: T[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** Field names of the `ApiObject` oneof, one per kind. */
export type ApiObjectField = Exclude<keyof ApiObject, '_unknownFields'>;
