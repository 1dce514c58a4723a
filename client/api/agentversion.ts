/**
 * Agent version skew, as kubectl shows kubelet versions: an agent older than its control plane
 * still works (the API it speaks is stable) but misses fixes; the GUI offers to upgrade it.
 */
import type { Node } from './types.js';

/** Set on a Node (by the GUI, or `kubectl annotate`) to have its agent upgrade itself to this version. */
export const AGENT_UPGRADE_ANNOTATION = 'kubelab.io/agent-upgrade';

/** The agent's version as it reports it ("0.1.0"), from nodeInfo. */
export function agentVersionOf(node: Node | undefined): string | undefined {
  const info = node?.status?.nodeInfo;
  if (info?.agentVersion) return info.agentVersion;
  const m = /^v?(\d+\.\d+\.\d+)/.exec(info?.kubeletVersion ?? '');
  return m?.[1];
}

/** -1, 0 or 1 as a < b, a = b, a > b for "x.y.z" versions (a pre-release suffix is ignored). */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .replace(/^v/, '')
      .split(/[-+]/)[0]
      .split('.')
      .map((n) => Number(n) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0) ? -1 : 1;
  return 0;
}

/** "older" when the node's agent is older than the control plane. */
export function agentSkew(
  node: Node | undefined,
  serverVersion: string,
): 'older' | 'newer' | 'same' | undefined {
  const v = agentVersionOf(node);
  if (!v || !serverVersion) return undefined;
  const c = compareVersions(v, serverVersion);
  return c < 0 ? 'older' : c > 0 ? 'newer' : 'same';
}
