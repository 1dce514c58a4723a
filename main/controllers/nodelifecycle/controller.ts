/**
 * The node lifecycle controller (Kubernetes' nodelifecycle, seed 003). Every monitor period
 * it checks each node's heartbeats (its Lease and its Ready condition), marks silent nodes
 * Unknown, and taints NoExecute the nodes that are not Ready (not-ready) or Unknown
 * (unreachable) through per-zone rate-limited queues, so that a network blip does not become a
 * mass eviction; the taint eviction controller then moves pods off. Zones that lose most of
 * their nodes slow down, and when every zone is down it stops altogether: then the fault is
 * most likely the control plane's own network. Beside that, NoSchedule taints follow the
 * pressure conditions and spec.unschedulable, so the scheduler needs only taints; and the beta
 * OS and architecture labels follow the stable ones, for charts that still select on them.
 */
import { isNotFound, isConflict } from '../../../client/api/errors.js';
import { NODE_NAME_INDEX, nodeNameIndexFunc } from '../../../client/cache/keys.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import type { EventRecorder } from '../../../client/events/recorder.js';
import { hasTaint, TAINT_NOT_READY, TAINT_UNREACHABLE } from '../../../client/api/taints.js';
import type { Node, NodeCondition, Pod, Taint } from '../../../client/api/types.js';
import { NODE_LEASE_NAMESPACE } from '../../../client/api/wellknown.js';
import { Sleeper } from '../../../client/util/sleeper.js';
import { nextTurn } from '../../../client/util/nextturn.js';
import type { Controller, ControllerContext, ControllerDefinition } from '../types.js';
import { KeyWorker } from '../worker.js';
import { noScheduleTaintChange } from './conditiontaints.js';
import { DEFAULT_NODE_LIFECYCLE, type NodeLifecycleConfig } from './config.js';
import { decideHealth, observeHeartbeats, readyCondition, type NodeHealth } from './health.js';
import { nodeLifecycleMetrics, type NodeLifecycleMetrics } from './metrics.js';
import { swapNodeTaints } from './nodetaints.js';
import { labelFixes, labelFixPatch } from './nodelabels.js';
import { markPodsNotReady } from './podsnotready.js';
import { RateLimitedTimedQueue, type TryResult } from './ratelimitedqueue.js';
import {
  computeZoneState,
  evictionRate,
  isExcludedFromDisruptionChecks,
  zoneOf,
  type ZoneState,
} from './zones.js';

export const NOT_READY_TAINT: Taint = { key: TAINT_NOT_READY, effect: 'NoExecute' };
export const UNREACHABLE_TAINT: Taint = { key: TAINT_UNREACHABLE, effect: 'NoExecute' };
export { EXCLUDE_DISRUPTION_LABEL } from './zones.js';
/** Writes in flight at once during a check (status, pods, taints). */
const PARALLELISM = 8;
const STATUS_ATTEMPTS = 5;

export class NodeLifecycleController implements Controller {
  private readonly config: NodeLifecycleConfig;
  private readonly nodes: SharedIndexInformer<'Node'>;
  private readonly leases: SharedIndexInformer<'Lease'>;
  private readonly pods: SharedIndexInformer<'Pod'>;
  private readonly recorder: EventRecorder;
  private readonly metrics: NodeLifecycleMetrics;
  /** Nodes seen by the last check, for added/deleted classification. */
  private readonly known = new Map<string, Node>();
  private readonly health = new Map<string, NodeHealth>();
  private readonly zoneStates = new Map<string, ZoneState>();
  private readonly tainters = new Map<string, RateLimitedTimedQueue>();
  /** Nodes whose pods could not all be marked not Ready; tried again next check. */
  private readonly nodesToRetry = new Set<string>();
  /** When the last health check started (a long gap means this controller was not running). */
  private lastMonitorAt: number | undefined;
  /** Per node name: NoSchedule taints from conditions, and the mirrored beta labels. */
  private readonly nodeWorker: KeyWorker;
  /** Pods newly bound to a node that is not Ready, per pod key. */
  private readonly podWorker: KeyWorker;
  private readonly sleepers: Sleeper[] = [];
  private loops: Promise<void>[] = [];
  private readonly busy = new Set<string>();

  constructor(private readonly ctx: ControllerContext) {
    this.config = { ...DEFAULT_NODE_LIFECYCLE, ...ctx.config?.nodeLifecycle };
    this.recorder = ctx.recorder('node-controller');
    this.metrics = nodeLifecycleMetrics(ctx.metrics);
    this.nodes = ctx.informers.informerFor('Node');
    this.leases = ctx.informers.informerFor('Lease', { namespace: NODE_LEASE_NAMESPACE });
    this.pods = ctx.informers.informerFor('Pod');
    this.pods.addIndexers({ [NODE_NAME_INDEX]: nodeNameIndexFunc });
    const worker = (name: string, sync: (key: string) => Promise<void>) =>
      new KeyWorker({ name, clock: ctx.clock, logger: ctx.logger, metrics: ctx.queueMetrics }, sync);
    this.nodeWorker = worker('node_lifecycle_controller', (name) => this.syncNode(name));
    this.podWorker = worker('node_lifecycle_controller_pods', (key) => this.syncPod(key));

    this.nodes.addEventHandler({
      onAdd: (n) => this.nodeWorker.enqueue(n.metadata!.name!),
      onUpdate: (_o, n) => {
        this.noteHeartbeat(n.metadata!.name!);
        this.nodeWorker.enqueue(n.metadata!.name!);
      },
      onDelete: (n) => this.forget(n.metadata!.name!),
    });
    // Heartbeats are noted when they arrive, not at the next check: a node is then judged
    // silent exactly a grace period after its last one (Kubernetes is up to a period later).
    this.leases.addEventHandler({
      onAdd: (l) => this.noteHeartbeat(l.metadata!.name!),
      onUpdate: (_o, l) => this.noteHeartbeat(l.metadata!.name!),
    });
    const podBound = (old: Pod | undefined, pod: Pod) => {
      if (pod.spec?.nodeName && pod.spec.nodeName !== old?.spec?.nodeName) {
        this.podWorker.enqueue(`${pod.metadata!.namespace}/${pod.metadata!.name}`);
      }
    };
    this.pods.addEventHandler({ onAdd: (p) => podBound(undefined, p), onUpdate: podBound });
  }

  run(workers: number): void {
    this.nodeWorker.run(workers);
    this.podWorker.run(workers);
    this.loops = [
      this.every('monitor', this.config.monitorPeriodMs, () => this.monitorNodeHealth()),
      this.every('taint', this.config.taintPassMs, () => this.doNoExecuteTaintingPass()),
    ];
  }

  async stop(): Promise<void> {
    for (const s of this.sleepers) s.stop();
    await Promise.all([...this.loops, this.nodeWorker.stop(), this.podWorker.stop()]);
  }

  /**
   * Resolves once nothing is in flight: both loops asleep, both queues empty. For tests that
   * move a fake clock and then look at the cluster.
   */
  async idle(): Promise<void> {
    for (let quiet = 0; quiet < 2;) {
      await nextTurn();
      const still = this.busy.size > 0 || !this.nodeWorker.queue.isIdle() || !this.podWorker.queue.isIdle();
      quiet = still ? 0 : quiet + 1;
    }
  }

  /** The zone states after the last check (for tests and the GUI's cluster view). */
  zones(): Map<string, ZoneState> {
    return new Map(this.zoneStates);
  }

  /** Nodes tainted per second in a zone now. */
  zoneRate(zone: string): number | undefined {
    return this.tainters.get(zone)?.qps;
  }

  /** Runs `pass` now and then `periodMs` after each pass ends (wait.Until). */
  private async every(name: string, periodMs: number, pass: () => Promise<void>): Promise<void> {
    const sleeper = new Sleeper(this.ctx.clock);
    this.sleepers.push(sleeper);
    while (!sleeper.isStopped) {
      this.busy.add(name);
      try {
        await pass();
      } catch (err) {
        this.ctx.logger.error(
          { pass: name, err: (err as Error).message },
          'node lifecycle pass failed; retrying next period',
        );
      } finally {
        this.busy.delete(name);
      }
      await sleeper.sleep(periodMs);
    }
  }

  // --- monitorNodeHealth -------------------------------------------------------------------

  async monitorNodeHealth(): Promise<void> {
    const started = this.ctx.clock.now();
    this.forgiveOwnPause(started);
    const nodes = this.nodes.list();
    this.classify(nodes);

    const zoneReady = new Map<string, string[]>();
    await parallelize(nodes, PARALLELISM, async (cached) => {
      const name = cached.metadata!.name!;
      const checked = await this.checkNodeHealth(cached);
      if (!checked) return;
      const { node, observedReady, currentReady } = checked;
      if (!isExcludedFromDisruptionChecks(node)) {
        const zone = zoneOf(node);
        const list = zoneReady.get(zone) ?? [];
        list.push(currentReady?.status ?? 'Unknown');
        zoneReady.set(zone, list);
      }
      if (!currentReady) return;
      await this.processTaintBasedEviction(node, observedReady);
      const needsRetry = this.nodesToRetry.has(name);
      const becameNotReady = currentReady.status !== 'True' && observedReady.status === 'True';
      if (becameNotReady) {
        this.recorder.event(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
      }
      if (becameNotReady || (needsRetry && observedReady.status !== 'True')) {
        try {
          await markPodsNotReady(
            this.ctx.client,
            this.recorder,
            this.podsOn(name),
            name,
            this.ctx.clock.now(),
          );
        } catch (err) {
          this.ctx.logger.warn(
            { node: name, err: (err as Error).message },
            'could not mark pods not ready; retrying next check',
          );
          this.nodesToRetry.add(name);
          return;
        }
      }
      this.nodesToRetry.delete(name);
    });

    await this.handleDisruption(zoneReady, nodes);
    this.metrics.monitorDuration?.observe((this.ctx.clock.now() - started) / 1000);
  }

  /**
   * A gap between checks longer than the grace period means this controller was not running
   * (the desktop's machine slept, the process was stopped): heartbeats could not be seen, not
   * that the agents stopped sending them. As after a restart, every node gets a fresh grace
   * period instead of being declared Unknown — and its pods evicted — all at once on waking.
   */
  private forgiveOwnPause(now: number): void {
    const last = this.lastMonitorAt;
    this.lastMonitorAt = now;
    if (last === undefined || now - last <= this.config.monitorGracePeriodMs) return;
    this.ctx.logger.warn(
      { pausedForMs: now - last, nodes: this.health.size },
      'the node lifecycle controller did not run for longer than the grace period (sleep or a stopped process); giving every node a fresh grace period',
    );
    for (const [name, h] of this.health) this.health.set(name, { ...h, probeTimestamp: now });
  }

  /** Added and deleted nodes get events; a node in a zone not seen before gets a tainter. */
  private classify(nodes: Node[]): void {
    const seen = new Set<string>();
    for (const node of nodes) {
      const name = node.metadata!.name!;
      seen.add(name);
      this.ensureZone(zoneOf(node));
      if (!this.known.has(name)) {
        this.ctx.logger.info({ node: name }, 'observed a new node');
        this.recorder.event(node, 'Normal', 'RegisteredNode', `Registered Node ${name} in Controller`);
      }
      this.known.set(name, node);
    }
    for (const [name, node] of this.known) {
      if (seen.has(name)) continue;
      this.ctx.logger.info({ node: name }, 'observed a node deletion');
      this.recorder.event(node, 'Normal', 'RemovingNode', `Removing Node ${name} from Controller`);
      this.known.delete(name);
    }
  }

  private ensureZone(zone: string): void {
    if (this.zoneStates.has(zone)) return;
    this.zoneStates.set(zone, 'Initial');
    this.tainters.set(zone, new RateLimitedTimedQueue(this.ctx.clock, this.config.evictionRate));
    this.metrics.evictions?.inc({ zone }, 0);
  }

  /**
   * tryUpdateNodeHealth with its retries: decide from the cached node and write the Unknown
   * conditions if it went silent; on a conflict decide again from a fresh read.
   */
  private async checkNodeHealth(
    cached: Node,
  ): Promise<{ node: Node; observedReady: NodeCondition; currentReady?: NodeCondition } | undefined> {
    const name = cached.metadata!.name!;
    const lease = this.leases.get(name, NODE_LEASE_NAMESPACE);
    const saved = this.health.get(name);
    let node = cached;
    for (let attempt = 1; ; attempt++) {
      const now = this.ctx.clock.now();
      const decision = decideHealth(node, lease, saved, now, this.config);
      if (!decision.unknownConditions) {
        this.health.set(name, decision.health);
        return { node, observedReady: decision.observedReady, currentReady: decision.currentReady };
      }
      try {
        const written = await this.ctx.client.updateStatus<Node>({
          ...node,
          status: { ...node.status, conditions: decision.unknownConditions },
        });
        this.health.set(name, decision.health);
        this.ctx.logger.warn(
          { node: name, silentForMs: now - decision.health.probeTimestamp, graceMs: decision.gracePeriodMs },
          'node stopped posting status; conditions set to Unknown',
        );
        return { node: written, observedReady: decision.observedReady, currentReady: decision.currentReady };
      } catch (err) {
        this.health.set(name, decision.healthIfWriteFails);
        if (isNotFound(err)) return undefined;
        if (!isConflict(err) || attempt >= STATUS_ATTEMPTS) {
          this.ctx.logger.warn(
            { node: name, err: (err as Error).message },
            'could not update node health; no pods will be evicted this time',
          );
          return undefined;
        }
      }
      try {
        node = await this.ctx.client.get('Node', name);
      } catch (err) {
        if (!isNotFound(err))
          this.ctx.logger.warn({ node: name, err: (err as Error).message }, 'could not read node');
        return undefined;
      }
    }
  }

  /** Decides on the Ready condition as the node last reported it, like Kubernetes. */
  private async processTaintBasedEviction(node: Node, observedReady: NodeCondition): Promise<void> {
    const name = node.metadata!.name!;
    const taints = node.spec?.taints;
    switch (observedReady.status) {
      case 'False':
        // Already unreachable: switch at once, without waiting for the rate limiter.
        if (hasTaint(taints, UNREACHABLE_TAINT))
          await this.swap(node, [NOT_READY_TAINT], [UNREACHABLE_TAINT]);
        else if (!hasTaint(taints, NOT_READY_TAINT)) this.tainters.get(zoneOf(node))?.add(name);
        break;
      case 'Unknown':
        if (hasTaint(taints, NOT_READY_TAINT)) await this.swap(node, [UNREACHABLE_TAINT], [NOT_READY_TAINT]);
        else if (!hasTaint(taints, UNREACHABLE_TAINT)) this.tainters.get(zoneOf(node))?.add(name);
        break;
      case 'True':
        await this.markNodeAsReachable(node);
        break;
    }
  }

  private async markNodeAsReachable(node: Node): Promise<void> {
    this.tainters.get(zoneOf(node))?.remove(node.metadata!.name!);
    const taints = node.spec?.taints;
    if (!hasTaint(taints, NOT_READY_TAINT) && !hasTaint(taints, UNREACHABLE_TAINT)) return;
    if (await this.swap(node, [], [NOT_READY_TAINT, UNREACHABLE_TAINT])) {
      this.ctx.logger.info({ node: node.metadata!.name }, 'node is healthy again; NoExecute taints removed');
    }
  }

  private async swap(node: Node, add: Taint[], remove: Taint[]): Promise<boolean> {
    try {
      return await swapNodeTaints(this.ctx.client, node, add, remove, this.ctx.clock.now());
    } catch (err) {
      this.ctx.logger.warn(
        { node: node.metadata!.name, err: (err as Error).message },
        'could not change node taints; retrying next check',
      );
      return false;
    }
  }

  // --- zones -------------------------------------------------------------------------------

  private async handleDisruption(zoneReady: Map<string, string[]>, nodes: Node[]): Promise<void> {
    const { metrics } = this;
    const newStates = new Map<string, ZoneState>();
    let allAreFullyDisrupted = true;
    for (const [zone, statuses] of zoneReady) {
      const { state, notReady } = computeZoneState(statuses, this.config.unhealthyZoneThreshold);
      metrics.zoneSize?.set({ zone }, statuses.length);
      metrics.zoneHealth?.set({ zone }, (100 * (statuses.length - notReady)) / statuses.length);
      metrics.unhealthyNodes?.set({ zone }, notReady);
      if (state !== 'FullDisruption') allAreFullyDisrupted = false;
      newStates.set(zone, state);
      if (!this.zoneStates.has(zone)) this.ensureZone(zone);
    }
    let allWereFullyDisrupted = true;
    for (const [zone, state] of [...this.zoneStates]) {
      if (!zoneReady.has(zone)) {
        // A zone with no nodes left (or only excluded ones) is no longer counted.
        metrics.zoneSize?.set({ zone }, 0);
        metrics.zoneHealth?.set({ zone }, 100);
        metrics.unhealthyNodes?.set({ zone }, 0);
        this.setZoneStateMetric(zone, undefined);
        this.zoneStates.delete(zone);
        continue;
      }
      if (state !== 'FullDisruption') allWereFullyDisrupted = false;
    }
    if (allAreFullyDisrupted && allWereFullyDisrupted) return;

    if (allAreFullyDisrupted) {
      this.ctx.logger.warn('every node is not Ready: assuming the control plane is cut off; evictions stop');
      await parallelize(nodes, PARALLELISM, (n) => this.markNodeAsReachable(n));
      for (const zone of this.zoneStates.keys()) {
        this.tainters.get(zone)?.swapLimiter(0);
        this.zoneStates.set(zone, 'FullDisruption');
        this.setZoneStateMetric(zone, 'FullDisruption');
      }
      return;
    }
    if (allWereFullyDisrupted) {
      this.ctx.logger.info(
        'some nodes are Ready again: leaving full disruption; giving every node a fresh grace period',
      );
      const now = this.ctx.clock.now();
      for (const [name, h] of this.health)
        this.health.set(name, { ...h, probeTimestamp: now, readyTransitionTimestamp: now });
      for (const zone of this.zoneStates.keys())
        this.setZone(zone, zoneReady.get(zone)!.length, newStates.get(zone)!);
      return;
    }
    for (const [zone, state] of this.zoneStates) {
      const next = newStates.get(zone)!;
      if (state === next) continue;
      this.ctx.logger.info({ zone, from: state, to: next }, 'zone changed state');
      this.setZone(zone, zoneReady.get(zone)!.length, next);
    }
  }

  private setZone(zone: string, size: number, state: ZoneState): void {
    this.tainters.get(zone)?.swapLimiter(evictionRate(state, size, this.config));
    this.zoneStates.set(zone, state);
    this.setZoneStateMetric(zone, state);
  }

  private setZoneStateMetric(zone: string, current: ZoneState | undefined): void {
    for (const state of ['Initial', 'Normal', 'PartialDisruption', 'FullDisruption'] as const) {
      this.metrics.zoneState?.set({ zone, state }, state === current ? 1 : 0);
    }
  }

  // --- NoExecute tainting pass -------------------------------------------------------------

  async doNoExecuteTaintingPass(): Promise<void> {
    for (const [zone, tainter] of this.tainters) {
      await tainter.try(async ({ value: name }): Promise<TryResult> => {
        const node = this.nodes.get(name);
        if (!node) return { done: true };
        const ready = readyCondition(node);
        if (!ready) return { done: false, retryAfterMs: 50 };
        // The two taints mirror the Ready condition, so they never coexist.
        let add: Taint;
        let opposite: Taint;
        if (ready.status === 'False') [add, opposite] = [NOT_READY_TAINT, UNREACHABLE_TAINT];
        else if (ready.status === 'Unknown') [add, opposite] = [UNREACHABLE_TAINT, NOT_READY_TAINT];
        else return { done: true };
        if (!(await this.swap(node, [add], [opposite]))) return { done: false, retryAfterMs: 50 };
        this.metrics.evictions?.inc({ zone });
        this.ctx.logger.warn({ node: name, taint: add.key, zone }, 'node tainted NoExecute');
        return { done: true };
      });
    }
  }

  // --- workers -----------------------------------------------------------------------------

  /**
   * Kubernetes' doNodeProcessingPassWorker: taints, then labels, each from the cached node. The
   * second runs even if the first failed (they do not depend on each other); either failure
   * retries the node, where Kubernetes only logs it.
   */
  private async syncNode(name: string): Promise<void> {
    let failure: unknown;
    try {
      await this.syncNoScheduleTaints(name);
    } catch (err) {
      failure = err;
    }
    try {
      await this.reconcileNodeLabels(name);
    } catch (err) {
      failure ??= err;
    }
    if (failure !== undefined) throw failure;
  }

  private async reconcileNodeLabels(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) return;
    const fixes = labelFixes(node);
    if (!fixes.length) return;
    try {
      await this.ctx.client.patch('Node', name, labelFixPatch(fixes), { type: 'json' });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    this.ctx.logger.info(
      { node: name, labels: Object.fromEntries(fixes.map((f) => [f.secondary, f.value])) },
      'beta labels set from the stable OS and architecture labels',
    );
  }

  private async syncNoScheduleTaints(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) return;
    const { add, remove } = noScheduleTaintChange(node);
    if (!add.length && !remove.length) return;
    await swapNodeTaints(this.ctx.client, node, add, remove, this.ctx.clock.now());
  }

  /** A pod bound to a node that is not Ready is marked not Ready at once. */
  private async syncPod(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    const pod = this.pods.get(name, namespace);
    const nodeName = pod?.spec?.nodeName;
    if (!pod || !nodeName || !this.health.has(nodeName)) return;
    const node = this.nodes.get(nodeName);
    if (!node) return;
    if (readyCondition(node)?.status === 'True') return;
    await markPodsNotReady(this.ctx.client, this.recorder, [pod], nodeName, this.ctx.clock.now());
  }

  private noteHeartbeat(name: string): void {
    const saved = this.health.get(name);
    const node = this.nodes.get(name);
    if (!saved || !node) return;
    this.health.set(
      name,
      observeHeartbeats(node, this.leases.get(name, NODE_LEASE_NAMESPACE), saved, this.ctx.clock.now()),
    );
  }

  private podsOn(nodeName: string): Pod[] {
    return this.pods.indexer.byIndex(NODE_NAME_INDEX, nodeName);
  }

  private forget(name: string): void {
    this.health.delete(name);
    this.nodesToRetry.delete(name);
    for (const t of this.tainters.values()) t.remove(name);
  }
}

/** Runs `fn` over `items` with at most `limit` at once. */
async function parallelize<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

export const nodeLifecycleController: ControllerDefinition = {
  name: 'nodelifecycle',
  enabledByDefault: true,
  defaultWorkers: 1,
  create: (ctx) => new NodeLifecycleController(ctx),
};
