/** Every kind's strategy, looked up by KindInfo. Adding a kind: one line here. */
import { KINDS, type KindInfo } from '../../../client/api/kinds.js';
import type { KubeObject } from '../../../client/api/types.js';
import { configMapStrategy } from './configmap.js';
import { controllerRevisionStrategy } from './controllerrevision.js';
import { cronJobStrategy } from './cronjob.js';
import { daemonSetStrategy } from './daemonset.js';
import { deploymentStrategy } from './deployment.js';
import { eventStrategy } from './event.js';
import { jobStrategy } from './job.js';
import { leaseStrategy } from './lease.js';
import { namespaceStrategy } from './namespace.js';
import { nodeStrategy } from './node.js';
import { nodeMetricsStrategy } from './nodemetrics.js';
import { podStrategy } from './pod.js';
import { replicaSetStrategy } from './replicaset.js';
import { secretStrategy } from './secret.js';
import { serviceStrategy } from './service.js';
import type { Strategy } from './strategy.js';

const STRATEGIES: Strategy<any>[] = [
  namespaceStrategy,
  nodeStrategy,
  podStrategy,
  eventStrategy,
  leaseStrategy,
  daemonSetStrategy,
  controllerRevisionStrategy,
  nodeMetricsStrategy,
  configMapStrategy,
  serviceStrategy,
  replicaSetStrategy,
  deploymentStrategy,
  jobStrategy,
  cronJobStrategy,
  secretStrategy,
];

export class Registry {
  private readonly byKind = new Map<string, Strategy>();

  constructor() {
    for (const s of STRATEGIES) this.byKind.set(s.info.kind, s);
    for (const k of KINDS) if (!this.byKind.has(k.kind)) throw new Error(`no strategy for kind ${k.kind}`);
  }

  get(info: KindInfo): Strategy {
    return this.byKind.get(info.kind)!;
  }

  all(): Strategy[] {
    return [...this.byKind.values()];
  }

  selectableFields(s: Strategy): string[] {
    const extra = Object.keys(s.selectableFields ?? {});
    return ['metadata.name', ...(s.info.namespaced ? ['metadata.namespace'] : []), ...extra];
  }

  /** The value of a field-selector field of an object. */
  field(s: Strategy, obj: KubeObject, field: string): string | undefined {
    if (field === 'metadata.name') return obj.metadata?.name ?? '';
    if (field === 'metadata.namespace') return obj.metadata?.namespace ?? '';
    return s.selectableFields?.[field]?.(obj);
  }
}
