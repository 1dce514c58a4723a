/**
 * What the tray icon says about the cluster: how many nodes are Ready out of how many, as a
 * tooltip and one of four icons.
 */
import type { Node } from '../../client/api/types.js';

/** idle: no answer yet, or no nodes; healthy: all Ready; degraded: some; down: none. */
export type TrayLevel = 'idle' | 'healthy' | 'degraded' | 'down';

export interface TrayHealth {
  level: TrayLevel;
  tooltip: string;
}

/** Kubernetes' rule: a node is Ready when its Ready condition is True (Unknown is not). */
export function isNodeReady(node: Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export interface ReadyNodes {
  ready: number;
  total: number;
}

export function countReady(nodes: readonly Node[]): ReadyNodes {
  let ready = 0;
  for (const node of nodes) if (isNodeReady(node)) ready++;
  return { ready, total: nodes.length };
}

/** The tray's state; `synced` is false until the first list of nodes has arrived. */
export function trayHealth({ ready, total }: ReadyNodes, synced: boolean): TrayHealth {
  if (!synced) return { level: 'idle', tooltip: 'kubelab — starting the control plane…' };
  if (total === 0) return { level: 'idle', tooltip: 'kubelab — no nodes yet: add one from the window' };
  const level: TrayLevel = ready === total ? 'healthy' : ready === 0 ? 'down' : 'degraded';
  return { level, tooltip: `kubelab — ${ready}/${total} nodes Ready` };
}
