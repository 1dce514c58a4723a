/**
 * The controller manager (kube-controller-manager): a registry of named controllers, each
 * enabled or disabled by the --controllers flag, run over one set of shared informers. It runs
 * inside the control plane by default, or as its own process against a remote apiserver; with
 * leader election only the replica holding the lease runs controllers, and it stops them the
 * moment it loses the lease.
 */
import { Gauge, type Registry } from 'prom-client';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import { prometheusReflectorMetrics } from '../../client/cache/metrics.js';
import type { Client } from '../../client/client.js';
import { EventRecorder } from '../../client/events/recorder.js';
import { LeaderElector } from '../../client/leaderelection/elector.js';
import { realClock, type Clock } from '../../client/util/clock.js';
import { prometheusQueueMetrics } from '../../client/workqueue/metrics.js';
import type { Logger } from '../logging.js';
import { cronJobController } from './cronjob/controller.js';
import { daemonSetController } from './daemonset/controller.js';
import { deploymentController } from './deployment/controller.js';
import { garbageCollectorController } from './gc/controller.js';
import { jobController } from './job/controller.js';
import { namespaceController } from './namespace/controller.js';
import { nodeLifecycleController } from './nodelifecycle/controller.js';
import { podGCController } from './podgc/controller.js';
import { replicaSetController } from './replicaset/controller.js';
import { schedulerController } from './scheduler/controller.js';
import { taintEvictionController } from './tainteviction/controller.js';
import { ttlAfterFinishedController } from './ttlafterfinished/controller.js';
import type { Controller, ControllerConfig, ControllerContext, ControllerDefinition } from './types.js';

/** Every controller this build knows, in start order. */
export const CONTROLLERS: ControllerDefinition[] = [
  namespaceController,
  garbageCollectorController,
  nodeLifecycleController,
  taintEvictionController,
  schedulerController,
  daemonSetController,
  replicaSetController,
  deploymentController,
  jobController,
  cronJobController,
  ttlAfterFinishedController,
  podGCController,
];

export interface LeaderElectionConfig {
  identity: string;
  leaseName?: string;
  namespace?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ControllerManagerOptions {
  client: Client;
  logger: Logger;
  clock?: Clock;
  /** Like --controllers: "*" for the defaults, "name" to add, "-name" to remove (default ["*"]). */
  controllers?: string[];
  /** Workers per controller, overriding each one's default. */
  workers?: Record<string, number>;
  leaderElection?: LeaderElectionConfig;
  metrics?: Registry;
  /** Controller settings from flags (periods, rates, thresholds). */
  config?: ControllerConfig;
  definitions?: ControllerDefinition[];
  /** Called when leadership is lost (a standalone process exits, as Kubernetes' does). */
  onLostLeadership?: () => void;
  /** How long to wait for the informers' first lists (default 60 s). */
  cacheSyncTimeoutMs?: number;
}

/** Which controllers run, from the --controllers list. */
export function enabledControllers(
  definitions: ControllerDefinition[],
  flags: string[] = ['*'],
): ControllerDefinition[] {
  const known = new Set(definitions.map((d) => d.name));
  for (const f of flags) {
    const name = f.replace(/^-/, '');
    if (name !== '*' && !known.has(name)) {
      throw new Error(`unknown controller "${name}" in --controllers; known: ${[...known].join(', ')}`);
    }
  }
  const star = flags.includes('*');
  return definitions.filter((d) => {
    if (flags.includes(`-${d.name}`)) return false;
    if (flags.includes(d.name)) return true;
    return star && d.enabledByDefault;
  });
}

export class ControllerManager {
  private readonly clock: Clock;
  private readonly definitions: ControllerDefinition[];
  private elector: LeaderElector | undefined;
  private running:
    | { factory: SharedInformerFactory; controllers: Array<{ name: string; controller: Controller }> }
    | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;

  private readonly leaderGauge: Gauge | undefined;

  constructor(private readonly options: ControllerManagerOptions) {
    this.clock = options.clock ?? realClock;
    this.definitions = enabledControllers(options.definitions ?? CONTROLLERS, options.controllers);
    this.leaderGauge = options.metrics
      ? new Gauge({
          name: 'leader_election_master_status',
          help: '1 while this replica leads and runs the controllers',
          labelNames: ['name'],
          registers: [options.metrics],
        })
      : undefined;
  }

  private get leaseName(): string {
    return this.options.leaderElection?.leaseName ?? 'kube-controller-manager';
  }

  /** Names of the controllers this manager runs when it leads. */
  get controllerNames(): string[] {
    return this.definitions.map((d) => d.name);
  }

  /** True while the controllers are running. */
  get active(): boolean {
    return this.running !== undefined;
  }

  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : this.active;
  }

  async start(): Promise<void> {
    const le = this.options.leaderElection;
    if (!le) {
      await this.startControllers();
      return;
    }
    this.leaderGauge?.set({ name: this.leaseName }, 0);
    this.elector = new LeaderElector({
      client: this.options.client,
      name: this.leaseName,
      namespace: le.namespace ?? 'kube-system',
      identity: le.identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      clock: this.clock,
      callbacks: {
        onStartedLeading: () => {
          this.leaderGauge?.set({ name: this.leaseName }, 1);
          this.options.logger.info({ identity: le.identity }, 'became leader; starting controllers');
          this.starting = this.startControllers().catch((err) =>
            this.options.logger.error({ err: (err as Error).message }, 'controllers failed to start'),
          );
        },
        onStoppedLeading: () => {
          this.leaderGauge?.set({ name: this.leaseName }, 0);
          this.options.logger.warn({ identity: le.identity }, 'lost leadership; stopping controllers');
          void this.stopControllers().then(() => {
            if (!this.stopped) this.options.onLostLeadership?.();
          });
        },
        onNewLeader: (id) => this.options.logger.info({ leader: id }, 'leader observed'),
      },
    });
    void this.elector.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.elector?.stop();
    await this.starting;
    await this.stopControllers();
  }

  private async startControllers(): Promise<void> {
    if (this.running || this.stopped) return;
    const { client, logger, metrics } = this.options;
    const factory = new SharedInformerFactory(client, {
      clock: this.clock,
      logger: logger.child({ component: 'informers' }),
      metrics: metrics ? prometheusReflectorMetrics(metrics) : undefined,
    });
    const recorders = new Map<string, EventRecorder>();
    const ctx: Omit<ControllerContext, 'logger'> = {
      client,
      informers: factory,
      clock: this.clock,
      queueMetrics: metrics ? prometheusQueueMetrics(metrics) : undefined,
      metrics,
      config: this.options.config,
      recorder: (component) => {
        let r = recorders.get(component);
        if (!r)
          recorders.set(component, (r = new EventRecorder(client, { component }, { clock: this.clock })));
        return r;
      },
    };
    const controllers = this.definitions.map((d) => ({
      name: d.name,
      workers: this.options.workers?.[d.name] ?? d.defaultWorkers,
      controller: d.create({ ...ctx, logger: logger.child({ controller: d.name }) }),
    }));
    this.running = { factory, controllers };
    factory.start();
    if (!(await factory.waitForCacheSync(this.options.cacheSyncTimeoutMs ?? 60_000))) {
      logger.warn('informers did not sync in time; controllers start anyway and catch up');
    }
    if (this.running?.factory !== factory) return;
    for (const c of controllers) {
      c.controller.run(c.workers);
      logger.info({ controller: c.name, workers: c.workers }, 'controller started');
    }
  }

  private async stopControllers(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    await Promise.all(running.controllers.map((c) => c.controller.stop()));
    running.factory.shutdown();
  }
}
