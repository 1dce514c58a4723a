/**
 * Deciding a node's health from what it last reported (Kubernetes' tryUpdateNodeHealth), pure:
 * a node heartbeats through its Lease and through the heartbeat time of its Ready condition;
 * when neither moved within the grace period, Ready and the pressure conditions become Unknown
 * ("Kubelet stopped posting node status").
 */
import type { Lease, Node, NodeCondition } from '../../../client/api/types.js';
import { rfc3339 } from '../../../client/util/clock.js';
import type { NodeLifecycleConfig } from './config.js';

/** What the controller remembers of a node between checks. */
export interface NodeHealth {
  /** When a heartbeat (a new Ready heartbeat time or a lease renewal) was last seen. */
  probeTimestamp: number;
  /** When the Ready condition last changed, as seen here. */
  readyTransitionTimestamp: number;
  /** The Ready condition's times as last seen (undefined: the node never posted one). */
  ready?: { heartbeat?: string; transition?: string };
  /** The lease's renewTime as last seen. */
  leaseRenewTime?: string;
}

/** NetworkUnavailable is left alone: it is the network's to manage, not the agent's. */
export const CONDITIONS_TO_UNKNOWN = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];

export interface HealthDecision {
  /** What to remember (already as it will be once `unknownConditions` are written). */
  health: NodeHealth;
  /** What to remember if writing `unknownConditions` fails (the next check tries again). */
  healthIfWriteFails: NodeHealth;
  gracePeriodMs: number;
  /** The Ready condition as the node last reported it (a placeholder if it never did). */
  observedReady: NodeCondition;
  /** The Ready condition after this check (undefined only if the node never posted one and is in grace). */
  currentReady?: NodeCondition;
  /** The whole condition list to write because the node went silent (undefined: nothing to write). */
  unknownConditions?: NodeCondition[];
}

export function readyCondition(node: Node): NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === 'Ready');
}

function readyTimes(c: NodeCondition | undefined): NodeHealth['ready'] {
  return c ? { heartbeat: c.lastHeartbeatTime, transition: c.lastTransitionTime } : undefined;
}

function later(a: string | undefined, b: string | undefined): boolean {
  return (Date.parse(a ?? '') || 0) > (Date.parse(b ?? '') || 0);
}

/**
 * Takes in what the node shows now: a new Ready heartbeat time or a later lease renewal is a
 * heartbeat seen at `now`. Called on every check, and as soon as a lease or node changes.
 */
export function observeHeartbeats(
  node: Node,
  lease: Lease | undefined,
  saved: NodeHealth | undefined,
  now: number,
): NodeHealth {
  const reported = readyCondition(node);
  let health: NodeHealth;
  if (!reported) {
    // The agent never posted status: judge it from its creation.
    const created = Date.parse(node.metadata?.creationTimestamp ?? '') || now;
    health =
      saved && !saved.ready
        ? saved
        : saved
          ? { probeTimestamp: now, readyTransitionTimestamp: now }
          : { probeTimestamp: created, readyTransitionTimestamp: created };
  } else if (!saved?.ready) {
    // First sight of a Ready condition (or of the node, e.g. after a controller restart).
    health = {
      probeTimestamp: now,
      readyTransitionTimestamp: now,
      ready: readyTimes(reported),
      leaseRenewTime: saved?.leaseRenewTime,
    };
  } else if (saved.ready.heartbeat !== reported.lastHeartbeatTime) {
    const transitioned = saved.ready.transition !== reported.lastTransitionTime;
    health = {
      ...saved,
      probeTimestamp: now,
      readyTransitionTimestamp: transitioned ? now : saved.readyTransitionTimestamp,
      ready: readyTimes(reported),
    };
  } else {
    health = saved;
  }
  // A lease renewal is a heartbeat, even from an agent that never posted status.
  const renew = lease?.spec?.renewTime;
  if (renew && (!health.leaseRenewTime || later(renew, health.leaseRenewTime))) {
    health = { ...health, probeTimestamp: now, leaseRenewTime: renew };
  }
  return health;
}

export function decideHealth(
  node: Node,
  lease: Lease | undefined,
  saved: NodeHealth | undefined,
  now: number,
  config: NodeLifecycleConfig,
): HealthDecision {
  const reported = readyCondition(node);
  const observedReady: NodeCondition = reported ?? {
    type: 'Ready',
    status: 'Unknown',
    lastHeartbeatTime: node.metadata?.creationTimestamp,
    lastTransitionTime: node.metadata?.creationTimestamp,
  };
  // A node that never posted status gets the startup grace.
  const gracePeriodMs = reported ? config.monitorGracePeriodMs : config.startupGracePeriodMs;
  const health = observeHeartbeats(node, lease, saved, now);

  if (now <= health.probeTimestamp + gracePeriodMs) {
    return { health, healthIfWriteFails: health, gracePeriodMs, observedReady, currentReady: reported };
  }

  // Silent for longer than the grace period: Ready and the pressure conditions become Unknown.
  const at = rfc3339(now);
  const conditions = [...(node.status?.conditions ?? [])];
  for (const type of CONDITIONS_TO_UNKNOWN) {
    const i = conditions.findIndex((c) => c.type === type);
    if (i < 0) {
      conditions.push({
        type,
        status: 'Unknown',
        reason: 'NodeStatusNeverUpdated',
        message: 'Kubelet never posted node status.',
        lastHeartbeatTime: node.metadata?.creationTimestamp,
        lastTransitionTime: at,
      });
    } else if (conditions[i].status !== 'Unknown') {
      conditions[i] = {
        ...conditions[i],
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastTransitionTime: at,
      };
    }
  }
  const currentReady = conditions.find((c) => c.type === 'Ready')!;
  if (sameCondition(currentReady, reported)) {
    return { health, healthIfWriteFails: health, gracePeriodMs, observedReady, currentReady };
  }
  return {
    health: { ...health, readyTransitionTimestamp: now, ready: readyTimes(currentReady) },
    healthIfWriteFails: health,
    gracePeriodMs,
    observedReady,
    currentReady,
    unknownConditions: conditions,
  };
}

function sameCondition(a: NodeCondition, b: NodeCondition | undefined): boolean {
  return (
    !!b &&
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.lastHeartbeatTime === b.lastHeartbeatTime &&
    a.lastTransitionTime === b.lastTransitionTime
  );
}
