/**
 * Prometheus metrics for work queues, named as client-go's (k8s.io/component-base's workqueue
 * provider) and labelled by queue `name`:
 *
 *   workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
 *   workqueue_work_duration_seconds, workqueue_retries_total,
 *   workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds
 *
 * The two unfinished-work gauges are computed when the registry is scraped, instead of on a
 * 500 ms ticker as in client-go.
 */
import { Counter, exponentialBuckets, Gauge, Histogram, type Registry } from 'prom-client';
import type { QueueMetrics, QueueMetricsProvider, UnfinishedWork } from './queue.js';

type AnyRegistry = NonNullable<ConstructorParameters<typeof Counter>[0]['registers']>[number];

/** 10 ns … 10 s, as client-go. */
const durationBuckets = exponentialBuckets(10e-9, 10, 10);

class PrometheusQueueMetricsProvider implements QueueMetricsProvider {
  /** The live queue behind each name; a newer queue of the same name replaces an older one. */
  private readonly sources = new Map<string, UnfinishedWork>();
  private readonly depth: Gauge<'name'>;
  private readonly adds: Counter<'name'>;
  private readonly latency: Histogram<'name'>;
  private readonly workDuration: Histogram<'name'>;
  private readonly retries: Counter<'name'>;

  constructor(registry: AnyRegistry) {
    const registers = [registry];
    const labelNames = ['name'] as const;
    const sources = this.sources;
    this.depth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames,
      registers,
    });
    this.adds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames,
      registers,
    });
    this.latency = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested.',
      labelNames,
      buckets: durationBuckets,
      registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames,
      buckets: durationBuckets,
      registers,
    });
    this.retries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames,
      registers,
    });
    new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help:
        'How many seconds of work has been done that is in progress and has not been observed by ' +
        'work_duration. Large values indicate stuck threads. One can deduce the number of stuck ' +
        'threads by observing the rate at which this increases.',
      labelNames,
      registers,
      collect() {
        for (const [name, work] of sources) this.set({ name }, work.unfinishedWorkSeconds());
      },
    });
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames,
      registers,
      collect() {
        for (const [name, work] of sources) this.set({ name }, work.longestRunningProcessorSeconds());
      },
    });
  }

  forQueue(name: string, work: UnfinishedWork): QueueMetrics {
    this.sources.set(name, work);
    const labels = { name };
    // Create every series at zero so a queue shows up before anything happens to it.
    const depth = this.depth.labels(labels);
    depth.set(0);
    const adds = this.adds.labels(labels);
    adds.inc(0);
    const retries = this.retries.labels(labels);
    retries.inc(0);
    this.latency.zero(labels);
    this.workDuration.zero(labels);
    const latency = this.latency.labels(labels);
    const workDuration = this.workDuration.labels(labels);
    return {
      add: () => adds.inc(),
      depth: (n) => depth.set(n),
      get: (waitSeconds) => latency.observe(waitSeconds),
      done: (workSeconds) => workDuration.observe(workSeconds),
      retry: () => retries.inc(),
    };
  }
}

const providers = new WeakMap<object, PrometheusQueueMetricsProvider>();

/**
 * Work queue metrics registered on `registry`. The metrics are created once per registry, so
 * any number of queues (with different names) can share it:
 *
 *   const metrics = prometheusQueueMetrics(registry);
 *   newRateLimitingQueue({ name: 'deployment', metrics });
 */
export function prometheusQueueMetrics(registry: Registry | AnyRegistry): QueueMetricsProvider {
  let provider = providers.get(registry);
  if (!provider) {
    provider = new PrometheusQueueMetricsProvider(registry);
    providers.set(registry, provider);
  }
  return provider;
}
