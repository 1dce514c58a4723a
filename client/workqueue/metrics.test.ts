import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.js';
import { prometheusQueueMetrics } from './metrics.js';
import { Queue } from './queue.js';
import { ItemExponentialFailureRateLimiter } from './ratelimiter.js';
import { RateLimitingQueue } from './ratelimiting.js';

/** One sample of a metric in `registry`, found by metric (or histogram series) name and labels. */
async function sample(
  registry: Registry,
  name: string,
  labels: Record<string, string | number>,
): Promise<number | undefined> {
  const base = name.replace(/_(bucket|sum|count)$/, '');
  const json = await registry.getMetricsAsJSON();
  const metric = json.find((m) => m.name === base);
  const values = (metric?.values ?? []) as Array<{
    value: number;
    labels: Record<string, unknown>;
    metricName?: string;
  }>;
  const value = values.find(
    (v) =>
      (v.metricName ?? base) === name && Object.entries(labels).every(([k, want]) => v.labels[k] === want),
  );
  return value?.value;
}

describe('prometheusQueueMetrics', () => {
  it('records adds, depth, waits, work, retries and unfinished work per queue', async () => {
    const registry = new Registry();
    const metrics = prometheusQueueMetrics(registry);
    const clock = new FakeClock();
    const q = new RateLimitingQueue({
      name: 'deployments',
      clock,
      metrics,
      rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000),
    });
    const other = new Queue({ name: 'pods', clock, metrics });
    const a = { name: 'deployments' };

    // Series exist before anything happens.
    expect(await sample(registry, 'workqueue_adds_total', a)).toBe(0);
    expect(await sample(registry, 'workqueue_depth', a)).toBe(0);

    q.add('x');
    q.add('y');
    q.add('x'); // duplicate: not counted
    expect(await sample(registry, 'workqueue_adds_total', a)).toBe(2);
    expect(await sample(registry, 'workqueue_depth', a)).toBe(2);

    clock.advance(2000);
    await q.get(); // x waited 2 s
    expect(await sample(registry, 'workqueue_depth', a)).toBe(1);
    clock.advance(3000);
    await q.get(); // y waited 5 s
    expect(await sample(registry, 'workqueue_depth', a)).toBe(0);
    expect(await sample(registry, 'workqueue_queue_duration_seconds_count', a)).toBe(2);
    expect(await sample(registry, 'workqueue_queue_duration_seconds_sum', a)).toBe(7);
    expect(await sample(registry, 'workqueue_queue_duration_seconds_bucket', { ...a, le: 1 })).toBe(0);
    expect(await sample(registry, 'workqueue_queue_duration_seconds_bucket', { ...a, le: 10 })).toBe(2);

    clock.advance(1000);
    // x running 4 s, y running 1 s.
    expect(await sample(registry, 'workqueue_unfinished_work_seconds', a)).toBe(5);
    expect(await sample(registry, 'workqueue_longest_running_processor_seconds', a)).toBe(4);

    q.addRateLimited('x');
    q.done('x');
    expect(await sample(registry, 'workqueue_retries_total', a)).toBe(1);
    expect(await sample(registry, 'workqueue_work_duration_seconds_count', a)).toBe(1);
    expect(await sample(registry, 'workqueue_work_duration_seconds_sum', a)).toBe(4);
    expect(await sample(registry, 'workqueue_unfinished_work_seconds', a)).toBe(1);
    expect(await sample(registry, 'workqueue_longest_running_processor_seconds', a)).toBe(1);

    clock.advance(5); // x comes back
    expect(await sample(registry, 'workqueue_adds_total', a)).toBe(3);
    expect(await sample(registry, 'workqueue_depth', a)).toBe(1);

    // The second queue on the same registry has its own series.
    other.add('p');
    expect(await sample(registry, 'workqueue_adds_total', { name: 'pods' })).toBe(1);
    expect(await sample(registry, 'workqueue_depth', { name: 'pods' })).toBe(1);
    expect(await sample(registry, 'workqueue_retries_total', { name: 'pods' })).toBe(0);

    const text = await registry.metrics();
    expect(text).toContain('workqueue_adds_total{name="deployments"} 3');
    expect(text).toContain('workqueue_adds_total{name="pods"} 1');
  });

  it('creates the metrics once per registry and keeps registries apart', async () => {
    const r1 = new Registry();
    const r2 = new Registry();
    expect(prometheusQueueMetrics(r1)).toBe(prometheusQueueMetrics(r1));
    const q1 = new Queue({ name: 'q', metrics: prometheusQueueMetrics(r1) });
    new Queue({ name: 'q2', metrics: prometheusQueueMetrics(r1) });
    new Queue({ name: 'q', metrics: prometheusQueueMetrics(r2) });
    q1.add('a');
    expect(await sample(r1, 'workqueue_adds_total', { name: 'q' })).toBe(1);
    expect(await sample(r2, 'workqueue_adds_total', { name: 'q' })).toBe(0);
    expect(r1.getMetricsAsArray().filter((m) => m.name.startsWith('workqueue_'))).toHaveLength(7);
  });

  it('reports nothing for a queue without a name', async () => {
    const registry = new Registry();
    const q = new Queue({ metrics: prometheusQueueMetrics(registry) });
    q.add('a');
    const adds = (await registry.getMetricsAsJSON()).find((m) => m.name === 'workqueue_adds_total');
    expect(adds?.values).toEqual([]);
  });
});
