/**
 * The controllers' tuning flags, shared by `kubelab server` and `kubelab controller-manager`,
 * with Kubernetes' names and defaults.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULT_NODE_LIFECYCLE } from '../controllers/nodelifecycle/config.js';
import { DEFAULT_POD_GC } from '../controllers/podgc/config.js';
import type { ControllerConfig } from '../controllers/types.js';

export interface ControllerFlags {
  nodeMonitorPeriod: number;
  nodeMonitorGracePeriod: number;
  nodeStartupGracePeriod: number;
  nodeEvictionRate: number;
  secondaryNodeEvictionRate: number;
  largeClusterSizeThreshold: number;
  unhealthyZoneThreshold: number;
  terminatedPodGcThreshold: number;
}

/** "5s", "40s", "1m", "500ms" → milliseconds. */
function durationMs(v: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(v.trim());
  if (!m) throw new InvalidArgumentError(`"${v}" is not a duration: use e.g. 500ms, 5s, 1m`);
  const ms = Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  if (ms <= 0) throw new InvalidArgumentError(`"${v}" must be longer than zero`);
  return ms;
}

function rate(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0)
    throw new InvalidArgumentError(`"${v}" must be a number of nodes per second, 0 or more`);
  return n;
}

/** commander argument parser for whole-number options. */
export function count(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError(`"${v}" must be a whole number, 0 or more`);
  return n;
}

function fraction(v: string): number {
  const n = Number(v);
  if (!(n > 0 && n <= 1))
    throw new InvalidArgumentError(`"${v}" must be a fraction above 0 and at most 1, e.g. 0.55`);
  return n;
}

const seconds = (ms: number) => `${ms / 1000}s`;

export function addControllerFlags(command: Command): Command {
  const d = DEFAULT_NODE_LIFECYCLE;
  const flag = <T>(flags: string, description: string, parse: (v: string) => T, value: T, shown: string) =>
    command.addOption(new Option(flags, description).argParser(parse).default(value, shown));
  flag(
    '--node-monitor-period <duration>',
    'how often node health is checked',
    durationMs,
    d.monitorPeriodMs,
    seconds(d.monitorPeriodMs),
  );
  flag(
    '--node-monitor-grace-period <duration>',
    'how long a node may go without a heartbeat before it is marked Unknown',
    durationMs,
    d.monitorGracePeriodMs,
    seconds(d.monitorGracePeriodMs),
  );
  flag(
    '--node-startup-grace-period <duration>',
    'the same for a node that never posted status',
    durationMs,
    d.startupGracePeriodMs,
    seconds(d.startupGracePeriodMs),
  );
  flag(
    '--node-eviction-rate <per-second>',
    'nodes tainted NoExecute per second in a healthy zone',
    rate,
    d.evictionRate,
    String(d.evictionRate),
  );
  flag(
    '--secondary-node-eviction-rate <per-second>',
    'nodes tainted per second in a partially disrupted zone (0 in zones of at most --large-cluster-size-threshold nodes)',
    rate,
    d.secondaryEvictionRate,
    String(d.secondaryEvictionRate),
  );
  flag(
    '--large-cluster-size-threshold <nodes>',
    'zones this size or smaller stop evicting when partially disrupted',
    count,
    d.largeClusterThreshold,
    String(d.largeClusterThreshold),
  );
  flag(
    '--unhealthy-zone-threshold <fraction>',
    'share of not-Ready nodes (at least 3) that makes a zone partially disrupted',
    fraction,
    d.unhealthyZoneThreshold,
    String(d.unhealthyZoneThreshold),
  );
  flag(
    '--terminated-pod-gc-threshold <pods>',
    'finished (Succeeded or Failed) pods kept before the oldest are deleted; 0 keeps them all',
    count,
    DEFAULT_POD_GC.terminatedPodThreshold,
    String(DEFAULT_POD_GC.terminatedPodThreshold),
  );
  return command;
}

export function controllerConfig(flags: ControllerFlags): ControllerConfig {
  if (flags.nodeMonitorGracePeriod <= flags.nodeMonitorPeriod) {
    throw new InvalidArgumentError(
      `--node-monitor-grace-period (${seconds(flags.nodeMonitorGracePeriod)}) must be longer than --node-monitor-period (${seconds(flags.nodeMonitorPeriod)}), or every node would flap`,
    );
  }
  return {
    nodeLifecycle: {
      monitorPeriodMs: flags.nodeMonitorPeriod,
      monitorGracePeriodMs: flags.nodeMonitorGracePeriod,
      startupGracePeriodMs: flags.nodeStartupGracePeriod,
      evictionRate: flags.nodeEvictionRate,
      secondaryEvictionRate: flags.secondaryNodeEvictionRate,
      largeClusterThreshold: flags.largeClusterSizeThreshold,
      unhealthyZoneThreshold: flags.unhealthyZoneThreshold,
    },
    podGC: { terminatedPodThreshold: flags.terminatedPodGcThreshold },
  };
}
