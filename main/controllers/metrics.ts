/**
 * Controller metrics survive a controller restart (leadership lost and won again): a metric is
 * registered once per registry and found again by name afterwards.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

type Kind = 'counter' | 'gauge' | 'histogram';
type MetricOf<K extends Kind> = K extends 'counter' ? Counter : K extends 'gauge' ? Gauge : Histogram;

export interface MetricSpec {
  name: string;
  help: string;
  labelNames?: string[];
  buckets?: number[];
  /** Gauges: called at scrape time to set the values. */
  collect?: (this: Gauge) => void;
}

export function metric<K extends Kind>(
  registry: Registry | undefined,
  kind: K,
  spec: MetricSpec,
): MetricOf<K> | undefined {
  if (!registry) return undefined;
  const existing = registry.getSingleMetric(spec.name);
  if (existing) return existing as unknown as MetricOf<K>;
  const { collect, ...rest } = spec;
  const options = { ...rest, labelNames: spec.labelNames ?? [], registers: [registry] };
  switch (kind) {
    case 'counter':
      return new Counter(options) as MetricOf<K>;
    case 'gauge':
      return new Gauge({ ...options, ...(collect ? { collect } : {}) }) as MetricOf<K>;
    default:
      return new Histogram(options) as MetricOf<K>;
  }
}
