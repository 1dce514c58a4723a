/** A node's usage samples for its charts: read from NodeMetrics, in time order, bounded. */
import { describe, expect, it } from 'vitest';
import type { NodeMetrics } from '../../client/api/types.js';
import { RollingWindow, usageSample } from '../../renderer/src/node/metricsseries.js';

const metrics = (timestamp: string, usage: Record<string, string>): NodeMetrics => ({
  kind: 'NodeMetrics',
  metadata: { name: 'pi' },
  timestamp,
  usage,
});

describe('usage samples', () => {
  it('reads CPU in cores and memory and disk in bytes from the agent quantities', () => {
    expect(
      usageSample(
        metrics('2026-05-01T10:00:00Z', { cpu: '1500m', memory: '2048Ki', 'ephemeral-storage': '1Gi' }),
      ),
    ).toEqual({
      at: Date.parse('2026-05-01T10:00:00Z'),
      cpuCores: 1.5,
      memoryBytes: 2097152,
      diskBytes: 1073741824,
    });
    expect(usageSample(metrics('2026-05-01T10:00:00Z', { cpu: 'lots' }))?.cpuCores).toBeUndefined();
    expect(usageSample(metrics('', {}))).toBeUndefined();
  });
});

describe('RollingWindow', () => {
  const at = (s: number) => Date.parse('2026-05-01T10:00:00Z') + s * 1000;

  it('keeps samples in time order without repeats', () => {
    const w = new RollingWindow(60_000);
    expect(w.add({ at: at(20), cpuCores: 2 })).toBe(true);
    expect(w.add({ at: at(0), cpuCores: 0 })).toBe(true);
    expect(w.add({ at: at(10), cpuCores: 1 })).toBe(true);
    expect(w.add({ at: at(10), cpuCores: 1 })).toBe(false);
    expect(w.series('cpuCores')).toEqual([
      [at(0) / 1000, at(10) / 1000, at(20) / 1000],
      [0, 1, 2],
    ]);
    expect(w.series('memoryBytes')[1]).toEqual([null, null, null]);
  });

  it('drops what falls out of the window, and refuses what is already too old', () => {
    const w = new RollingWindow(30_000);
    for (let s = 0; s <= 60; s += 10) w.add({ at: at(s), cpuCores: s });
    expect(w.series('cpuCores')[1]).toEqual([30, 40, 50, 60]);
    expect(w.add({ at: at(5), cpuCores: 5 })).toBe(false);
    expect(w.latest()?.cpuCores).toBe(60);
  });

  it('takes all of a history, after the live sample that came first, drawing each sample once', () => {
    const w = new RollingWindow();
    const history = Array.from({ length: 12 }, (_, i) =>
      usageSample(metrics(new Date(at(i * 10)).toISOString(), { cpu: `${i * 100}m` })),
    );
    // The watch's first event (the latest sample) can arrive before the history does.
    expect(w.addAll([history[11]])).toBe(true);
    expect(w.addAll([...history, undefined])).toBe(true);
    expect(w.series('cpuCores')[1]).toEqual(history.map((s) => s!.cpuCores));
    expect(w.addAll(history)).toBe(false);
  });

  it('stays within its sample bound however fast samples come', () => {
    const w = new RollingWindow(3_600_000, 100);
    for (let i = 0; i < 1000; i++) w.add({ at: at(i), cpuCores: i });
    expect(w.size).toBe(100);
    expect(w.series('cpuCores')[1][0]).toBe(900);
  });
});
