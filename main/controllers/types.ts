/**
 * What every controller is given and what it must offer the controller manager.
 */
import type { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client } from '../../client/client.js';
import type { EventRecorder } from '../../client/events/recorder.js';
import type { Clock } from '../../client/util/clock.js';
import type { QueueMetricsProvider } from '../../client/workqueue/queue.js';
import type { Registry } from 'prom-client';
import type { Logger } from '../logging.js';
import type { NodeLifecycleConfig } from './nodelifecycle/config.js';
import type { PodGCConfig } from './podgc/config.js';

export interface ControllerContext {
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
  queueMetrics?: QueueMetricsProvider;
  /** Where controllers register their own metrics (Kubernetes' names). */
  metrics?: Registry;
  /** Settings from flags; each controller falls back to Kubernetes' defaults. */
  config?: ControllerConfig;
  /** An event recorder reporting as `component`. */
  recorder(component: string): EventRecorder;
}

export interface ControllerConfig {
  nodeLifecycle?: Partial<NodeLifecycleConfig>;
  podGC?: Partial<PodGCConfig>;
}

export interface Controller {
  /** Starts `workers` workers; the informers are synced when this is called. */
  run(workers: number): void;
  /** Stops taking work and waits for the work in hand to finish. */
  stop(): Promise<void>;
}

export interface ControllerDefinition {
  name: string;
  enabledByDefault: boolean;
  defaultWorkers: number;
  /** Builds the controller and registers its informers' handlers (before the informers start). */
  create(ctx: ControllerContext): Controller;
}
