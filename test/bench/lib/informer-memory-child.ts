/**
 * The gRPC side of the informer memory measurement, in a process of its own (started by
 * informer.bench.ts with `node --expose-gc --import tsx`), so that its heap holds only the
 * client: heap after GC, start a Pod informer over gRPC, wait for sync, heap after GC again.
 * Configuration comes as JSON in KUBELAB_BENCH_INFORMER_CHILD; the result is one JSON line on
 * stdout.
 */
import { Registry } from 'prom-client';
import { SharedInformerFactory } from '../../../client/cache/factory.js';
import { prometheusReflectorMetrics } from '../../../client/cache/metrics.js';
import { grpcClient } from '../../../client/grpc/transport.js';
import { settledHeap } from './heap.js';
import { reflectorFigures } from './informers.js';
import { nowMs } from './stats.js';

export interface MemoryChildConfig {
  server: string;
  token: string;
  caPem: string;
  syncTimeoutMs: number;
}

export interface MemoryChildResult {
  objects: number;
  listSyncMs: number;
  listMs: number;
  before: { heapUsed: number; arrayBuffers: number; rss: number };
  after: { heapUsed: number; arrayBuffers: number; rss: number };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.KUBELAB_BENCH_INFORMER_CHILD ?? '') as MemoryChildConfig;
  const client = grpcClient({
    server: config.server,
    token: config.token,
    caPem: config.caPem,
    timeoutMs: config.syncTimeoutMs,
  });
  // Load and warm the code paths and the connection first: only the cache should count.
  await client.list('Pod', { limit: 100 });
  const registry = new Registry();
  const factory = new SharedInformerFactory(client, { metrics: prometheusReflectorMetrics(registry) });
  const informer = factory.informerFor('Pod');
  const before = await settledHeap();
  const t0 = nowMs();
  factory.start();
  if (!(await factory.waitForCacheSync(config.syncTimeoutMs)))
    throw new Error(`the informer did not sync within ${config.syncTimeoutMs} ms`);
  const listSyncMs = nowMs() - t0;
  const after = await settledHeap();
  const figures = await reflectorFigures(registry);
  const result: MemoryChildResult = {
    objects: informer.list().length,
    listSyncMs,
    listMs: figures.lastListSeconds * 1000,
    before,
    after,
  };
  process.stdout.write(JSON.stringify(result) + '\n');
  factory.shutdown();
  client.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
