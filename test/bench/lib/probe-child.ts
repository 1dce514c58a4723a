/**
 * bench:scale's window probes (window-probes.ts) in a process of their own (`node --import
 * tsx`, an IPC channel to the benchmark), as a user's client and the desktop window are. The
 * configuration comes as JSON in KUBELAB_BENCH_PROBE_CHILD. Messages to the parent: `started`
 * (both probes running), then `report` (answer to `stop`: the latencies and this process's own
 * event-loop delay, which says whether the probe itself paused), or `error`.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { grpcClient } from '../../../client/grpc/transport.js';
import { apiProbe, bridgeProbe, type ApiLatencies, type Latencies } from './window-probes.js';

export interface ProbeChildConfig {
  server: string;
  token: string;
  caPem: string;
  uiPort: number;
  namespace: string;
  /** Nodes the get probe cycles through: `${nodePrefix}${i % nodeCount}`. */
  nodePrefix: string;
  nodeCount: number;
}

export type ProbeChildMessage =
  | { type: 'started' }
  | { type: 'report'; api: ApiLatencies; bridge: Latencies; loop: { p99Ms: number; maxMs: number } }
  | { type: 'error'; message: string };

function send(m: ProbeChildMessage): void {
  process.send?.(m);
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.KUBELAB_BENCH_PROBE_CHILD ?? '') as ProbeChildConfig;
  process.setSourceMapsEnabled(false);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const client = grpcClient({ server: config.server, token: config.token, caPem: config.caPem });
  const api = apiProbe(client, config.namespace, (i) => `${config.nodePrefix}${i % config.nodeCount}`);
  const bridge = await bridgeProbe(config.uiPort, config.token);
  send({ type: 'started' });
  // From here on: loading this process's modules is not a pause of the window.
  loop.reset();
  process.on('message', (m: { type: string }) => {
    if (m.type !== 'stop') return;
    void Promise.all([api.stop(), bridge.stop()]).then(([apiResult, bridgeResult]) => {
      client.close();
      send({
        type: 'report',
        api: apiResult,
        bridge: bridgeResult,
        loop: { p99Ms: loop.percentile(99) / 1e6, maxMs: loop.max / 1e6 },
      });
      process.exit(0);
    });
  });
}

main().catch((err: Error) => {
  send({ type: 'error', message: err.stack ?? err.message });
  process.exit(1);
});
