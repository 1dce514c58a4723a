/**
 * Usage samples for NodeMetrics (CPU, memory, disk, load, network, processes), sent every
 * 10 s; the control plane keeps the last 15 minutes in memory.
 */
import { isAlreadyExists, isNotFound } from '../client/api/errors.js';
import type { NodeMetrics } from '../client/api/types.js';
import type { Client } from '../client/client.js';
import { rfc3339, type Clock } from '../client/util/clock.js';
import { Sleeper } from '../client/util/sleeper.js';
import type { ControlPlaneContact } from './contact.js';
import type { Logger } from './logger.js';
import type { MachineSample } from './machine/types.js';

export function usageOf(sample: MachineSample): Record<string, string> {
  const kib = (bytes: number) => `${Math.max(0, Math.floor(bytes / 1024))}Ki`;
  const decimal = (n: number) => (Math.round(n * 100) / 100).toString();
  return {
    cpu: `${Math.max(0, Math.round(sample.cpuUsageCores * 1000))}m`,
    memory: kib(sample.memoryTotalBytes - sample.memoryAvailableBytes),
    'ephemeral-storage': kib(sample.nodefsCapacityBytes - sample.nodefsAvailableBytes),
    'kubelab.io/load1': decimal(sample.load1),
    'kubelab.io/load5': decimal(sample.load5),
    'kubelab.io/load15': decimal(sample.load15),
    'kubelab.io/network-receive-bytes': String(Math.floor(sample.networkReceiveBytes)),
    'kubelab.io/network-transmit-bytes': String(Math.floor(sample.networkTransmitBytes)),
    ...(sample.processes !== undefined ? { 'kubelab.io/processes': String(sample.processes) } : {}),
  };
}

export interface NodeMetricsReporterOptions {
  client: Client;
  nodeName: string;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  /** The latest machine reading (shared with the status loop). */
  sample: () => MachineSample | undefined;
  /** Logs outages of the control plane once: reports failing for want of it are logged at debug. */
  contact?: ControlPlaneContact;
}

export class NodeMetricsReporter {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private created = false;
  private readonly sleeper: Sleeper;
  reports = 0;

  constructor(private readonly options: NodeMetricsReporterOptions) {
    this.sleeper = new Sleeper(options.clock);
  }

  run(): Promise<void> {
    this.loop ??= this.runLoop();
    return this.loop;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.sleeper.stop();
    await this.loop;
  }

  private async runLoop(): Promise<void> {
    while (!this.stopped) {
      await this.sleeper.sleep(this.options.intervalMs);
      const sample = this.options.sample();
      if (!sample || this.stopped) continue;
      try {
        await this.report(sample);
        this.reports++;
      } catch (err) {
        this.options.logger[this.options.contact?.explains(err) ? 'debug' : 'warn'](
          { node: this.options.nodeName, err: (err as Error).message },
          'cannot report node metrics; will try again',
        );
      }
    }
  }

  private async report(sample: MachineSample): Promise<void> {
    const { client, nodeName, intervalMs } = this.options;
    const metrics: NodeMetrics = {
      apiVersion: 'metrics.k8s.io/v1beta1',
      kind: 'NodeMetrics',
      metadata: { name: nodeName },
      timestamp: rfc3339(sample.at),
      window: `${Math.round(intervalMs / 1000)}s`,
      usage: usageOf(sample),
    };
    if (this.created) {
      try {
        await client.update(metrics);
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    try {
      await client.create(metrics);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      await client.update(metrics);
    }
    this.created = true;
  }
}
