/**
 * The agent's settings, with Kubernetes' defaults and flag formats (--eviction-hard,
 * --system-reserved, --node-labels, --register-with-taints).
 */
import { parseQuantity } from '../client/api/quantity.js';
import type { Taint } from '../client/api/types.js';

export const AGENT_VERSION = '0.1.0';

/** A hard eviction threshold: below `value` (bytes, inodes, processes) or `percent` of capacity. */
export interface Threshold {
  value?: number;
  percent?: number;
}

export interface EvictionThresholds {
  'memory.available'?: Threshold;
  'nodefs.available'?: Threshold;
  'nodefs.inodesFree'?: Threshold;
  'pid.available'?: Threshold;
}

/**
 * Kubernetes' defaults, plus a PID threshold Kubernetes leaves unset: fewer than 5% of the
 * process limit (min of pid_max and threads-max) free means PIDPressure.
 */
export const DEFAULT_EVICTION_HARD =
  'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,pid.available<5%';

const SIGNALS = ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'pid.available'] as const;

export function parseEvictionHard(spec: string): EvictionThresholds {
  const out: EvictionThresholds = {};
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-zA-Z.]+)<(.+)$/.exec(part);
    if (!m || !(SIGNALS as readonly string[]).includes(m[1])) {
      throw new Error(
        `--eviction-hard "${part}" is not one of ${SIGNALS.map((s) => `${s}<N`).join(', ')} (N a quantity or a percentage)`,
      );
    }
    const raw = m[2];
    const pct = /^(\d+(\.\d+)?)%$/.exec(raw);
    let threshold: Threshold;
    if (pct) threshold = { percent: Number(pct[1]) };
    else {
      try {
        threshold = { value: parseQuantity(raw).value() };
      } catch {
        throw new Error(
          `--eviction-hard "${part}": "${raw}" is neither a quantity (100Mi, 5000) nor a percentage (10%)`,
        );
      }
    }
    out[m[1] as keyof EvictionThresholds] = threshold;
  }
  return out;
}

/** "cpu=500m,memory=512Mi" → { cpu: '500m', memory: '512Mi' }. */
export function parseResourceList(spec: string, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, value] = part.split('=');
    if (!name || !value || !['cpu', 'memory', 'ephemeral-storage', 'pid'].includes(name)) {
      throw new Error(
        `${flag} "${part}" must be name=quantity with name cpu, memory, ephemeral-storage or pid`,
      );
    }
    parseQuantity(value);
    out[name] = value;
  }
  return out;
}

/** "k=v,k2=v2" → labels. */
export function parseLabels(spec: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const i = part.indexOf('=');
    if (i <= 0) throw new Error(`--node-labels "${part}" must be key=value`);
    out[part.slice(0, i)] = part.slice(i + 1);
  }
  return out;
}

/** "key=value:Effect,key2:Effect" → taints. */
export function parseTaints(spec: string): Taint[] {
  const out: Taint[] = [];
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(part);
    if (!m)
      throw new Error(
        `--register-with-taints "${part}" must be key[=value]:NoSchedule|PreferNoSchedule|NoExecute`,
      );
    out.push({ key: m[1], ...(m[2] ? { value: m[2] } : {}), effect: m[3] });
  }
  return out;
}

/** "10s", "5m", "1h", "250ms" → milliseconds. */
export function parseDurationMs(v: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(v.trim());
  if (!m) throw new Error(`${flag} "${v}" is not a duration: use e.g. 10s, 5m or 1h`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
}

export interface AgentConfig {
  nodeName: string;
  labels: Record<string, string>;
  taints: Taint[];
  evictionHard: EvictionThresholds;
  /** Resources held back from pods (--system-reserved plus --kube-reserved). */
  reserved: Record<string, string>;
  maxPods: number;
  /** How often status is computed (default 10 s). */
  statusUpdateMs: number;
  /** How often status is written even when unchanged (default 5 min). */
  statusReportMs: number;
  /** How long a pressure condition stays True after its signal clears (default 5 min). */
  pressureTransitionMs: number;
  leaseDurationSeconds: number;
  /** Lease renew interval (default 10 s: a quarter of the duration). */
  leaseRenewMs: number;
  /** How often NodeMetrics are sent (default 10 s). */
  metricsMs: number;
  /** Address to publish as InternalIP instead of the first one found. */
  nodeIP?: string;
  /** --pod-user: who process containers without runAsUser run as. */
  podUser?: { uid: number; gid: number };
  /** --refuse-root-pods: no container runs as root on this node. */
  refuseRootPods?: boolean;
  /** --sync-frequency: how often mounted ConfigMaps and Secrets are read again (default 1 min). */
  syncFrequencyMs?: number;
}

export function defaultConfig(nodeName: string): AgentConfig {
  return {
    nodeName,
    labels: {},
    taints: [],
    evictionHard: parseEvictionHard(DEFAULT_EVICTION_HARD),
    reserved: {},
    maxPods: 110,
    statusUpdateMs: 10_000,
    statusReportMs: 5 * 60_000,
    pressureTransitionMs: 5 * 60_000,
    leaseDurationSeconds: 40,
    leaseRenewMs: 10_000,
    metricsMs: 10_000,
  };
}
