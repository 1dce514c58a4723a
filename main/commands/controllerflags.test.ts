import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addControllerFlags, controllerConfig, type ControllerFlags } from './controllerflags.js';

function parse(args: string[]): ControllerFlags {
  const command = addControllerFlags(
    new Command('x').exitOverride().configureOutput({ writeErr: () => undefined }),
  );
  command.parse(args, { from: 'user' });
  return command.opts<ControllerFlags>();
}

describe('controller flags', () => {
  it("default to Kubernetes' values", () => {
    expect(controllerConfig(parse([]))).toEqual({
      nodeLifecycle: {
        monitorPeriodMs: 5_000,
        monitorGracePeriodMs: 50_000,
        startupGracePeriodMs: 60_000,
        evictionRate: 0.1,
        secondaryEvictionRate: 0.01,
        largeClusterThreshold: 50,
        unhealthyZoneThreshold: 0.55,
      },
      podGC: { terminatedPodThreshold: 1000 },
    });
  });

  it('take durations, rates and thresholds', () => {
    const flags = parse([
      '--node-monitor-period',
      '1s',
      '--node-monitor-grace-period',
      '20s',
      '--node-eviction-rate',
      '0.5',
      '--unhealthy-zone-threshold',
      '0.7',
      '--terminated-pod-gc-threshold',
      '50',
    ]);
    expect(controllerConfig(flags).nodeLifecycle).toMatchObject({
      monitorPeriodMs: 1000,
      monitorGracePeriodMs: 20_000,
      evictionRate: 0.5,
      unhealthyZoneThreshold: 0.7,
    });
    expect(controllerConfig(flags).podGC).toEqual({ terminatedPodThreshold: 50 });
  });

  it('refuse nonsense with a message naming the flag', () => {
    expect(() => parse(['--node-monitor-period', 'soon'])).toThrow(
      /--node-monitor-period.*"soon" is not a duration/,
    );
    expect(() => parse(['--unhealthy-zone-threshold', '2'])).toThrow(/--unhealthy-zone-threshold.*at most 1/);
    expect(() => parse(['--node-eviction-rate', '-1'])).toThrow(/--node-eviction-rate.*0 or more/);
    expect(() => parse(['--terminated-pod-gc-threshold', 'many'])).toThrow(
      /--terminated-pod-gc-threshold.*whole number/,
    );
    expect(() => controllerConfig(parse(['--node-monitor-grace-period', '5s']))).toThrow(
      /--node-monitor-grace-period \(5s\) must be longer than --node-monitor-period \(5s\)/,
    );
  });
});
