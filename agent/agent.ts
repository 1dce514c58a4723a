/**
 * One node's agent: status reporting, the lease heartbeat, NodeMetrics and — when given
 * runtimes — the pods bound to the node and the log tunnel, side by side and independent (a
 * slow status write never delays a heartbeat). It never exits because the control plane is
 * away: every loop retries with backoff, and the pods keep running. Every call goes through
 * one ControlPlaneContact, which logs an outage once, and its end, and has the log tunnel
 * reconnect as soon as anything gets through again.
 */
import type { Node } from '../client/api/types.js';
import type { Client } from '../client/client.js';
import { SharedInformerFactory } from '../client/cache/factory.js';
import type { SharedIndexInformer } from '../client/cache/informer.js';
import { EventRecorder } from '../client/events/recorder.js';
import { realClock, type Clock } from '../client/util/clock.js';
import type { ConnectionOptions } from '../client/grpc/connection.js';
import { AGENT_VERSION, type AgentConfig } from './config.js';
import { startContainerProbes } from './pods/probing.js';
import { PodManager } from './pods/manager.js';
import type { PodRuntimes } from './pods/runtimes.js';
import { ControlPlaneContact } from './contact.js';
import { observedClient } from './observedclient.js';
import { AgentTunnelClient } from './tunnel.js';
import { SelfUpgrade } from './selfupgrade.js';
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
  /** Run the pods bound to this node with these runtimes (none: report status only). */
  pods?: PodRuntimes;
  /** Open the log tunnel with this node's credential (needs `pods`). */
  tunnel?: { servers: string[]; caPem: string } & Pick<
    ConnectionOptions,
    'token' | 'shareConnection' | 'channelOptions'
  >;
  /** Tells outages of the control plane (shared by a hollow fleet: one line per outage, not per node). */
  contact?: ControlPlaneContact;
  /** Upgrade itself from this control plane when its Node asks (selfupgrade.ts); absent: never. */
  selfUpgrade?: { server: string; caPem: string };
}

export class NodeAgent {
  readonly status: NodeStatusManager;
  readonly lease: NodeLeaseController;
  readonly metrics: NodeMetricsReporter;
  readonly recorder: EventRecorder;
  readonly pods: PodManager | undefined;
  readonly tunnel: AgentTunnelClient | undefined;
  /** The node's own objects, watched once: its Node (and, with pods, the pods bound to it). */
  readonly informers: SharedInformerFactory;
  readonly contact: ControlPlaneContact;
  private readonly node: SharedIndexInformer<'Node'>;

  constructor(readonly options: NodeAgentOptions) {
    const clock = options.clock ?? realClock;
    const { config, logger } = options;
    const contact =
      options.contact ?? new ControlPlaneContact({ servers: options.tunnel?.servers ?? [], logger, clock });
    this.contact = contact;
    const client = observedClient(options.client, contact);
    this.informers = new SharedInformerFactory(client, {
      clock,
      logger: logger.child({ component: 'informers' }),
      reflector: { reportedElsewhere: (err) => contact.explains(err) },
    });
    this.node = this.informers.informerFor('Node', { fieldSelector: `metadata.name=${config.nodeName}` });
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
      cachedNode: () => this.node.get(config.nodeName),
      contact,
    });
    this.lease = new NodeLeaseController({
      client,
      nodeName: config.nodeName,
      clock,
      logger,
      leaseDurationSeconds: config.leaseDurationSeconds,
      renewMs: config.leaseRenewMs,
      onRenew: options.onLeaseRenew,
      contact,
    });
    this.metrics = new NodeMetricsReporter({
      client,
      nodeName: config.nodeName,
      clock,
      logger,
      intervalMs: config.metricsMs,
      sample: () => this.status.latestSample,
      contact,
    });
    const runtimes = options.pods;
    if (!runtimes) return;
    const podLogger = logger.child({ component: 'pods' });
    this.pods = new PodManager({
      client,
      nodeName: config.nodeName,
      clock,
      logger: podLogger,
      recorder: this.recorder,
      informers: this.informers,
      processes: runtimes.processes,
      images: runtimes.images,
      imagesMissing: runtimes.imagesMissing,
      hostIP: () => internalIP(this.pods?.node()) ?? config.nodeIP ?? '',
      startProbes: (pod, container, running, callbacks) =>
        startContainerProbes(pod, container, running, callbacks, clock, podLogger),
      contact,
      ...(runtimes.volumesDir
        ? { volumes: { dir: runtimes.volumesDir, syncFrequencyMs: config.syncFrequencyMs } }
        : {}),
      // Real processes run as the pod's user; hollow ones run nothing to drop privileges of.
      ...(runtimes.processes.scheme === 'process'
        ? {
            security: {
              agentUid: process.getuid?.() ?? 0,
              ...(config.podUser ? { podUser: config.podUser } : {}),
              refuseRoot: config.refuseRootPods ?? false,
            },
          }
        : {}),
    });
    if (options.tunnel) {
      this.tunnel = new AgentTunnelClient({
        ...options.tunnel,
        nodeName: config.nodeName,
        source: runtimes.logs,
        logger: logger.child({ component: 'log-tunnel' }),
        clock,
        contact,
      });
      const tunnel = this.tunnel;
      contact.onRestored(() => tunnel.reconnectNow());
    }
  }

  get nodeName(): string {
    return this.options.config.nodeName;
  }

  start(): void {
    const upgrade = this.options.selfUpgrade;
    if (upgrade) {
      const self = new SelfUpgrade({
        client: this.options.client,
        recorder: this.recorder,
        logger: this.options.logger.child({ component: 'self-upgrade' }),
        server: upgrade.server,
        caPem: upgrade.caPem,
        current: AGENT_VERSION,
      });
      this.node.addEventHandler({
        onAdd: (n) => self.nodeChanged(n),
        onUpdate: (_old, n) => self.nodeChanged(n),
      });
    }
    this.informers.start();
    void this.status.run();
    void this.lease.run();
    void this.metrics.run();
    this.pods
      ?.start()
      .catch((err: unknown) =>
        this.options.logger.error(
          { err: (err as Error).message },
          'cannot start the pod manager; pods on this node are not run: fix the data directory and restart the agent',
        ),
      );
    this.tunnel?.start();
  }

  /** Stops reporting; the pods' containers keep running (the next start adopts them). */
  async stop(): Promise<void> {
    await Promise.all([
      this.status.stop(),
      this.lease.stop(),
      this.metrics.stop(),
      this.pods?.stop(),
      this.tunnel?.stop(),
    ]);
    this.informers.shutdown();
    this.options.pods?.close();
    await this.recorder.flush();
  }
}

function internalIP(node: Node | undefined): string | undefined {
  return node?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
}
