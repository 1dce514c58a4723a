/**
 * API Priority and Fairness, simplified (Kubernetes' flowcontrol.apiserver.k8s.io): each request
 * a client sends belongs to a priority level with its own seats — how many of its requests run
 * at once — and its own bounded queue. A flood from people and their tools then waits, or is
 * refused with TooManyRequests and a retry hint, in its own level, while the agents' lease
 * renewals and node status reports, in theirs, go through at once.
 *
 * The levels are Kubernetes' default ones that a kubelab cluster has callers for: `node-high`
 * for the agents' heartbeats — their Node and its Lease (Kubernetes' system-node-high flow
 * schema) —, `system` for the rest of what agents send: pod status, events (its system-nodes
 * schema), and `global-default` for everyone else. A fleet starting thousands of pods at once
 * then queues in `system` while its lease renewals keep their own seats — and as seats bound how
 * many requests run, not how much of the one event loop they take, `system` also gives up seats
 * while the heartbeats are slow, so they keep the loop first. `workload-high` holds the in-process
 * controllers and scheduler, which share one user (Kubernetes' kube-controller-manager flow
 * schema): without a seat of their own they created and bound a 10,000-node rollout's pods as
 * fast as the loop turned, and the heartbeats waited behind them; they yield to `node-high`
 * too. Watches and log streams are long-running and take no seat, as in Kubernetes.
 */
import type { Identity } from '../../../client/api/local.js';
import { HEARTBEAT_KINDS } from '../../../client/api/wellknown.js';

export type PriorityLevelName = 'node-high' | 'system' | 'workload-high' | 'global-default';

export interface PriorityLevel {
  /** Requests of this level that run at once. */
  seats: number;
  /** Requests that may wait for a seat, over all of the level's flows. */
  queueLength: number;
  /** How long a request waits for a seat before it is refused. */
  queueWaitMs: number;
  /** Gives up seats while the event loop lags (shedding.ts): for the lowest level, people's. */
  shedUnderLoad?: boolean;
  /**
   * Gives up seats while that level's requests are slow or refused (shedding.ts): the agents'
   * pod status and metrics, and the controllers' writes, make way for the heartbeats.
   */
  yieldsTo?: PriorityLevelName;
}

export type FlowControlConfig = Record<PriorityLevelName, PriorityLevel>;

/**
 * Seats for agents well above what a fleet's steady renewals need at once; for people, about
 * what Kubernetes' defaults give global-default (~49 of 600), enough for many tools working
 * together, few enough that their flood cannot crowd out the agents.
 */
export const DEFAULT_FLOW_CONTROL: FlowControlConfig = {
  'node-high': { seats: 256, queueLength: 4096, queueWaitMs: 15_000 },
  // As many seats as node-high: with 64, a fleet starting its pods was held to a few hundred
  // status writes a second by the store's latency, not by the server's capacity.
  system: { seats: 256, queueLength: 4096, queueWaitMs: 15_000, yieldsTo: 'node-high' },
  // As many as a DaemonSet's slow start sends at once (Kubernetes' burstReplicas, 250): a quick
  // server never holds the controllers back; a server whose heartbeats lag does.
  'workload-high': { seats: 256, queueLength: 4096, queueWaitMs: 15_000, yieldsTo: 'node-high' },
  'global-default': { seats: 64, queueLength: 1024, queueWaitMs: 15_000, shedUnderLoad: true },
};

/** The user of the in-process controllers and scheduler (main/controlplane.ts's SYSTEM_IDENTITY). */
export const CONTROLLER_MANAGER_USER = 'system:kube-controller-manager';

/**
 * The level of a request, and its flow: whose requests share one fair queue. `kind` is what
 * the request names (undefined when it names none).
 */
export function classify(id: Identity, kind?: string): { level: PriorityLevelName; flow: string } {
  if (id.role === 'node')
    return {
      level: kind && HEARTBEAT_KINDS.has(kind) ? 'node-high' : 'system',
      flow: `node:${id.nodeName ?? id.name}`,
    };
  if (id.name === CONTROLLER_MANAGER_USER) return { level: 'workload-high', flow: `user:${id.name}` };
  return { level: 'global-default', flow: `user:${id.name}` };
}
