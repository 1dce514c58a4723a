/**
 * One node's agent: status reporting, the lease heartbeat and NodeMetrics, side by side and
 * independent (a slow status write never delays a heartbeat). It never exits because the
 * control plane is away: every loop retries with backoff.
 */
import type { Client } from '../client/client.js';
import { EventRecorder } from '../client/events/recorder.js';
import { realClock, type Clock } from '../client/util/clock.js';
import type { AgentConfig } from './config.js';
import { NodeLeaseController } from './lease.js';
import type { Logger } from './logger.js';
import type { MachineReader } from './machine/types.js';
import { NodeMetricsReporter } from './nodemetrics.js';
import { NodeStatusManager } from './status/manager.js';

export interface NodeAgentOptions {
  client: Client;
  reader: MachineReader;
  config: AgentConfig;
  logger: Logger;
  clock?: Clock;
  /** Problems that make the node not ready (the pod runtime adds its own). */
  health?: () => string[];
  onLeaseRenew?: (at: number, latencyMs: number) => void;
}

export class NodeAgent {
  readonly status: NodeStatusManager;
  readonly lease: NodeLeaseController;
  readonly metrics: NodeMetricsReporter;
  readonly recorder: EventRecorder;

  constructor(readonly options: NodeAgentOptions) {
    const clock = options.clock ?? realClock;
    const { client, config, logger } = options;
    this.recorder = new EventRecorder(
      client,
      { component: 'kubelab-agent', host: config.nodeName },
      { clock },
    );
    this.status = new NodeStatusManager({
      client,
      reader: options.reader,
      config,
      clock,
      logger,
      recorder: this.recorder,
      health: options.health,
    });
    this.lease = new NodeLeaseController({
      client,
      nodeName: config.nodeName,
      clock,
      logger,
      leaseDurationSeconds: config.leaseDurationSeconds,
      renewMs: config.leaseRenewMs,
      onRenew: options.onLeaseRenew,
    });
    this.metrics = new NodeMetricsReporter({
      client,
      nodeName: config.nodeName,
      clock,
      logger,
      intervalMs: config.metricsMs,
      sample: () => this.status.latestSample,
    });
  }

  get nodeName(): string {
    return this.options.config.nodeName;
  }

  start(): void {
    void this.status.run();
    void this.lease.run();
    void this.metrics.run();
  }

  async stop(): Promise<void> {
    await Promise.all([this.status.stop(), this.lease.stop(), this.metrics.stop()]);
    await this.recorder.flush();
  }
}
