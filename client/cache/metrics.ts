/** Prometheus metrics for reflectors and informers (prom-client), one set per registry. */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ReflectorMetrics } from './reflector.js';

const perRegistry = new WeakMap<Registry, ReflectorMetrics>();

export function prometheusReflectorMetrics(registry: Registry): ReflectorMetrics {
  const existing = perRegistry.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const lists = new Counter({
    name: 'informer_lists_total',
    help: 'Lists made by reflectors',
    labelNames: ['kind'],
    registers,
  });
  const listDuration = new Histogram({
    name: 'informer_list_duration_seconds',
    help: 'Time to list a kind',
    labelNames: ['kind'],
    registers,
  });
  const listItems = new Gauge({
    name: 'informer_list_items',
    help: 'Objects in the last list',
    labelNames: ['kind'],
    registers,
  });
  const watches = new Counter({
    name: 'informer_watches_total',
    help: 'Watches started by reflectors',
    labelNames: ['kind'],
    registers,
  });
  const relists = new Counter({
    name: 'informer_relists_total',
    help: 'Lists forced by an expired resourceVersion',
    labelNames: ['kind'],
    registers,
  });
  const failures = new Counter({
    name: 'informer_watch_failures_total',
    help: 'Watches or lists that failed',
    labelNames: ['kind', 'reason'],
    registers,
  });
  const events = new Counter({
    name: 'informer_watch_events_total',
    help: 'Watch events received',
    labelNames: ['kind', 'type'],
    registers,
  });
  const lastRv = new Gauge({
    name: 'informer_last_resource_version',
    help: 'The last resourceVersion a reflector saw',
    labelNames: ['kind'],
    registers,
  });
  const metrics: ReflectorMetrics = {
    listed: (kind, ms, items) => {
      lists.inc({ kind });
      listDuration.observe({ kind }, ms / 1000);
      listItems.set({ kind }, items);
    },
    watchStarted: (kind) => watches.inc({ kind }),
    relisted: (kind) => relists.inc({ kind }),
    event: (kind, type) => events.inc({ kind, type }),
    watchFailed: (kind, reason) => failures.inc({ kind, reason }),
    resourceVersion: (kind, rv) => {
      const n = Number(rv);
      if (Number.isFinite(n)) lastRv.set({ kind }, n);
    },
  };
  perRegistry.set(registry, metrics);
  return metrics;
}
