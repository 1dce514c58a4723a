/**
 * SharedInformerFactory: one informer per kind (and selector) shared by every controller, so
 * the scheduler, the DaemonSet controller and the GC watch pods once, not three times.
 */
import type { KindName } from '../api/types.js';
import type { Client } from '../client.js';
import type { Clock } from '../util/clock.js';
import { SharedIndexInformer, type InformerOptions } from './informer.js';
import type { Logger, ReflectorMetrics } from './reflector.js';

export interface InformerScope {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface FactoryOptions {
  clock?: Clock;
  metrics?: ReflectorMetrics;
  logger?: Logger;
  reflector?: InformerOptions<KindName>['reflector'];
}

export class SharedInformerFactory {
  private readonly informers = new Map<string, SharedIndexInformer<KindName>>();
  private started = false;

  constructor(
    private readonly client: Client,
    private readonly options: FactoryOptions = {},
  ) {}

  /** The shared informer for a kind (created on first use; started by start()). */
  informerFor<K extends KindName>(kind: K, scope: InformerScope = {}): SharedIndexInformer<K> {
    const id = `${kind}|${scope.namespace ?? ''}|${scope.labelSelector ?? ''}|${scope.fieldSelector ?? ''}`;
    let informer = this.informers.get(id) as SharedIndexInformer<K> | undefined;
    if (!informer) {
      informer = new SharedIndexInformer<K>({
        client: this.client,
        kind,
        ...scope,
        clock: this.options.clock,
        metrics: this.options.metrics,
        logger: this.options.logger,
        reflector: this.options.reflector as InformerOptions<K>['reflector'],
      });
      this.informers.set(id, informer as unknown as SharedIndexInformer<KindName>);
      if (this.started) informer.run();
    }
    return informer;
  }

  /** Starts every informer made so far (and any made later). */
  start(): void {
    this.started = true;
    for (const i of this.informers.values()) i.run();
  }

  /** Resolves true once every informer has its first list, false on timeout. */
  async waitForCacheSync(timeoutMs = 60_000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref?.();
    });
    const synced = Promise.all([...this.informers.values()].map((i) => i.whenSynced())).then(() => true);
    try {
      return await Promise.race([synced, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  shutdown(): void {
    for (const i of this.informers.values()) i.stop();
  }
}
