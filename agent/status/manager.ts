/**
 * Node status reporting, as the kubelet does it (seed 000): register the Node, then every
 * 10 s compute status from the machine; write it only when something changed or 5 minutes
 * passed since the last write, as a strategic merge patch of what changed; up to 5 tries, the
 * first reading the Node from the apiserver's cache, later ones from the store. Right after
 * registering, one update goes out at once so the node is Ready quickly.
 */
import { isAlreadyExists, isNotFound } from '../../client/api/errors.js';
import type { Node, NodeCondition } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import type { EventRecorder } from '../../client/events/recorder.js';
import { Backoff } from '../../client/util/backoff.js';
import type { Clock } from '../../client/util/clock.js';
import { Sleeper } from '../../client/util/sleeper.js';
import { clone } from '../../client/util/objects.js';
import type { AgentConfig } from '../config.js';
import type { ControlPlaneContact } from '../contact.js';
import type { Logger } from '../logger.js';
import type { MachineInfo, MachineReader, MachineSample } from '../machine/types.js';
import { nodeStatusPatch } from './patch.js';
import { PressureTracker } from './pressure.js';
import { nodeStatusHasChanged, setNodeStatus } from './setters.js';

export const NODE_STATUS_UPDATE_RETRY = 5;

export interface NodeStatusManagerOptions {
  client: Client;
  reader: MachineReader;
  config: AgentConfig;
  clock: Clock;
  logger: Logger;
  recorder?: EventRecorder;
  /** Problems that make the node not ready, e.g. the pod runtime failing (empty: ready). */
  health?: () => string[];
  /** The Node as the agent's informer last saw it: the first try of a round starts from it. */
  cachedNode?: () => Node | undefined;
  /** Logs outages of the control plane once: writes failing for want of it are logged at debug. */
  contact?: ControlPlaneContact;
}

/**
 * The events the kubelet's condition setters record (pkg/kubelet/nodestatus), one per change of
 * a condition's status. All are Normal, pressure included: they tell what the node reports, and
 * a node's pressure is read from its conditions, not from the type of an event.
 */
const CONDITION_EVENTS: Record<string, { onTrue: string; onFalse: string }> = {
  MemoryPressure: { onTrue: 'NodeHasInsufficientMemory', onFalse: 'NodeHasSufficientMemory' },
  DiskPressure: { onTrue: 'NodeHasDiskPressure', onFalse: 'NodeHasNoDiskPressure' },
  PIDPressure: { onTrue: 'NodeHasInsufficientPID', onFalse: 'NodeHasSufficientPID' },
  Ready: { onTrue: 'NodeReady', onFalse: 'NodeNotReady' },
};

export class NodeStatusManager {
  private info: MachineInfo | undefined;
  private readonly tracker: PressureTracker;
  private lastReport = -Infinity;
  private registered = false;
  private stopped = false;
  private readonly backoff: Backoff;
  private readonly sleeper: Sleeper;
  private loop: Promise<void> | undefined;
  /** The last reading, shared with the metrics reporter. */
  latestSample: MachineSample | undefined;
  /** Status writes made (for tests and metrics). */
  writes = 0;

  constructor(private readonly options: NodeStatusManagerOptions) {
    this.tracker = new PressureTracker(options.config.evictionHard, options.config.pressureTransitionMs);
    this.backoff = new Backoff(
      { initialMs: 500, maxMs: 10_000, jitter: 0.5, resetAfterMs: 60_000 },
      options.clock,
    );
    this.sleeper = new Sleeper(options.clock);
  }

  get isRegistered(): boolean {
    return this.registered;
  }

  /** Applies new eviction thresholds from the next reading on. */
  setEvictionThresholds(thresholds: AgentConfig['evictionHard']): void {
    this.tracker.setThresholds(thresholds);
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
    const { logger, config } = this.options;
    while (!this.stopped) {
      if (!this.registered) {
        try {
          await this.register();
          this.backoff.reset();
          // The fast update: report right away instead of after the first period.
          continue;
        } catch (err) {
          const delay = this.backoff.next();
          logger[this.levelFor(err)](
            { node: config.nodeName, err: (err as Error).message, retryInMs: Math.round(delay) },
            'cannot register the node; retrying',
          );
          await this.sleeper.sleep(delay);
          continue;
        }
      }
      await this.syncNodeStatus();
      await this.sleeper.sleep(config.statusUpdateMs);
    }
  }

  /** Creates the Node, or adopts an existing one (after a restart) and fixes its labels. */
  private async register(): Promise<void> {
    const { client, config, reader, logger } = this.options;
    this.info ??= await reader.info();
    const labels = {
      'kubernetes.io/hostname': config.nodeName,
      'kubernetes.io/os': this.info.operatingSystem,
      'kubernetes.io/arch': this.info.architecture,
      ...config.labels,
    };
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: config.nodeName, labels },
      spec: config.taints.length ? { taints: config.taints } : {},
    };
    this.latestSample = await reader.sample();
    setNodeStatus(node, this.statusInputs(this.latestSample));
    try {
      const created = await client.create(node);
      logger.info({ node: config.nodeName }, 'node registered');
      this.options.recorder?.event(created, 'Normal', 'Starting', 'Starting kubelab-agent.');
      // The kubelet reports each pressure condition's first value (NodeHasSufficientMemory, …),
      // but not the first Ready: recordTransitions knows which.
      this.recordTransitions({ kind: 'Node' }, created);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await client.get('Node', config.nodeName);
      const missing = Object.entries(labels).filter(([k, v]) => existing.metadata?.labels?.[k] !== v);
      if (missing.length) {
        await client.patch('Node', config.nodeName, { metadata: { labels: Object.fromEntries(missing) } });
      }
      logger.info({ node: config.nodeName }, 'node already registered; taking it over');
      // The kubelet says so at every start, not only the first (Run: "Starting kubelet.").
      this.options.recorder?.event(existing, 'Normal', 'Starting', 'Starting kubelab-agent.');
    }
    this.registered = true;
    this.lastReport = -Infinity;
  }

  /** One round: read the machine, then up to 5 tries to report. */
  async syncNodeStatus(): Promise<void> {
    const { reader, logger, config } = this.options;
    let sample: MachineSample;
    try {
      sample = await reader.sample();
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'cannot read the machine; keeping the last reading');
      if (!this.latestSample) return;
      sample = this.latestSample;
    }
    this.latestSample = sample;
    let lastError: unknown;
    for (let attempt = 0; attempt < NODE_STATUS_UPDATE_RETRY; attempt++) {
      try {
        await this.tryUpdateNodeStatus(attempt, sample);
        return;
      } catch (err) {
        // The first try reads the informer's copy or the apiserver's cache, which can lag a
        // registration just made (on etcd the cache learns of it a moment after the create is
        // acknowledged): only a try that read the store says the Node is gone.
        if (isNotFound(err) && attempt > 0) {
          logger.warn({ node: config.nodeName }, 'the Node object is gone; registering again');
          this.registered = false;
          return;
        }
        lastError = err;
        if (isNotFound(err)) continue;
        logger[this.levelFor(err)](
          { node: config.nodeName, attempt, err: (err as Error).message },
          'error updating node status, will retry',
        );
      }
    }
    logger[this.options.contact?.explains(lastError) ? 'debug' : 'error'](
      { node: config.nodeName },
      `update node status exceeds retry count (${NODE_STATUS_UPDATE_RETRY})`,
    );
  }

  /** A failure for want of the control plane is part of an outage the contact logs once. */
  private levelFor(err: unknown): 'debug' | 'warn' {
    return this.options.contact?.explains(err) ? 'debug' : 'warn';
  }

  private async tryUpdateNodeStatus(attempt: number, sample: MachineSample): Promise<void> {
    const { client, config, clock } = this.options;
    // The first try starts from the informer's copy (no call at all), or the apiserver's cache
    // before the informer has it; a retry reads the store. A stale copy does no harm: the patch
    // holds only what this round changed, and no resourceVersion.
    const cached = attempt === 0 ? this.options.cachedNode?.() : undefined;
    const current =
      cached ?? (await client.get('Node', config.nodeName, attempt === 0 ? { resourceVersion: '0' } : {}));
    const next = clone(current);
    const inputs = this.statusInputs(sample);
    setNodeStatus(next, inputs);
    const now = inputs.now;
    if (now < this.lastReport + config.statusReportMs && !nodeStatusHasChanged(current.status, next.status))
      return;
    await client.patch('Node', config.nodeName, nodeStatusPatch(current, next), {
      type: 'strategic',
      subresource: 'status',
    });
    this.writes++;
    this.lastReport = clock.now();
    // Recorded only once the write went through: a retry starts from the Node as stored, so
    // each reboot and each transition is one event, however many tries it took.
    this.recordReboot(current, next);
    this.recordTransitions(current, next);
  }

  private statusInputs(sample: MachineSample) {
    const now = this.options.clock.now();
    return {
      info: this.info!,
      pressure: this.tracker.observe(sample, now),
      notReadyReasons: this.options.health?.() ?? [],
      config: this.options.config,
      now,
    };
  }

  /**
   * The kubelet's MachineInfo setter: a stored bootID that differs from the machine's means the
   * machine rebooted since the Node was last written. An empty stored bootID (a Node just
   * created, or written by something else) is no evidence of a reboot.
   */
  private recordReboot(before: Node, after: Node): void {
    const stored = before.status?.nodeInfo?.bootID;
    const current = after.status?.nodeInfo?.bootID;
    if (!stored || !current || stored === current) return;
    this.options.recorder?.event(
      after,
      'Warning',
      'Rebooted',
      `Node ${this.options.config.nodeName} has been rebooted, boot id: ${current}`,
    );
  }

  /**
   * One event per condition whose status changed, as the kubelet's setters decide it: a pressure
   * condition the Node did not have counts as changed (the kubelet starts it from Unknown), so a
   * new node reports NodeHasSufficientMemory and the like; a Ready condition the Node did not
   * have does not (the kubelet just appends it), so NodeReady and NodeNotReady mean transitions.
   */
  private recordTransitions(before: Node, after: Node): void {
    const recorder = this.options.recorder;
    if (!recorder) return;
    const statusOf = (conds: NodeCondition[] | undefined, type: string) =>
      conds?.find((c) => c.type === type)?.status;
    for (const [type, { onTrue, onFalse }] of Object.entries(CONDITION_EVENTS)) {
      const was = statusOf(before.status?.conditions, type);
      const is = statusOf(after.status?.conditions, type);
      if (was === is || is === undefined) continue;
      if (type === 'Ready' && was === undefined) continue;
      const reason = is === 'True' ? onTrue : onFalse;
      recorder.event(
        after,
        'Normal',
        reason,
        `Node ${this.options.config.nodeName} status is now: ${reason}`,
      );
    }
  }
}
