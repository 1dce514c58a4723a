/**
 * The pods behind bench:gui: many created at once with spec.nodeName set (so they land on
 * their node without the scheduler and the hollow agents run them at once), a wait until the
 * agents report them Running, and a slow trickle of pod changes that keeps the GUI's watches
 * busy while it is measured.
 */
import type { Pod } from '../../../client/api/types.js';
import { SharedInformerFactory } from '../../../client/cache/factory.js';
import type { Client } from '../../../client/client.js';
import type { ChildControlPlane } from './child.js';
import { checkAlive, type Proc } from './childproc.js';
import type { ServerHealth } from './gui-health.js';
import type { Cleanup } from './run.js';
import { log } from './run.js';
import { fmt, nowMs, sleep } from './stats.js';
import { throughput } from './workloads.js';

/** A pod the hollow runtime runs at once: no scheduler (spec.nodeName set), small requests. */
export function boundPod(namespace: string, name: string, node: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'gui-bench' } },
    spec: {
      nodeName: node,
      containers: [
        {
          name: 'main',
          image: 'registry.invalid/pause',
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
        },
      ],
    },
  };
}

/** Creates `pod`; one that exists already counts as created: a create retried after a lost answer reports AlreadyExists. */
export async function createIfAbsent(client: Client, pod: Pod): Promise<void> {
  try {
    await client.create(pod);
  } catch (err) {
    if ((err as { reason?: string }).reason !== 'AlreadyExists') throw err;
  }
}

export async function ensureNamespace(client: Client, name: string): Promise<void> {
  try {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  } catch (err) {
    if ((err as { reason?: string }).reason !== 'AlreadyExists') throw err;
  }
}

/** Pod i goes to node i mod nodes: every node gets the same number, ± 1. */
export function bulkPodName(i: number): string {
  return `bulk-${i}`;
}

export async function createBulkPods(
  client: Client,
  namespace: string,
  count: number,
  nodeNames: string[],
  concurrency: number,
  procs: Proc[],
  health: ServerHealth,
): Promise<{ seconds: number; perSec: number }> {
  log(`creating ${fmt(count, 0)} pods in ${namespace} (spec.nodeName set, ${concurrency} writers)`);
  let created = 0;
  const ticker = setInterval(() => {
    const now = created;
    void health.line().then((h) => log(`created ${fmt(now, 0)}/${fmt(count, 0)} pods; ${h}`));
  }, 10_000);
  try {
    const r = await throughput(count, concurrency, async (i) => {
      // One writer notices a dead agent process soon (a failed create stops the whole batch).
      if (i % 1000 === 0) checkAlive(procs);
      await createIfAbsent(client, boundPod(namespace, bulkPodName(i), nodeNames[i % nodeNames.length]));
      created++;
    });
    log(`created ${fmt(count, 0)} pods in ${fmt(r.seconds, 1)} s (${fmt(r.perSec, 0)}/s)`);
    return { seconds: r.seconds, perSec: r.perSec };
  } finally {
    clearInterval(ticker);
  }
}

export interface RunningWait {
  running: number;
  seconds: number;
  /** The cap was reached before every pod was Running. */
  capped: boolean;
}

/**
 * Waits until `count` pods of the namespace are Running, as a Pod informer of this process
 * sees them (status.phase=Running selected by the server, so it holds only those), logging
 * every 10 s; gives up after `capMs` and says so.
 */
export async function waitForRunning(
  cp: ChildControlPlane,
  namespace: string,
  count: number,
  capMs: number,
  procs: Proc[],
  cleanup: Cleanup,
  health: ServerHealth,
): Promise<RunningWait> {
  const factory = new SharedInformerFactory(cp.client(true));
  const running = factory.informerFor('Pod', { namespace, fieldSelector: 'status.phase=Running' });
  cleanup.add('pod informer', () => factory.shutdown());
  factory.start();
  const t0 = nowMs();
  let lastLog = nowMs();
  let last = 0;
  let lastChangeAt = nowMs();
  try {
    for (;;) {
      checkAlive(procs);
      const n = running.hasSynced() ? running.list().length : 0;
      if (n !== last) lastChangeAt = nowMs();
      last = n;
      if (n >= count) break;
      if (nowMs() - t0 > capMs) {
        log(
          `gave up waiting: ${fmt(n, 0)}/${fmt(count, 0)} pods Running after ${fmt(capMs / 60_000, 1)} min ` +
            `(the last change ${fmt((nowMs() - lastChangeAt) / 1000, 0)} s ago): the hollow agents did not report the rest; ` +
            'measuring the GUI anyway (the report says so); raise --running-wait to wait longer',
        );
        return { running: n, seconds: (nowMs() - t0) / 1000, capped: true };
      }
      if (nowMs() - lastLog >= 10_000) {
        lastLog = nowMs();
        log(
          `${fmt((nowMs() - t0) / 1000, 0)} s: ${fmt(n, 0)}/${fmt(count, 0)} pods Running; ${await health.line()}`,
        );
      }
      await sleep(1000);
    }
    const seconds = (nowMs() - t0) / 1000;
    log(`every pod Running ${fmt(seconds, 1)} s after the last create`);
    return { running: count, seconds, capped: false };
  } finally {
    await cleanup.now('pod informer');
  }
}

/**
 * A slow trickle of pod changes while the GUI is measured: `perSec` merge patches per second
 * of an annotation on the bulk pods, round robin. The number of objects stays the same, so
 * the GUI's heap has no reason to grow; every patch is a MODIFIED event in its Pods watch.
 */
export class PodChurn {
  patches = 0;
  failures = 0;
  firstError?: string;
  private timer: NodeJS.Timeout | undefined;
  private next = 0;
  private inflight = 0;

  constructor(
    private readonly client: Client,
    private readonly namespace: string,
    private readonly pods: number,
    private readonly perSec: number,
  ) {}

  start(): void {
    if (this.perSec <= 0 || this.timer) return;
    this.timer = setInterval(() => this.tick(), 1000 / this.perSec);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    while (this.inflight > 0) await sleep(50);
  }

  private tick(): void {
    // A server that falls behind does not get a growing queue of patches from here.
    if (this.inflight >= 4) return;
    const name = bulkPodName(this.next++ % this.pods);
    this.inflight++;
    this.client
      .patch(
        'Pod',
        name,
        { metadata: { annotations: { 'bench.kubelab.dev/tick': String(this.patches) } } },
        { namespace: this.namespace },
      )
      .then(
        () => this.patches++,
        (err: Error) => {
          this.failures++;
          this.firstError ??= err.message;
        },
      )
      .finally(() => this.inflight--);
  }
}
