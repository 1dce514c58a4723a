/**
 * The reference for scheduler.bench.ts, in a process of its own (`node --import tsx`, like the
 * scheduler's `kubelab controller-manager`): a binder with no scheduling decision at all. It
 * lists the schedulable Nodes and the pending Pods of one namespace once, prints `ready …`, then
 * makes for every pod the writes the scheduler makes — the Bind call (pods/binding) and a
 * `Scheduled` Event through an EventRecorder — on nodes taken round-robin, `concurrency` binds
 * in flight; prints `done {json}` and exits. What it reaches is what the apiserver and the
 * transport allow a scheduler on this machine: the ceiling of the scheduler's own rate.
 *
 * Configuration comes as JSON in KUBELAB_BENCH_BIND_CHILD.
 */
import { readFileSync } from 'node:fs';
import type { Node, Pod } from '../../../client/api/types.js';
import { EventRecorder } from '../../../client/events/recorder.js';
import { grpcClient } from '../../../client/grpc/transport.js';
import { nowMs } from './stats.js';

export interface BindChildConfig {
  server: string;
  tokenFile: string;
  caFile: string;
  namespace: string;
  concurrency: number;
  /** Record a Scheduled event per pod, as the scheduler does. */
  events: boolean;
}

export interface BindChildResult {
  pods: number;
  nodes: number;
  bound: number;
  errors: number;
  firstError?: string;
  /** `ready` printed → last bind call returned, ms. */
  ms: number;
}

function schedulable(n: Node): boolean {
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  return (
    ready && !n.spec?.unschedulable && !(n.spec?.taints ?? []).some((t) => t.effect !== 'PreferNoSchedule')
  );
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.KUBELAB_BENCH_BIND_CHILD ?? '') as BindChildConfig;
  const client = grpcClient({
    server: config.server,
    token: readFileSync(config.tokenFile, 'utf8').trim(),
    caPem: readFileSync(config.caFile, 'utf8'),
  });
  const recorder = new EventRecorder(client, { component: 'bench-binder' });
  const nodes = (await client.list('Node')).items.filter(schedulable).map((n) => n.metadata!.name!);
  const pods = (await client.list('Pod', { namespace: config.namespace })).items.filter(
    (p: Pod) => !p.spec?.nodeName,
  );
  if (!nodes.length) throw new Error('no schedulable node');
  process.stdout.write(`ready: ${pods.length} pending pods, ${nodes.length} nodes\n`);
  const t0 = nowMs();
  let next = 0;
  let bound = 0;
  let errors = 0;
  let firstError: string | undefined;
  const worker = async () => {
    while (next < pods.length) {
      const i = next++;
      const pod = pods[i];
      const node = nodes[i % nodes.length];
      try {
        await client.bind(config.namespace, pod.metadata!.name!, node, { uid: pod.metadata?.uid });
        bound++;
        if (config.events)
          recorder.event(
            pod,
            'Normal',
            'Scheduled',
            `Successfully assigned ${config.namespace}/${pod.metadata!.name!} to ${node}`,
          );
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: config.concurrency }, worker));
  const ms = nowMs() - t0;
  await recorder.flush();
  const result: BindChildResult = { pods: pods.length, nodes: nodes.length, bound, errors, firstError, ms };
  process.stdout.write(`done ${JSON.stringify(result)}\n`);
  client.close();
  process.exit(0);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});
