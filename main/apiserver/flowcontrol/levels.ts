/**
 * API Priority and Fairness, simplified (Kubernetes' flowcontrol.apiserver.k8s.io): each request
 * a client sends belongs to a priority level with its own seats — how many of its requests run
 * at once — and its own bounded queue. A flood from people and their tools then waits, or is
 * refused with TooManyRequests and a retry hint, in its own level, while the agents' lease
 * renewals and node status reports, in theirs, go through at once.
 *
 * The levels are Kubernetes' default ones that a kubelab cluster has callers for: `node-high`
 * (Kubernetes' for system:nodes) and `global-default` (everyone else). Watches and log streams
 * are long-running and take no seat, as in Kubernetes. The in-process controllers call the
 * apiserver directly, not through a front door, and are not counted.
 */
import type { Identity } from '../../../client/api/local.js';

export type PriorityLevelName = 'node-high' | 'global-default';

export interface PriorityLevel {
  /** Requests of this level that run at once. */
  seats: number;
  /** Requests that may wait for a seat, over all of the level's flows. */
  queueLength: number;
  /** How long a request waits for a seat before it is refused. */
  queueWaitMs: number;
}

export type FlowControlConfig = Record<PriorityLevelName, PriorityLevel>;

/**
 * Seats for agents well above what a fleet's steady renewals need at once; for people, about
 * what Kubernetes' defaults give global-default (~49 of 600), enough for many tools working
 * together, few enough that their flood cannot crowd out the agents.
 */
export const DEFAULT_FLOW_CONTROL: FlowControlConfig = {
  'node-high': { seats: 256, queueLength: 4096, queueWaitMs: 15_000 },
  'global-default': { seats: 64, queueLength: 1024, queueWaitMs: 15_000 },
};

/** The level of a request, and its flow: whose requests share one fair queue. */
export function classify(id: Identity): { level: PriorityLevelName; flow: string } {
  if (id.role === 'node') return { level: 'node-high', flow: `node:${id.nodeName ?? id.name}` };
  return { level: 'global-default', flow: `user:${id.name}` };
}
