/**
 * What the agent knows of each container of a pod it runs: the instance running now, how the
 * last one ended, why it is waiting, and whether its probes pass. The pod worker updates
 * these; the status is computed from them.
 */
import type { ContainerExit, RunningContainer } from '../runtime/types.js';

export interface ContainerRecord {
  name: string;
  /** Times it was started again after ending (Kubernetes' restartCount). */
  restartCount: number;
  /** The instance running now. */
  running?: RunningContainer;
  /** How the previous instance ended (or the current one, once it ended). */
  lastExit?: { exit: ContainerExit; startedAt: number; containerID: string };
  /** Why it is not running (ContainerCreating, CrashLoopBackOff, …). */
  waiting?: { reason: string; message?: string };
  /** Its readiness probe passes (or it has none) while running. */
  ready: boolean;
  /** Its startup probe passed (or it has none) while running. */
  started: boolean;
  /** Not to be started again before this (crash-loop backoff). */
  backoffUntil?: number;
}

export function newContainerRecord(name: string): ContainerRecord {
  return { name, restartCount: 0, ready: false, started: false, waiting: { reason: 'ContainerCreating' } };
}

export function containerID(c: RunningContainer, scheme: string): string {
  return `${scheme}://${c.id}`;
}
