/**
 * `npm run bench:daemonset`: a DaemonSet on 1,000 hollow nodes that run their pods — how long
 * from creating it until every pod is Running, and how a rolling update goes; the figures, the
 * machine and the date go to BENCHMARKS.md, in the section of this benchmark (replaced on every
 * run). Goal: every pod Running ≤ 10 s after the create call; during the rolling update with
 * maxUnavailable 10%, never more than 10% of the nodes without an available pod.
 *
 * Setup: a fresh `kubelab server` (SQLite, its in-process controllers as it runs them by
 * default: the DaemonSet controller, the scheduler and the garbage collector among them) in a
 * child process on 127.0.0.1, with `--cpu-prof` (see --no-profile); --nodes hollow nodes
 * (1,000) joined ahead with a join token (16 at a time) and run by ONE `kubelab-agent --hollow N`
 * child process at the agent's defaults (the hollow nodes run the pods bound to them with the
 * hollow runtime: a container is running at once, no process), so the control plane, the fleet
 * and this process each have a thread of their own. The bench waits until every node is Ready
 * and untainted, lets the fleet settle (--settle s) and waits (≤ --quiet-wait s) until processes
 * it did not start use < 0.3 cores: the machine has 2 cores, often shared with other benchmarks.
 *
 * The bench watches the pods of its namespace, its DaemonSet and the nodes (gRPC, a connection of
 * its own each) and notes, per pod, the first event in which it exists, has spec.nodeName, is
 * Running, Ready, being deleted, terminal and deleted, with that event's resourceVersion. A
 * watch over gRPC falls seconds behind a busy server, so times come from an "RV clock" as well:
 * a fourth connection polls the server's watch-cache revision every 50 ms (a List of one
 * Namespace at resourceVersion "0"); a write of revision r was committed before the first poll
 * that saw ≥ r answered. A milestone's time is the earlier of the two; both are reported.
 *
 *   1. create: a DaemonSet (one container, image bench/exporter:1, RollingUpdate with
 *      maxUnavailable --max-unavailable, 10%) is created; from the create call: every pod seen
 *      (the DaemonSet controller's share: slow-start batches of 1, 2, 4, … and at most 250
 *      creates per sync), every pod scheduled (the scheduler binds each to the node its node
 *      affinity names), every pod Running (the agents), every pod Ready, and the DaemonSet's
 *      status with numberAvailable = N (the goal's figure: the later of all Running and that);
 *      the controller's creates matched to its plan (syncs, slow-start batches).
 *   2. rolling update: the template's image is patched to bench/exporter:2; from the patch call
 *      until the DaemonSet's status shows the new generation observed with updatedNumberScheduled
 *      = N and numberAvailable = N (and every new pod was seen Ready). Unavailable nodes (no pod
 *      that is Ready and not being deleted: what the controller's rolling update counts) are
 *      counted after every pod event of the watch, in order, so the maximum is that of the API's
 *      own sequence of states, not of a sampling; the maximum of the status's numberUnavailable
 *      is given too. Per node: the old pod marked for deletion → gone (terminal or deleted: the
 *      agent) → the new pod seen (the controller) → scheduled → Running (the agent).
 *
 * Per phase: a timeline (cumulative counts and the cores each process used per window), every
 * process's CPU, the store's writes (resourceVersion before and after), pod writes seen in the
 * watch, the watch's lag and the RV clock's round trips (how long any request waited for the
 * server), nodes that went NotReady or tainted, the server's scheduler and DaemonSet workqueue
 * metrics (/metrics), and with the profile the server main thread's time by part (watch
 * fan-out, scheduler, DaemonSet controller, GC) and its busiest functions. When the goal is
 * missed, the section ends with where the time went, in words, from these figures.
 *
 * Options: --no-append (print only), --nodes 1000, --max-unavailable 10%, --join-concurrency 16,
 * --settle 10, --quiet-wait 30, --wait 180 (seconds per phase before giving up), --profile DIR
 * (where the server's profile goes; default a temp folder, kept), --no-profile, --fleet-profile DIR
 * (CPU-profile the hollow fleet's process too, over its whole run, into DIR). A quick run:
 * `npm run bench:daemonset -- --no-append --nodes 100`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isPodReady, isPodTerminal } from '../../client/api/pods.js';
import type { DaemonSet, Node, Pod } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client, Watch } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { BURST_REPLICAS } from '../../main/controllers/daemonset/controller.js';
import { SLOW_START_INITIAL_BATCH_SIZE } from '../../main/controllers/common/slowstart.js';
import { targetNodeName } from '../../main/controllers/daemonset/util.js';
import type { DaemonSetStatus } from '../../proto/gen/kubelab/v1/apps.js';
import { AGENT_BIN } from '../support/agentproc.js';
import { freePort } from '../support/etcd.js';
import { REPO_ROOT, startChildControlPlane, type ChildControlPlane } from './lib/child.js';
import { checkAlive, startProc, type Proc } from './lib/childproc.js';
import { monotonicUs, summarizeCpuProfile, type CpuProfileSummary } from './lib/cpuprofile.js';
import { joinAhead } from './lib/fleet.js';
import { changedNote, machineInfo, type MachineInfo } from './lib/machine.js';
import { memoryOf, MiB, ProcSampler } from './lib/proc.js';
import { replaceSection, table } from './lib/report.js';
import { Cleanup, log } from './lib/run.js';
import { scrape, scrapeDelta, type Scrape } from './lib/scrape.js';
import { fmt, median, nowMs, percentileSorted, sleep, sortedCopy } from './lib/stats.js';

// ------------------------------------------------------------------------------ settings

interface Args {
  append: boolean;
  nodes: number;
  maxUnavailable: string;
  joinConcurrency: number;
  settleSeconds: number;
  quietWaitSeconds: number;
  waitSeconds: number;
  profile: boolean;
  profileDir?: string;
  fleetProfileDir?: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    append: true,
    nodes: 1000,
    maxUnavailable: '10%',
    joinConcurrency: 16,
    settleSeconds: 10,
    quietWaitSeconds: 30,
    waitSeconds: 180,
    profile: true,
  };
  const positive = (v: string, flag: string) => {
    const n = Number(v);
    if (!(n > 0) || !Number.isInteger(n)) throw new Error(`${flag} takes a whole number above 0`);
    return n;
  };
  const seconds = (v: string, flag: string) => {
    const n = Number(v);
    if (!(n >= 0)) throw new Error(`${flag} takes seconds (0 or more)`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--no-append') args.append = false;
    else if (a === '--nodes') args.nodes = positive(value(), a);
    else if (a === '--max-unavailable') {
      const v = value();
      if (!/^\d+%?$/.test(v)) throw new Error('--max-unavailable takes a count (100) or a percentage (10%)');
      args.maxUnavailable = v;
    } else if (a === '--join-concurrency') args.joinConcurrency = positive(value(), a);
    else if (a === '--settle') args.settleSeconds = seconds(value(), a);
    else if (a === '--quiet-wait') args.quietWaitSeconds = seconds(value(), a);
    else if (a === '--wait') args.waitSeconds = positive(value(), a);
    else if (a === '--profile') {
      args.profile = true;
      args.profileDir = value();
    } else if (a === '--no-profile') args.profile = false;
    else if (a === '--fleet-profile') args.fleetProfileDir = value();
    else throw new Error(`unknown option ${a}; see the comment at the top of test/bench/daemonset.bench.ts`);
  }
  return args;
}

const NAMESPACE = 'ds-bench';
const DS_NAME = 'exporter';
const HOLLOW_PREFIX = 'ds-hollow';
const IMAGE_1 = 'bench/exporter:1';
const IMAGE_2 = 'bench/exporter:2';
const GOAL_RUNNING_MS = 10_000;
/** Cores that processes this benchmark did not start may use while the machine counts as quiet. */
const QUIET_CORES = 0.3;
/** How often the RV clock polls the store's revision, ms. */
const RV_POLL_MS = 50;
/** Timeline rows per phase, at most. */
const TIMELINE_ROWS = 24;

/** The maxUnavailable the controller derives (a percentage of the desired nodes, rounded up). */
function allowedUnavailable(maxUnavailable: string, nodes: number): number {
  const m = /^(\d+)%$/.exec(maxUnavailable);
  return m ? Math.ceil((Number(m[1]) * nodes) / 100) : Number(maxUnavailable);
}

function daemonSet(maxUnavailable: string): DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: DS_NAME, namespace: NAMESPACE },
    spec: {
      selector: { matchLabels: { app: DS_NAME } },
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          maxUnavailable: /%$/.test(maxUnavailable) ? maxUnavailable : Number(maxUnavailable),
          maxSurge: 0,
        },
      },
      template: {
        metadata: { labels: { app: DS_NAME } },
        spec: { containers: [{ name: 'exporter', image: IMAGE_1 }] },
      },
    },
  };
}

// ------------------------------------------------------------------------------ watching

type Milestone = 'added' | 'scheduled' | 'running' | 'ready' | 'deleting' | 'terminal' | 'deleted';

/**
 * What the watch saw of one pod: per milestone, when the bench's watch delivered it (this
 * process's clock, ms) and the resourceVersion of the write that reached it.
 */
interface PodRecord {
  uid: string;
  name: string;
  node: string;
  image: string;
  seen: Partial<Record<Milestone, number>>;
  rv: Partial<Record<Milestone, number>>;
  /** Ready and not being deleted: the node has an available pod. */
  available: boolean;
  /** Watch events about it (one per write of the pod). */
  events: number;
}

/**
 * When each revision was committed, from this side: the revision of the server's watch cache
 * (which follows the store's every write, and which its in-process controllers see) polled
 * every RV_POLL_MS with a List of one Namespace at resourceVersion "0" (served from the cache,
 * no wait), on a connection of its own. A write of revision r was in the cache before the
 * answer of the first poll that returned ≥ r: a clock that does not depend on how late a
 * client's watch delivers.
 */
class RvClock {
  private readonly calls: number[] = [];
  private readonly answers: number[] = [];
  private readonly revisions: number[] = [];
  /** Revisions ascending, with the earliest answer among the polls that saw at least that revision. */
  private index: { revisions: number[]; firstAnswer: number[] } | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly inFlight = new Set<Promise<void>>();
  failures = 0;

  constructor(private readonly client: Client) {
    // Polls are not awaited one by one: on a busy server an answer can take a second, and the
    // clock would tick that slowly. At most 20 in flight.
    this.timer = setInterval(() => {
      if (this.inFlight.size >= 20) return;
      const call = nowMs();
      const p: Promise<void> = client
        .list('Namespace', { limit: 1, resourceVersion: '0' })
        .then(
          (list) => {
            const rv = Number(list.resourceVersion);
            if (!Number.isFinite(rv)) return;
            this.calls.push(call);
            this.answers.push(nowMs());
            this.revisions.push(rv);
            this.index = undefined;
          },
          () => void this.failures++,
        )
        .finally(() => this.inFlight.delete(p));
      this.inFlight.add(p);
    }, RV_POLL_MS);
  }

  /** The earliest answer of a poll that saw revision `rv` (undefined: none has yet). */
  committedBy(rv: number | undefined): number | undefined {
    if (rv === undefined || !Number.isFinite(rv)) return undefined;
    if (!this.index) {
      const order = this.revisions.map((_, i) => i).sort((a, b) => this.revisions[a] - this.revisions[b]);
      const firstAnswer = new Array<number>(order.length);
      let best = Infinity;
      for (let k = order.length - 1; k >= 0; k--) {
        best = Math.min(best, this.answers[order[k]]);
        firstAnswer[k] = best;
      }
      this.index = { revisions: order.map((i) => this.revisions[i]), firstAnswer };
    }
    const { revisions, firstAnswer } = this.index;
    let lo = 0;
    let hi = revisions.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (revisions[mid] < rv) lo = mid + 1;
      else hi = mid;
    }
    return lo < revisions.length ? firstAnswer[lo] : undefined;
  }

  /** Polls made over [from, to] and their round trips (call → answer), ms. */
  polls(from: number, to: number): { n: number; rtt: Dist } {
    const rtt: number[] = [];
    for (let i = 0; i < this.calls.length; i++)
      if (this.calls[i] >= from && this.calls[i] <= to) rtt.push(this.answers[i] - this.calls[i]);
    return { n: rtt.length, rtt: dist(rtt) };
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.inFlight);
  }
}

interface Counts {
  created: number;
  scheduled: number;
  running: number;
  ready: number;
}

interface StatusSeen {
  at: number;
  rv: number;
  generation: number;
  status: DaemonSetStatus;
}

/** One watch of the namespace's pods and one of its DaemonSets, from before the DaemonSet exists. */
class DsWatch {
  readonly pods = new Map<string, PodRecord>();
  readonly statuses: StatusSeen[] = [];
  readonly byImage = new Map<string, Counts>();
  readonly podEvents = { ADDED: 0, MODIFIED: 0, DELETED: 0 };
  error?: Error;
  /** Nodes with an available pod (Ready, not being deleted). */
  availableNodes = 0;
  private readonly availableOnNode = new Map<string, number>();
  /** Unavailable nodes tracked from `trackFrom` on: the maximum, and per second after it. */
  private trackFrom = Infinity;
  maxUnavailable = 0;
  maxUnavailableAt = 0;
  readonly unavailableBySecond: number[] = [];
  /**
   * Nodes not Ready or with a NoSchedule/NoExecute taint (a node whose lease lapsed on a starved
   * machine gets the not-ready taint: the DaemonSet's status then leaves it out of desired and
   * available); the most at once since `trackNodes()`.
   */
  readonly unhealthyNodes = new Set<string>();
  maxUnhealthyNodes = 0;
  private readonly loops: Array<Promise<void>>;

  private constructor(
    private readonly nodes: number,
    private readonly podWatch: Watch<Pod>,
    private readonly dsWatch: Watch<DaemonSet>,
    private readonly nodeWatch: Watch<Node>,
  ) {
    this.loops = [
      this.consume(podWatch, (t, p, at) => this.onPod(t, p, at)),
      this.consumeDs(),
      this.consume(nodeWatch, (t, n) => this.onNode(t, n)),
    ];
  }

  static async start(
    podClient: Client,
    dsClient: Client,
    nodeClient: Client,
    nodes: number,
  ): Promise<DsWatch> {
    const rv = (await podClient.list('Pod', { namespace: NAMESPACE, limit: 1 })).resourceVersion ?? '';
    const pods = await podClient.watch('Pod', { namespace: NAMESPACE, resourceVersion: rv });
    const dsRv = (await dsClient.list('DaemonSet', { namespace: NAMESPACE, limit: 1 })).resourceVersion ?? '';
    const ds = await dsClient.watch('DaemonSet', { namespace: NAMESPACE, resourceVersion: dsRv });
    // From "0": every node first, as ADDED.
    const nodeWatch = await nodeClient.watch('Node', { resourceVersion: '0' });
    return new DsWatch(nodes, pods, ds, nodeWatch);
  }

  private onNode(type: string, node: Node): void {
    const name = node.metadata?.name ?? '';
    if (type === 'DELETED' || isSchedulable(node)) this.unhealthyNodes.delete(name);
    else this.unhealthyNodes.add(name);
    this.maxUnhealthyNodes = Math.max(this.maxUnhealthyNodes, this.unhealthyNodes.size);
  }

  /** Counts unhealthy nodes afresh from now on. */
  trackNodes(): void {
    this.maxUnhealthyNodes = this.unhealthyNodes.size;
  }

  private consume<T>(w: Watch<T>, on: (type: string, obj: T, at: number) => void): Promise<void> {
    return (async () => {
      try {
        for await (const ev of w) on(ev.type, ev.object, nowMs());
      } catch (err) {
        this.error ??= err as Error;
      }
      this.error ??= new Error('a watch ended');
    })();
  }

  private consumeDs(): Promise<void> {
    return this.consume(this.dsWatch, (type, ds, at) => {
      if (type === 'DELETED' || ds.metadata?.name !== DS_NAME) return;
      this.statuses.push({
        at,
        rv: Number(ds.metadata?.resourceVersion),
        generation: ds.metadata?.generation ?? 0,
        status: ds.status ?? {},
      });
    });
  }

  counts(image: string): Counts {
    let c = this.byImage.get(image);
    if (!c) this.byImage.set(image, (c = { created: 0, scheduled: 0, running: 0, ready: 0 }));
    return c;
  }

  private onPod(type: string, pod: Pod, at: number): void {
    if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
    this.podEvents[type]++;
    const uid = pod.metadata?.uid ?? '';
    const rv = Number(pod.metadata?.resourceVersion);
    let r = this.pods.get(uid);
    if (!r) {
      r = {
        uid,
        name: pod.metadata?.name ?? '',
        node: targetNodeName(pod) ?? '(none)',
        image: pod.spec?.containers?.[0]?.image ?? '',
        seen: {},
        rv: {},
        available: false,
        events: 0,
      };
      this.pods.set(uid, r);
    }
    r.events++;
    const c = this.counts(r.image);
    const reach = (m: Milestone, yes: boolean) => {
      if (!yes || r.seen[m] !== undefined) return false;
      r.seen[m] = at;
      r.rv[m] = rv;
      return true;
    };
    if (reach('added', true)) c.created++;
    if (reach('scheduled', !!pod.spec?.nodeName)) c.scheduled++;
    if (reach('running', pod.status?.phase === 'Running')) c.running++;
    const ready = isPodReady(pod);
    if (reach('ready', ready)) c.ready++;
    reach('deleting', !!pod.metadata?.deletionTimestamp);
    reach('terminal', isPodTerminal(pod));
    reach('deleted', type === 'DELETED');
    const available = type !== 'DELETED' && !pod.metadata?.deletionTimestamp && ready;
    if (available !== r.available) {
      r.available = available;
      const before = this.availableOnNode.get(r.node) ?? 0;
      const after = before + (available ? 1 : -1);
      this.availableOnNode.set(r.node, after);
      if (before === 0 && after > 0) this.availableNodes++;
      if (before > 0 && after === 0) this.availableNodes--;
    }
    if (at >= this.trackFrom) {
      const unavailable = this.nodes - this.availableNodes;
      if (unavailable > this.maxUnavailable) {
        this.maxUnavailable = unavailable;
        this.maxUnavailableAt = at;
      }
      const s = Math.floor((at - this.trackFrom) / 1000);
      for (let k = this.unavailableBySecond.length; k <= s; k++) this.unavailableBySecond.push(0);
      this.unavailableBySecond[s] = Math.max(this.unavailableBySecond[s], unavailable);
    }
  }

  /** Counts unavailable nodes from now on. */
  trackUnavailable(from: number): void {
    this.trackFrom = from;
    this.maxUnavailable = this.nodes - this.availableNodes;
    this.maxUnavailableAt = from;
    this.unavailableBySecond.length = 0;
  }

  /** The first status seen at or after `from` that satisfies `ok`, or undefined. */
  firstStatus(from: number, ok: (s: StatusSeen) => boolean): StatusSeen | undefined {
    return this.statuses.find((s) => s.at >= from && ok(s));
  }

  latestStatus(): DaemonSetStatus {
    return this.statuses[this.statuses.length - 1]?.status ?? {};
  }

  async stop(): Promise<void> {
    this.podWatch.stop();
    this.dsWatch.stop();
    this.nodeWatch.stop();
    await Promise.all(this.loops);
  }
}

// ------------------------------------------------------------------------------ figures

interface Dist {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function dist(values: number[]): Dist {
  const s = sortedCopy(values);
  return {
    n: s.length,
    p50: percentileSorted(s, 50),
    p90: percentileSorted(s, 90),
    p99: percentileSorted(s, 99),
    max: s.length ? s[s.length - 1] : NaN,
  };
}

const defined = (xs: Array<number | undefined>): number[] => xs.filter((x): x is number => x !== undefined);

interface ProcCores {
  server: number;
  hollow: number;
  bench: number;
  machine: number;
  others: number;
}

interface TimelineRow {
  fromS: number;
  toS: number;
  /** Cumulative counts at the window's end. */
  values: number[];
  cores?: ProcCores;
}

interface ServerMetrics {
  scheduled: number;
  schedulingErrors: number;
  unschedulable: number;
  /** Mean time in the scheduler's algorithm per scheduled pod, ms. */
  algorithmMeanMs: number;
  /** DaemonSet controller: syncs (workqueue work items done), their total time, queue adds and retries. */
  dsSyncs: number;
  dsSyncSeconds: number;
  dsAdds: number;
  dsRetries: number;
  /** Mean time a DaemonSet key waited in the queue before a sync took it, ms. */
  dsQueueMeanMs: number;
}

function serverMetrics(before: Scrape, after: Scrape): ServerMetrics {
  const d = (k: string) => scrapeDelta(before, after, k);
  const H = 'scheduler_scheduling_algorithm_duration_seconds';
  const Q = (m: string) => `workqueue_${m}{name="daemonset"}`;
  return {
    scheduled: d('scheduler_schedule_attempts_total{result="scheduled"}'),
    schedulingErrors: d('scheduler_schedule_attempts_total{result="error"}'),
    unschedulable: d('scheduler_schedule_attempts_total{result="unschedulable"}'),
    algorithmMeanMs: (d(`${H}_sum{result="scheduled"}`) / d(`${H}_count{result="scheduled"}`)) * 1000,
    dsSyncs: d(Q('work_duration_seconds_count')),
    dsSyncSeconds: d(Q('work_duration_seconds_sum')),
    dsAdds: d(Q('adds_total')),
    dsRetries: d(Q('retries_total')),
    dsQueueMeanMs: (d(Q('queue_duration_seconds_sum')) / d(Q('queue_duration_seconds_count'))) * 1000,
  };
}

/** What every phase reports besides its own figures. */
type ServerProfile = CpuProfileSummary & { areas?: Array<{ name: string; pct: number }> };

interface PhaseCommon {
  t0: number;
  end: number;
  /** CLOCK_MONOTONIC µs at start and end, for the server's profile. */
  mono: [number, number];
  timedOut: boolean;
  cores: ProcCores;
  timeline: TimelineRow[];
  /** Writes the store committed in the phase (resourceVersion after − before). */
  storeWrites: number;
  podEvents: { ADDED: number; MODIFIED: number; DELETED: number };
  metrics: ServerMetrics;
  /** How much later the bench's pod watch delivered a milestone than the RV clock saw it committed, ms. */
  watchLag: Dist;
  /** The RV clock's polls in the phase, and their round trips. */
  rvPolls: { n: number; rtt: Dist };
  /** The most nodes not Ready or tainted NoSchedule/NoExecute at once in the phase, and at its end. */
  maxUnhealthyNodes: number;
  unhealthyNodesAtEnd: number;
  profile?: ServerProfile;
}

/** A milestone reached by every pod: ms after the call, committed (RV clock) and seen in the watch. */
interface AllReached {
  ms: number;
  seenMs: number;
}

interface CreateFigures extends PhaseCommon {
  podsCreated: number;
  /** The RV clock's round trips in the seconds before the create call: the server's responsiveness at rest. */
  idlePolls: { n: number; rtt: Dist };
  allExist: AllReached;
  allScheduled: AllReached;
  allRunning: AllReached;
  allReady: AllReached;
  statusAvailable: AllReached;
  toCreated: Dist;
  createdToScheduled: Dist;
  scheduledToRunning: Dist;
  toRunning: Dist;
  /**
   * The controller's creates as its code plans them — syncs of at most BURST_REPLICAS creates,
   * each in slow-start batches that wait for their slowest create — matched to the pods in
   * commit order (a batch starts only once the one before has returned, and a sync only once
   * its informer has seen every pod of the sync before, so the order is the plan's).
   */
  syncs: SyncSeen[];
  /** The longest pause between two consecutive pod creates committed, and when it began (ms after the call). */
  longestGapMs: number;
  longestGapAtMs: number;
}

interface SyncSeen {
  batches: number[];
  /** ms after the create call: the sync's first pod committed, its last. */
  first: number;
  last: number;
  /** Per batch: its last pod committed − the previous batch's last (or the create call), ms. */
  batchMs: number[];
  /** This sync's first pod − the previous sync's last pod (or the create call), ms. */
  gapBefore: number;
}

/** The controller's plan for `count` creates: syncs of ≤ BURST_REPLICAS in slow-start batches (1, 2, 4, …). */
function createPlan(count: number): number[][] {
  const syncs: number[][] = [];
  for (let left = count; left > 0;) {
    const size = Math.min(BURST_REPLICAS, left);
    const batches: number[] = [];
    for (let pos = 0, b = Math.min(size, SLOW_START_INITIAL_BATCH_SIZE); pos < size;) {
      batches.push(b);
      pos += b;
      b = Math.min(2 * b, size - pos);
    }
    syncs.push(batches);
    left -= size;
  }
  return syncs;
}

/** `created`: the pods' create times in commit order. */
function matchPlan(created: number[], t0: number): SyncSeen[] {
  const out: SyncSeen[] = [];
  let i = 0;
  let prevLast = t0;
  for (const batches of createPlan(created.length)) {
    const first = created[i];
    const batchMs: number[] = [];
    let batchPrev = prevLast;
    for (const b of batches) {
      const last = Math.max(...created.slice(i, i + b));
      batchMs.push(last - batchPrev);
      batchPrev = last;
      i += b;
    }
    out.push({ batches, first: first - t0, last: batchPrev - t0, batchMs, gapBefore: first - prevLast });
    prevLast = batchPrev;
  }
  return out;
}

interface UpdateFigures extends PhaseCommon {
  generation: number;
  allowed: number;
  newPods: number;
  statusDone: AllReached;
  allNewReady: AllReached;
  allOldGone: AllReached;
  maxUnavailable: number;
  /** When the watch showed it, ms after the patch call. */
  maxUnavailableAtMs: number;
  maxStatusUnavailable: number;
  oldStop: Dist;
  replaceCreated: Dist;
  newScheduled: Dist;
  newRunning: Dist;
  downtime: Dist;
}

// ------------------------------------------------------------------------------ processes

interface Cluster {
  cp: ChildControlPlane;
  metricsPort: number;
  fleet: Proc;
  sampler: ProcSampler;
  profileDir?: string;
  join: { seconds: number; perSec: number };
  readySeconds: number;
}

async function joinToken(cp: ChildControlPlane): Promise<string> {
  const tokens = new TokensClient({ server: `https://${cp.server}`, token: cp.token, caPem: cp.caPem });
  try {
    return (await tokens.create({ description: 'bench:daemonset' })).token!;
  } finally {
    tokens.close();
  }
}

function isSchedulable(n: Node): boolean {
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  return (
    ready && !n.spec?.unschedulable && !(n.spec?.taints ?? []).some((t) => t.effect !== 'PreferNoSchedule')
  );
}

async function startCluster(args: Args, tmp: string, cleanup: Cleanup): Promise<Cluster> {
  const metricsPort = await freePort();
  let profileDir: string | undefined;
  if (args.profile) {
    profileDir = args.profileDir ?? join(tmpdir(), 'kubelab-bench-daemonset-prof');
    rmSync(profileDir, { recursive: true, force: true });
    mkdirSync(profileDir, { recursive: true });
  }
  log(
    `starting kubelab server (SQLite, in-process controllers${profileDir ? `, --cpu-prof into ${profileDir}` : ''})`,
  );
  const cp = await startChildControlPlane({
    store: 'sqlite',
    // Given after child.ts's own --metrics-listen, so this one wins: the bench reads it.
    serverArgs: ['--metrics-listen', `127.0.0.1:${metricsPort}`],
    nodeArgs: profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
    startTimeoutMs: 60_000,
  });
  cleanup.add('kubelab server', () => cp.stop());
  const token = await joinToken(cp);
  const dataDir = join(tmp, 'hollow');
  mkdirSync(dataDir, { recursive: true });
  const server = `https://${cp.server}`;
  const joined = await joinAhead(
    server,
    token,
    Array.from({ length: args.nodes }, (_, i) => ({ dataDir, node: `${HOLLOW_PREFIX}-${i}` })),
    args.joinConcurrency,
  );

  const factory = new SharedInformerFactory(cp.client(true));
  const nodeInformer = factory.informerFor('Node');
  cleanup.add('node informer', () => factory.shutdown());
  factory.start();
  if (!(await factory.waitForCacheSync(60_000)))
    throw new Error('the Node informer did not sync within 60 s');

  const t0 = nowMs();
  const fleet = startProc(
    'hollow',
    [
      ...(args.fleetProfileDir ? ['--cpu-prof', '--cpu-prof-dir', args.fleetProfileDir] : []),
      AGENT_BIN,
      '--hollow',
      String(args.nodes),
      '--hollow-prefix',
      HOLLOW_PREFIX,
      '--server',
      server,
      '--data-dir',
      dataDir,
      '--log-level',
      'warn',
    ],
    /running/,
  );
  cleanup.add('hollow fleet', () => fleet.stop());
  log(`started kubelab-agent --hollow ${args.nodes}; waiting for every node to be Ready`);
  let lastLog = nowMs();
  for (;;) {
    checkAlive([fleet]);
    const ready = nodeInformer.list().filter(isSchedulable).length;
    if (ready >= args.nodes && fleet.upAt !== undefined) break;
    if (nowMs() - t0 > 120_000 + args.nodes * 100)
      throw new Error(
        `only ${ready}/${args.nodes} nodes were Ready after ${fmt((nowMs() - t0) / 1000, 0)} s`,
      );
    if (nowMs() - lastLog >= 5000) {
      lastLog = nowMs();
      log(`${nodeInformer.list().length} nodes registered, ${ready} Ready`);
    }
    await sleep(250);
  }
  const readySeconds = (nowMs() - t0) / 1000;
  await cleanup.now('node informer');
  log(`every node Ready ${fmt(readySeconds, 1)} s after the fleet started`);
  const sampler = new ProcSampler(
    new Map([
      ['server', cp.pid],
      ['hollow', fleet.pid],
      ['bench', process.pid],
    ]),
    250,
  );
  cleanup.add('sampler', () => sampler.stop());
  return { cp, metricsPort, fleet, sampler, profileDir, join: joined, readySeconds };
}

/** Cores used by each process over [fromAbs, toAbs] (this process's clock, ms). */
function coresOver(sampler: ProcSampler, fromAbs: number, toAbs: number): ProcCores | undefined {
  const from = fromAbs - sampler.t0;
  const to = toAbs - sampler.t0;
  // On a loaded machine a sample can come late: widen a window that caught fewer than two.
  let [a, b] = [from, to];
  let load = sampler.machineLoad(a, b);
  for (let widen = 1; !load && widen <= 3; widen++) {
    [a, b] = [from - widen * 250, to + widen * 250];
    load = sampler.machineLoad(a, b);
  }
  if (!load) return undefined;
  const c = (name: string) => (sampler.summary(name, a, b)?.cpuPct ?? NaN) / 100;
  return {
    server: c('server'),
    hollow: c('hollow'),
    bench: c('bench'),
    machine: load.busyCores,
    others: load.othersCores,
  };
}

/** Waits until processes this benchmark did not start use < QUIET_CORES for 3 s, at most `maxSeconds`. */
async function waitForQuiet(
  sampler: ProcSampler,
  maxSeconds: number,
): Promise<{ seconds: number; others: number }> {
  const t0 = nowMs();
  let others = NaN;
  let lastLog = t0;
  while (nowMs() - t0 < maxSeconds * 1000) {
    await sleep(1000);
    const now = nowMs();
    if (now - t0 < 3000) continue;
    others = coresOver(sampler, now - 3000, now)?.others ?? NaN;
    if (others < QUIET_CORES) return { seconds: (now - t0) / 1000, others };
    if (now - lastLog >= 10_000) {
      lastLog = now;
      log(`waiting for the machine to be quiet: others use ${fmt(others, 2)} cores`);
    }
  }
  log(`the machine is still busy (others use ${fmt(others, 2)} cores); measuring anyway`);
  return { seconds: (nowMs() - t0) / 1000, others };
}

async function storeRevision(client: Client): Promise<number> {
  return Number((await client.list('Namespace', { limit: 1 })).resourceVersion ?? NaN);
}

/** Window length so a phase's timeline has at most TIMELINE_ROWS rows (1, 2, 5, 10, … s). */
function windowSeconds(spanMs: number): number {
  for (const w of [1, 2, 5, 10, 20, 30, 60]) if (spanMs / 1000 / w <= TIMELINE_ROWS) return w;
  return 120;
}

function timeline(
  sampler: ProcSampler,
  t0: number,
  end: number,
  series: Array<(te: number) => number>,
): TimelineRow[] {
  const w = windowSeconds(end - t0);
  const rows: TimelineRow[] = [];
  for (let k = 0; t0 + k * w * 1000 < end; k++) {
    const from = t0 + k * w * 1000;
    const to = Math.min(end, from + w * 1000);
    rows.push({
      fromS: k * w,
      toS: (to - t0) / 1000,
      values: series.map((f) => f(to)),
      cores: coresOver(sampler, from, to),
    });
  }
  return rows;
}

const countUpTo = (times: Array<number | undefined>) => (te: number) =>
  times.reduce((n: number, t) => n + (t !== undefined && t <= te ? 1 : 0), 0);

// ------------------------------------------------------------------------------ the phases

/**
 * When a milestone was reached: the earlier of the RV clock's "committed by" and the moment the
 * watch delivered it (both are upper bounds of the commit).
 */
function when(clock: RvClock, r: PodRecord, m: Milestone): number | undefined {
  const seen = r.seen[m];
  const by = clock.committedBy(r.rv[m]);
  return seen === undefined ? undefined : by === undefined ? seen : Math.min(seen, by);
}

function statusWhen(clock: RvClock, s: StatusSeen): number {
  return Math.min(s.at, clock.committedBy(s.rv) ?? s.at);
}

/** When the `n`-th of `recs` reached `m` (committed and seen), ms after t0; NaN if fewer did. */
function allReached(clock: RvClock, recs: PodRecord[], m: Milestone, n: number, t0: number): AllReached {
  const nth = (xs: number[]) => (xs.length >= n ? sortedCopy(xs)[n - 1] - t0 : NaN);
  return {
    ms: nth(defined(recs.map((r) => when(clock, r, m)))),
    seenMs: nth(defined(recs.map((r) => r.seen[m]))),
  };
}

const between = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? undefined : b - a;

async function phaseCommon(
  c: Cluster,
  admin: Client,
  clock: RvClock,
  t0: number,
  mono0: number,
  rv0: number,
  before: Scrape,
  events0: DsWatch['podEvents'],
  w: DsWatch,
  recs: PodRecord[],
  timedOut: boolean,
  series: Array<(te: number) => number>,
): Promise<PhaseCommon> {
  const end = nowMs();
  const mono1 = monotonicUs();
  // One more sample, so the last window has its CPU.
  c.sampler.sample();
  const after = await scrape(c.metricsPort);
  const rv1 = await storeRevision(admin);
  const lags: number[] = [];
  for (const r of recs)
    for (const m of Object.keys(r.seen) as Milestone[]) {
      const seen = r.seen[m]!;
      if (seen >= t0) lags.push(seen - when(clock, r, m)!);
    }
  return {
    t0,
    end,
    mono: [mono0, mono1],
    timedOut,
    cores: coresOver(c.sampler, t0, end) ?? {
      server: NaN,
      hollow: NaN,
      bench: NaN,
      machine: NaN,
      others: NaN,
    },
    timeline: timeline(c.sampler, t0, end, series),
    storeWrites: rv1 - rv0,
    podEvents: {
      ADDED: w.podEvents.ADDED - events0.ADDED,
      MODIFIED: w.podEvents.MODIFIED - events0.MODIFIED,
      DELETED: w.podEvents.DELETED - events0.DELETED,
    },
    metrics: serverMetrics(before, after),
    watchLag: dist(lags),
    rvPolls: clock.polls(t0, end),
    maxUnhealthyNodes: w.maxUnhealthyNodes,
    unhealthyNodesAtEnd: w.unhealthyNodes.size,
  };
}

async function createPhase(
  args: Args,
  c: Cluster,
  admin: Client,
  w: DsWatch,
  clock: RvClock,
): Promise<CreateFigures> {
  const n = args.nodes;
  const before = await scrape(c.metricsPort);
  const rv0 = await storeRevision(admin);
  const events0 = { ...w.podEvents };
  const counts = w.counts(IMAGE_1);
  log(`create: creating DaemonSet ${NAMESPACE}/${DS_NAME} (image ${IMAGE_1}) for ${n} nodes`);
  w.trackNodes();
  const mono0 = monotonicUs();
  const t0 = nowMs();
  const idlePolls = clock.polls(t0 - 3000, t0);
  await admin.create(daemonSet(args.maxUnavailable));
  const created = nowMs();
  const statusDone = () => w.firstStatus(t0, (s) => (s.status.numberAvailable ?? 0) >= n);
  const progress = () =>
    log(
      `create: ${fmt((nowMs() - t0) / 1000, 1)} s: the pod watch has seen ${counts.created}/${n} pods, ` +
        `${counts.scheduled} scheduled, ${counts.running} Running, ${counts.ready} Ready; ` +
        `the DaemonSet's status: desired ${w.latestStatus().desiredNumberScheduled ?? 0}, ` +
        `${w.latestStatus().currentNumberScheduled ?? 0} scheduled, ${w.latestStatus().numberAvailable ?? 0} available; ` +
        `${w.unhealthyNodes.size} nodes not Ready or tainted`,
    );
  let lastLog = nowMs();
  const deadline = t0 + args.waitSeconds * 1000;
  while (!(counts.running >= n && counts.ready >= n && statusDone()) && nowMs() < deadline) {
    if (w.error) throw w.error;
    checkAlive([c.fleet]);
    await sleep(50);
    if (nowMs() - lastLog >= 2000) {
      lastLog = nowMs();
      progress();
    }
  }
  const timedOut = nowMs() >= deadline;
  progress();
  // Let the RV clock pass the last revisions.
  await sleep(2 * RV_POLL_MS);
  const recs = [...w.pods.values()].filter((r) => r.image === IMAGE_1);
  const at = (m: Milestone) => recs.map((r) => when(clock, r, m));
  const common = await phaseCommon(c, admin, clock, t0, mono0, rv0, before, events0, w, recs, timedOut, [
    countUpTo(at('added')),
    countUpTo(at('scheduled')),
    countUpTo(at('running')),
  ]);
  const byCommit = [...recs].sort((a, b) => (a.rv.added ?? 0) - (b.rv.added ?? 0));
  const createdAt = byCommit.map((r) => when(clock, r, 'added')!);
  let longestGap = 0;
  let longestGapAt = NaN;
  for (let i = 1; i < createdAt.length; i++)
    if (createdAt[i] - createdAt[i - 1] > longestGap) {
      longestGap = createdAt[i] - createdAt[i - 1];
      longestGapAt = createdAt[i - 1] - t0;
    }
  const status = statusDone();
  const figures: CreateFigures = {
    ...common,
    podsCreated: recs.length,
    idlePolls,
    allExist: allReached(clock, recs, 'added', n, t0),
    allScheduled: allReached(clock, recs, 'scheduled', n, t0),
    allRunning: allReached(clock, recs, 'running', n, t0),
    allReady: allReached(clock, recs, 'ready', n, t0),
    statusAvailable: status
      ? { ms: statusWhen(clock, status) - t0, seenMs: status.at - t0 }
      : { ms: NaN, seenMs: NaN },
    toCreated: dist(defined(recs.map((r) => between(t0, when(clock, r, 'added'))))),
    createdToScheduled: dist(
      defined(recs.map((r) => between(when(clock, r, 'added'), when(clock, r, 'scheduled')))),
    ),
    scheduledToRunning: dist(
      defined(recs.map((r) => between(when(clock, r, 'scheduled'), when(clock, r, 'running')))),
    ),
    toRunning: dist(defined(recs.map((r) => between(t0, when(clock, r, 'running'))))),
    syncs: matchPlan(createdAt, t0),
    longestGapMs: longestGap,
    longestGapAtMs: longestGapAt,
  };
  log(
    `create: the create call took ${fmt(created - t0, 0)} ms; all ${n} pods created ${fmt(figures.allExist.ms, 0)} ms, ` +
      `scheduled ${fmt(figures.allScheduled.ms, 0)} ms, Running ${fmt(figures.allRunning.ms, 0)} ms ` +
      `(seen in the watch: ${fmt(figures.allRunning.seenMs, 0)} ms), status numberAvailable=${n} ` +
      `${fmt(figures.statusAvailable.ms, 0)} ms after the create call` +
      (timedOut ? ` (gave up after ${args.waitSeconds} s)` : ''),
  );
  return figures;
}

async function updatePhase(
  args: Args,
  c: Cluster,
  admin: Client,
  w: DsWatch,
  clock: RvClock,
): Promise<UpdateFigures> {
  const n = args.nodes;
  const allowed = allowedUnavailable(args.maxUnavailable, n);
  const before = await scrape(c.metricsPort);
  const rv0 = await storeRevision(admin);
  const events0 = { ...w.podEvents };
  const counts = w.counts(IMAGE_2);
  const oldRecs = () => [...w.pods.values()].filter((r) => r.image === IMAGE_1);
  const oldAlive = () => oldRecs().filter((r) => r.seen.deleted === undefined).length;
  log(
    `update: patching the template's image to ${IMAGE_2} (maxUnavailable ${args.maxUnavailable} = ${allowed})`,
  );
  w.trackNodes();
  const mono0 = monotonicUs();
  const t0 = nowMs();
  w.trackUnavailable(t0);
  const patched = await admin.patch(
    'DaemonSet',
    DS_NAME,
    { spec: { template: { spec: { containers: [{ name: 'exporter', image: IMAGE_2 }] } } } },
    { namespace: NAMESPACE },
  );
  const generation = patched.metadata?.generation ?? 0;
  const statusDone = () =>
    w.firstStatus(
      t0,
      (s) =>
        s.generation >= generation &&
        (s.status.observedGeneration ?? 0) >= generation &&
        (s.status.updatedNumberScheduled ?? 0) >= n &&
        (s.status.numberAvailable ?? 0) >= n,
    );
  const progress = () => {
    const s = w.latestStatus();
    log(
      `update: ${fmt((nowMs() - t0) / 1000, 1)} s: the pod watch has seen ${counts.created}/${n} new pods, ` +
        `${counts.running} Running, ${counts.ready} Ready, ${oldAlive()} old pods left; unavailable nodes now ` +
        `${n - w.availableNodes}, at most ${w.maxUnavailable}; the DaemonSet's status: desired ` +
        `${s.desiredNumberScheduled ?? 0}, ${s.updatedNumberScheduled ?? 0} updated, ${s.numberAvailable ?? 0} available; ` +
        `${w.unhealthyNodes.size} nodes not Ready or tainted`,
    );
  };
  let lastLog = nowMs();
  const deadline = t0 + args.waitSeconds * 1000;
  while (!(counts.ready >= n && statusDone()) && nowMs() < deadline) {
    if (w.error) throw w.error;
    checkAlive([c.fleet]);
    await sleep(50);
    if (nowMs() - lastLog >= 2000) {
      lastLog = nowMs();
      progress();
    }
  }
  const timedOut = nowMs() >= deadline;
  // The last old pods may still be on their way out: give them a few seconds (not counted).
  for (let i = 0; i < 100 && oldAlive() > 0 && !timedOut; i++) await sleep(50);
  await sleep(2 * RV_POLL_MS);
  progress();
  const olds = oldRecs();
  const news = [...w.pods.values()].filter((r) => r.image === IMAGE_2);
  const at = (rs: PodRecord[], m: Milestone) => rs.map((r) => when(clock, r, m));
  const common = await phaseCommon(
    c,
    admin,
    clock,
    t0,
    mono0,
    rv0,
    before,
    events0,
    w,
    [...olds, ...news],
    timedOut,
    [
      countUpTo(at(olds, 'deleting')),
      countUpTo(at(olds, 'deleted')),
      countUpTo(at(news, 'added')),
      countUpTo(at(news, 'ready')),
      () => 0,
    ],
  );
  // Unavailable nodes: the most in each window (by when the watch showed them).
  const w1 = windowSeconds(common.end - t0);
  for (const row of common.timeline) {
    const seconds = w.unavailableBySecond.slice(row.fromS, row.fromS + w1);
    row.values[4] = seconds.length ? Math.max(...seconds) : 0;
  }
  const newByNode = new Map(news.map((r) => [r.node, r]));
  const chain = olds.map((o) => ({ o, nw: newByNode.get(o.node) }));
  const gone = (r: PodRecord) => {
    const t = defined([when(clock, r, 'terminal'), when(clock, r, 'deleted')]);
    return t.length ? Math.min(...t) : undefined;
  };
  const maxStatusUnavailable = Math.max(
    0,
    ...w.statuses.filter((s) => s.at >= t0).map((s) => s.status.numberUnavailable ?? 0),
  );
  const status = statusDone();
  const figures: UpdateFigures = {
    ...common,
    generation,
    allowed,
    newPods: news.length,
    statusDone: status
      ? { ms: statusWhen(clock, status) - t0, seenMs: status.at - t0 }
      : { ms: NaN, seenMs: NaN },
    allNewReady: allReached(clock, news, 'ready', n, t0),
    allOldGone: allReached(clock, olds, 'deleted', olds.length, t0),
    maxUnavailable: w.maxUnavailable,
    maxUnavailableAtMs: w.maxUnavailableAt - t0,
    maxStatusUnavailable,
    oldStop: dist(defined(chain.map(({ o }) => between(when(clock, o, 'deleting'), gone(o))))),
    replaceCreated: dist(defined(chain.map(({ o, nw }) => nw && between(gone(o), when(clock, nw, 'added'))))),
    newScheduled: dist(
      defined(news.map((r) => between(when(clock, r, 'added'), when(clock, r, 'scheduled')))),
    ),
    newRunning: dist(
      defined(news.map((r) => between(when(clock, r, 'scheduled'), when(clock, r, 'running')))),
    ),
    downtime: dist(
      defined(chain.map(({ o, nw }) => nw && between(when(clock, o, 'deleting'), when(clock, nw, 'ready')))),
    ),
  };
  log(
    `update: status updated=${n}, available=${n} ${fmt(figures.statusDone.ms, 0)} ms after the patch; ` +
      `max unavailable ${figures.maxUnavailable} (allowed ${allowed}); status numberUnavailable max ${maxStatusUnavailable}` +
      (timedOut ? ` (gave up after ${args.waitSeconds} s)` : ''),
  );
  return figures;
}

/** Parts of the server, by the code on a sample's stack (a sample may count in several). */
const AREAS: Array<{ name: string; test: (fn: string, path: string) => boolean }> = [
  {
    name: "watch fan-out: WatchCache.deliver (every watcher's selectors matched against every event, gRPC writes)",
    test: (fn, path) => fn === 'deliver' && path === 'main/apiserver/watchcache.ts',
  },
  {
    name: 'the scheduler (main/controllers/scheduler/)',
    test: (_fn, path) => path.startsWith('main/controllers/scheduler/'),
  },
  {
    name: 'the DaemonSet controller (main/controllers/daemonset/)',
    test: (_fn, path) => path.startsWith('main/controllers/daemonset/'),
  },
  {
    name: 'the other controllers (garbage collector, node lifecycle, …)',
    test: (_fn, path) => path.startsWith('main/controllers/') && !/\/(scheduler|daemonset)\//.test(path),
  },
  { name: "V8's garbage collector", test: (fn) => fn === '(garbage collector)' },
];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** Percent of the busy samples of the profile's file in [fromUs, toUs] whose stack holds each area. */
function profileAreas(path: string, fromUs: number, toUs: number): Array<{ name: string; pct: number }> {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as {
    nodes: ProfileNode[];
    startTime: number;
    samples?: number[];
    timeDeltas?: number[];
  };
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const areasOf = new Map<number, number[]>();
  const areas = (id: number): number[] => {
    let out = areasOf.get(id);
    if (out) return out;
    const hit = new Set<number>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      const cut = f.url.indexOf(`${REPO_ROOT}/`);
      const rel = cut < 0 ? '' : f.url.slice(cut + REPO_ROOT.length + 1);
      AREAS.forEach((a, k) => a.test(f.functionName, rel) && hit.add(k));
    }
    out = [...hit];
    areasOf.set(id, out);
    return out;
  };
  const counts = AREAS.map(() => 0);
  let busy = 0;
  let t = profile.startTime;
  const samples = profile.samples ?? [];
  for (let i = 0; i < samples.length; i++) {
    t += profile.timeDeltas?.[i] ?? 0;
    if (t < fromUs || t > toUs) continue;
    if (byId.get(samples[i])?.callFrame.functionName === '(idle)') continue;
    busy++;
    for (const k of areas(samples[i])) counts[k]++;
  }
  return AREAS.map((a, k) => ({ name: a.name, pct: busy ? (100 * counts[k]) / busy : NaN }));
}

function readServerProfile(dir: string, [from, to]: [number, number]): ServerProfile | undefined {
  try {
    const summary: ServerProfile = summarizeCpuProfile(dir, REPO_ROOT, from, to);
    summary.areas = profileAreas(
      summary.path,
      summary.windowed ? from : -Infinity,
      summary.windowed ? to : Infinity,
    );
    return summary;
  } catch (err) {
    log(`could not read the server's profile in ${dir}: ${(err as Error).message}`);
    return undefined;
  }
}

// ------------------------------------------------------------------------------ the report

const ms = (v: number) => (Number.isFinite(v) ? fmt(v, 0) : 'not reached');
const cell = (v: number) => fmt(v, v >= 100 ? 0 : 1);
const cores = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '–' : fmt(v, 2));

function distRow(what: string, d: Dist, bold = false): string[] {
  const b = (s: string) => (bold ? `**${s}**` : s);
  return [what, fmt(d.n, 0), b(cell(d.p50)), cell(d.p90), b(cell(d.p99)), cell(d.max)];
}

function timelineTable(rows: TimelineRow[], headers: string[]): string {
  return table(
    ['after the call, s', ...headers, 'CPU server', 'CPU hollow', 'CPU bench', 'CPU others'],
    ['l', ...Array<'r'>(headers.length + 4).fill('r')],
    rows.map((r) => [
      `${fmt(r.fromS, 0)}–${fmt(r.toS, r.toS % 1 ? 1 : 0)}`,
      ...r.values.map((v) => fmt(v, 0)),
      cores(r.cores?.server),
      cores(r.cores?.hollow),
      cores(r.cores?.bench),
      cores(r.cores?.others),
    ]),
  );
}

function commonBullets(p: PhaseCommon, pods: number): string[] {
  const m = p.metrics;
  const seconds = (p.end - p.t0) / 1000;
  const writes = p.podEvents.ADDED + p.podEvents.MODIFIED + p.podEvents.DELETED;
  return [
    `CPU, cores used over the phase (${fmt(seconds, 1)} s): server ${cores(p.cores.server)}, hollow agents ${cores(p.cores.hollow)}, ` +
      `bench ${cores(p.cores.bench)}; machine ${cores(p.cores.machine)}, others ${cores(p.cores.others)}`,
    `the store committed ${fmt(p.storeWrites, 0)} writes (${fmt(p.storeWrites / seconds, 0)}/s; every kind: pods, events, ` +
      `leases, node and DaemonSet statuses); the pod watch saw ${fmt(p.podEvents.ADDED, 0)} ADDED, ${fmt(p.podEvents.MODIFIED, 0)} MODIFIED, ` +
      `${fmt(p.podEvents.DELETED, 0)} DELETED (${fmt(writes / Math.max(1, pods), 1)} pod writes per pod)`,
    `the pod watch delivered milestones after the RV clock saw them committed by p50 ${fmt(p.watchLag.p50, 0)} ms, ` +
      `p99 ${fmt(p.watchLag.p99, 0)} ms, max ${fmt(p.watchLag.max, 0)} ms; the RV clock polled ${fmt(p.rvPolls.n, 0)} times ` +
      `(round trip p50 ${fmt(p.rvPolls.rtt.p50, 1)} ms, p99 ${fmt(p.rvPolls.rtt.p99, 0)} ms, max ${fmt(p.rvPolls.rtt.max, 0)} ms)`,
    p.maxUnhealthyNodes
      ? `**nodes not Ready or tainted NoSchedule/NoExecute: up to ${fmt(p.maxUnhealthyNodes, 0)} at once, ` +
        `${fmt(p.unhealthyNodesAtEnd, 0)} at the end** (their leases lapsed while the machine was starved: the node lifecycle ` +
        "controller marks them not-ready; the DaemonSet's status leaves such nodes out of desired and available)"
      : 'every node stayed Ready and untainted',
    `the scheduler: ${fmt(m.scheduled, 0)} scheduled, ${fmt(m.unschedulable, 0)} unschedulable, ${fmt(m.schedulingErrors, 0)} errors; ` +
      `algorithm ${fmt(m.algorithmMeanMs, 3)} ms per pod (${fmt((m.algorithmMeanMs * m.scheduled) / 1000, 2)} s in all)`,
    `the DaemonSet controller: ${fmt(m.dsSyncs, 0)} syncs taking ${fmt(m.dsSyncSeconds, 2)} s in all ` +
      `(${fmt((m.dsSyncSeconds / Math.max(1, m.dsSyncs)) * 1000, 0)} ms each on average, API calls awaited included), ` +
      `${fmt(m.dsAdds, 0)} queue adds, ${fmt(m.dsRetries, 0)} retries, ${fmt(m.dsQueueMeanMs, 1)} ms mean wait in the queue`,
  ];
}

function profileTables(title: string, p: ServerProfile): string[] {
  const out: string[] = [];
  const busy = (p.busySamples * (Number.isFinite(p.intervalMs) ? p.intervalMs : 1)) / 1000 / p.seconds;
  out.push(`### Where the server's time goes: ${title} (\`--cpu-prof\` of \`kubelab server\`)`);
  out.push('');
  out.push(
    `Main thread, ${p.windowed ? `the phase only (${fmt(p.seconds, 1)} s)` : `whole life (${fmt(p.seconds, 1)} s)`}: ` +
      `${fmt(p.busySamples, 0)} busy samples (~${fmt(busy, 2)} of a core busy on this thread); percent of the busy samples ` +
      `(idle left out). Profile: \`${p.path}\`.`,
  );
  out.push('');
  if (p.areas)
    out.push(
      table(
        [
          'part of the server (samples with its code on the stack; a sample may count twice)',
          '% of busy samples',
        ],
        ['l', 'r'],
        p.areas.map((a) => [a.name, fmt(a.pct, 1)]),
      ),
      '',
    );
  out.push(
    table(
      ['function (self time)', '%'],
      ['l', 'r'],
      p.self.slice(0, 12).map((x) => [`\`${x.fn}\``, fmt(x.pct, 1)]),
    ),
  );
  out.push('');
  out.push(
    table(
      ["kubelab's own functions (total time: their own and their callees')", '%'],
      ['l', 'r'],
      p.inclusive.slice(0, 15).map((x) => [`\`${x.fn}\``, fmt(x.pct, 1)]),
    ),
  );
  out.push('');
  return out;
}

/** Which stretch of the create phase took longest, in words (the critical path, committed times). */
function createReading(f: CreateFigures, n: number): string {
  const parts: Array<[string, number]> = [
    ['the DaemonSet controller creating the pods (create call → the last pod created)', f.allExist.ms],
    [
      'the scheduler binding the last ones (last pod created → last pod bound)',
      f.allScheduled.ms - f.allExist.ms,
    ],
    ['the agents starting the last ones (last bound → last Running)', f.allRunning.ms - f.allScheduled.ms],
    [
      `the controller's status catching up (last Ready → status numberAvailable=${fmt(n, 0)})`,
      f.statusAvailable.ms - f.allReady.ms,
    ],
  ];
  const known = parts.filter(([, v]) => Number.isFinite(v));
  if (!known.length) return '';
  const [top] = [...known].sort((a, b) => b[1] - a[1]);
  return (
    `Critical path (commit times): ${known.map(([k, v]) => `${k} ${fmt(v, 0)} ms`).join('; ')}. ` +
    `The longest stretch is ${top[0].split(' (')[0]}.`
  );
}

/** The goal's figure: every pod Running and the status saying numberAvailable = N, ms after the create call. */
function goalMs(f: CreateFigures): number {
  return Math.max(f.allRunning.ms, f.statusAvailable.ms);
}

function reachedRow(what: string, r: AllReached, bold = false): string[] {
  const b = (s: string) => (bold ? `**${s}**` : s);
  return [b(what), b(ms(r.ms)), ms(r.seenMs)];
}

function render(
  machine: MachineInfo,
  args: Args,
  cluster: Cluster | undefined,
  create: CreateFigures | undefined,
  update: UpdateFigures | undefined,
  rss: Record<string, number>,
  started: Date,
  seconds: number,
  load: number[],
  quiets: Array<{ seconds: number; others: number }>,
  problems: Map<string, number> | undefined,
  error: string | undefined,
): string {
  const n = args.nodes;
  const out: string[] = [];
  const shared = Math.max(create?.cores.others ?? 0, update?.cores.others ?? 0);
  out.push(
    `## ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — daemonset (\`npm run bench:daemonset\`)`,
  );
  out.push('');
  out.push(
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${fmt(machine.ramGiB, 1)} GiB RAM, ${machine.os}; Node ${machine.node}. ` +
      `kubelab ${machine.commit}. Whole run: ${fmt(seconds / 60, 1)} min; 1-minute load average ${fmt(load[0], 1)} at the start, ` +
      `${fmt(load[1], 1)} at the end. The server, the hollow fleet and the bench share the ${machine.cores} cores` +
      (shared >= 0.1
        ? `; **the machine was shared: other work (other benchmarks run at the same time) used ${fmt(shared, 2)} cores on ` +
          'average during a measured phase (the "others" CPU column), so the times are longer than on a quiet machine**.'
        : '.') +
      ` ${changedNote(machine)}`.trimEnd(),
  );
  out.push('');
  const notQuiet = quiets.filter((q) => !(q.others < QUIET_CORES));
  out.push(
    `Settings: a fresh \`kubelab server\` (SQLite, its in-process controllers as it runs them by default: the DaemonSet controller ` +
      `(2 workers; slow-start creates 1, 2, 4, …, at most ${BURST_REPLICAS} creates per sync), the scheduler and the garbage ` +
      `collector among them) in a child process on 127.0.0.1${cluster?.profileDir ? ', with `--cpu-prof`' : ''}; ${fmt(n, 0)} ` +
      `hollow nodes joined ahead (${args.joinConcurrency} at a time${cluster ? `: ${fmt(cluster.join.seconds, 1)} s` : ''}) and run ` +
      `by one \`kubelab-agent --hollow ${n}\` process at the agent's defaults (the hollow runtime runs their pods: a container ` +
      `runs at once, no process)${cluster ? `, every node Ready ${fmt(cluster.readySeconds, 1)} s after it started` : ''}; then ` +
      `${args.settleSeconds} s to settle and, before each phase, a wait (≤ ${args.quietWaitSeconds} s) for the processes this ` +
      `benchmark did not start to use < ${QUIET_CORES} cores` +
      (notQuiet.length
        ? ` (**not reached before ${notQuiet.length === quiets.length ? 'either phase' : 'one phase'}: others used ` +
          `${notQuiet.map((q) => fmt(q.others, 2)).join(' and ')} cores; measured anyway**)`
        : '') +
      `. The DaemonSet: one container (image ${IMAGE_1}, no resources), RollingUpdate with maxUnavailable ` +
      `${args.maxUnavailable} and maxSurge 0. Command: \`npm run bench:daemonset${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`.`,
  );
  out.push('');
  out.push(
    "How it is timed: the bench watches the namespace's pods, the DaemonSet and the nodes (gRPC, a connection of its own each) and notes, " +
      'per pod, the first event in which it exists, has spec.nodeName, is Running, Ready, being deleted, terminal, deleted — ' +
      "with that event's resourceVersion. Another connection polls the revision of the server's watch cache every " +
      `${RV_POLL_MS} ms (a List of one Namespace at resourceVersion "0", up to 20 in flight): a write of revision r was ` +
      'committed, and in the cache the in-process controllers read, before the first poll that returned ≥ r answered. A ' +
      "milestone's time is the earlier of that and the moment the watch delivered it. **Committed** columns use these " +
      "times; **seen** columns when the bench's pod watch delivered the event (it runs seconds behind when the server is " +
      "busy: the lag is given). The committed times are late by up to a poll's round trip (given per phase: it is also " +
      "how long any request waited for the server's event loop), so short per-pod parts read 0 or one round trip.",
  );
  out.push('');
  if (error) {
    out.push(`**The run failed: ${error}**`);
    out.push('');
  }

  if (create) {
    out.push(`### 1. Create a DaemonSet: ${fmt(n, 0)} pods on ${fmt(n, 0)} nodes`);
    out.push('');
    out.push(
      table(
        ['milestone', 'committed, ms after the create call', 'seen in the pod watch, ms'],
        ['l', 'r', 'r'],
        [
          reachedRow(`all ${fmt(n, 0)} pods exist`, create.allExist),
          reachedRow(`all ${fmt(n, 0)} bound (spec.nodeName)`, create.allScheduled),
          reachedRow(`all ${fmt(n, 0)} Running`, create.allRunning, true),
          reachedRow(`all ${fmt(n, 0)} Ready`, create.allReady),
          reachedRow(
            `DaemonSet status numberAvailable = ${fmt(n, 0)} (seen: in the DaemonSet watch)`,
            create.statusAvailable,
            true,
          ),
        ],
      ),
    );
    out.push('');
    out.push(
      table(
        ['per pod, committed times, ms', 'pods', 'p50', 'p90', 'p99', 'max'],
        ['l', 'r', 'r', 'r', 'r', 'r'],
        [
          distRow('create call → pod created (the controller)', create.toCreated),
          distRow('created → bound (the scheduler)', create.createdToScheduled),
          distRow('bound → Running (the agent: its watch, start, status write)', create.scheduledToRunning),
          distRow('**create call → Running**', create.toRunning, true),
        ],
      ),
    );
    out.push('');
    out.push(
      `The controller's creates: syncs of at most ${BURST_REPLICAS} (its burst), each in slow-start batches that wait for ` +
        'their slowest create before the next, doubling; a sync starts once its informer has seen every pod of the one before ' +
        "(expectations). Matched to the pods in commit order (batch time: its last pod committed − the previous batch's last, " +
        'or the create call):',
    );
    out.push('');
    out.push(
      table(
        [
          'sync',
          'pods',
          'slow-start batches',
          'first → last pod, ms',
          'time per batch, ms',
          'wait before the sync, ms',
        ],
        ['l', 'r', 'l', 'r', 'l', 'r'],
        create.syncs.map((s, k) => [
          String(k + 1),
          fmt(
            s.batches.reduce((a, b) => a + b, 0),
            0,
          ),
          s.batches.join(', '),
          `${fmt(s.first, 0)} → ${fmt(s.last, 0)}`,
          s.batchMs.map((x) => fmt(x, 0)).join(', '),
          fmt(s.gapBefore, 0),
        ]),
      ),
    );
    out.push('');
    const batchTimes = create.syncs.flatMap((s) => s.batchMs);
    out.push(
      `${batchTimes.length} batches one after another, median ${fmt(median(batchTimes), 0)} ms each. ` +
        `Longest pause between two consecutive creates: ${fmt(create.longestGapMs, 0)} ms, from ${fmt(create.longestGapAtMs, 0)} ms.`,
    );
    out.push('');
    out.push(createReading(create, n));
    out.push('');
    const bits = [
      `${fmt(create.podsCreated, 0)} pods created for ${fmt(n, 0)} nodes${create.timedOut ? ` (**gave up after ${args.waitSeconds} s**)` : ''}`,
      ...commonBullets(create, create.podsCreated),
    ];
    out.push(bits.map((b) => `- ${b}.`).join('\n'));
    out.push('');
    out.push(
      'Timeline (cumulative counts, committed times, at the end of each window; CPU: cores used in the window):',
    );
    out.push('');
    out.push(timelineTable(create.timeline, ['pods created', 'bound', 'Running']));
    out.push('');
  }

  if (update) {
    out.push(
      `### 2. Rolling update (maxUnavailable ${args.maxUnavailable} = ${fmt(update.allowed, 0)} nodes): image ${IMAGE_1} → ${IMAGE_2}`,
    );
    out.push('');
    out.push(
      table(
        ['milestone', 'committed, ms after the patch call', 'seen in the pod watch, ms'],
        ['l', 'r', 'r'],
        [
          reachedRow(`all ${fmt(n, 0)} new pods Ready`, update.allNewReady),
          reachedRow(
            `DaemonSet status: generation ${update.generation} observed, updatedNumberScheduled = numberAvailable = ${fmt(n, 0)} (seen: in the DaemonSet watch)`,
            update.statusDone,
            true,
          ),
          reachedRow(`all ${fmt(n, 0)} old pods deleted`, update.allOldGone),
        ],
      ),
    );
    out.push('');
    out.push(
      `Unavailable nodes (no pod that is Ready and not being deleted, as the controller's rolling update counts them), ` +
        'recounted after every pod event of the watch, in the order of the writes (so every state the API went through is ' +
        `counted, however late the watch): **max ${fmt(update.maxUnavailable, 0)}** (allowed ${fmt(update.allowed, 0)}: ` +
        `${update.maxUnavailable <= update.allowed ? 'within' : '**over**'}); the DaemonSet status's numberUnavailable reached ` +
        `${fmt(update.maxStatusUnavailable, 0)}.`,
    );
    out.push('');
    out.push(
      table(
        ['per node, committed times, ms', 'nodes', 'p50', 'p90', 'p99', 'max'],
        ['l', 'r', 'r', 'r', 'r', 'r'],
        [
          distRow('old pod marked for deletion → gone (terminal or deleted: the agent)', update.oldStop),
          distRow('old pod gone → new pod created (the controller)', update.replaceCreated),
          distRow('new pod created → bound (the scheduler)', update.newScheduled),
          distRow('new pod bound → Running (the agent)', update.newRunning),
          distRow('**the node without an available pod (marked → new Ready)**', update.downtime, true),
        ],
      ),
    );
    out.push('');
    const waves = Math.ceil(n / Math.max(1, update.allowed));
    const ideal = (waves * update.downtime.p50) / 1000;
    out.push(
      `With ${fmt(update.allowed, 0)} nodes at a time and each node down ${fmt(update.downtime.p50 / 1000, 2)} s (p50), ` +
        `${waves} waves back to back would take ~${fmt(ideal, 1)} s; the update took ${fmt(update.statusDone.ms / 1000, 1)} s ` +
        `to the status (${fmt(update.statusDone.ms / 1000 / ideal, 1)}×): the rest is nodes down longer than the median, the ` +
        'controller noticing a node is available again before it deletes the next old pod, and the status catching up.',
    );
    out.push('');
    const bits = [
      `${fmt(update.newPods, 0)} new pods created for ${fmt(n, 0)} nodes${update.timedOut ? ` (**gave up after ${args.waitSeconds} s**)` : ''}`,
      ...commonBullets(update, update.newPods),
      `RSS at the end, MiB: ${Object.entries(rss)
        .map(([k, v]) => `${k} ${fmt(v, 0)}`)
        .join(', ')}`,
    ];
    if (problems?.size) {
      const total = [...problems.values()].reduce((a, b) => a + b, 0);
      bits.push(
        `the hollow fleet logged ${total} lines at warn or above: ` +
          [...problems.entries()]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 3)
            .map(([k, v]) => `${v}× ${k.slice(0, 140)}`)
            .join('; '),
      );
    }
    out.push(bits.map((b) => `- ${b}.`).join('\n'));
    out.push('');
    out.push(
      'Timeline (cumulative counts, committed times, at the end of each window; unavailable: the most in the window, by when ' +
        'the watch showed it; CPU: cores used in the window):',
    );
    out.push('');
    out.push(
      timelineTable(update.timeline, [
        'old marked',
        'old deleted',
        'new created',
        'new Ready',
        'unavailable (max)',
      ]),
    );
    out.push('');
  }

  if (create?.profile) out.push(...profileTables('create', create.profile));
  if (update?.profile) out.push(...profileTables('rolling update', update.profile));

  out.push('### Goal');
  out.push('');
  const met = create && !create.timedOut && goalMs(create) <= GOAL_RUNNING_MS;
  const reading = create && !met ? whereTheTimeGoes(create, n, machine.cores) : [];
  const metUnavailable = update && !update.timedOut && update.maxUnavailable <= update.allowed;
  out.push(
    table(
      ['target', 'value', 'goal', 'result'],
      ['l', 'r', 'l', 'l'],
      [
        [
          `create → all ${fmt(n, 0)} pods Running and the status numberAvailable = ${fmt(n, 0)} (committed)`,
          create ? `${ms(goalMs(create))} ms` : 'n/a',
          `≤ ${fmt(GOAL_RUNNING_MS, 0)} ms`,
          create ? (met ? 'PASS' : '**MISS**') : 'n/a',
        ],
        [
          'rolling update: most nodes unavailable at once',
          update ? fmt(update.maxUnavailable, 0) : 'n/a',
          `≤ ${update ? fmt(update.allowed, 0) : allowedUnavailable(args.maxUnavailable, n)} (maxUnavailable ${args.maxUnavailable})`,
          update ? (metUnavailable ? 'PASS' : '**MISS**') : 'n/a',
        ],
      ],
    ),
  );
  if (reading.length) {
    out.push('');
    out.push(
      `The create goal is missed by ${fmt((goalMs(create!) - GOAL_RUNNING_MS) / 1000, 1)} s. Where the time goes:`,
    );
    out.push('');
    out.push(reading.map((r) => `- ${r}`).join('\n'));
  }
  return out.join('\n') + '\n';
}

/** The goal missed: the critical path and what slows it, in words, from this run's figures. */
function whereTheTimeGoes(f: CreateFigures, n: number, machineCores: number): string[] {
  const out: string[] = [];
  const batches = f.syncs.flatMap((s) => s.batchMs);
  const gaps = f.syncs.slice(1).map((s) => s.gapBefore);
  const controllerShare = f.allExist.ms / goalMs(f);
  out.push(
    `${controllerShare >= 0.5 ? "**The DaemonSet controller's creates set the pace**: the" : 'The'} last of the ` +
      `${fmt(n, 0)} pods was created ${fmt(f.allExist.ms / 1000, 1)} s after the create call ` +
      `(${fmt(100 * controllerShare, 0)}% of the ${fmt(goalMs(f) / 1000, 1)} s); the last was bound ` +
      `${fmt(Math.max(0, f.allScheduled.ms - f.allExist.ms), 0)} ms later and the last was Running ` +
      `${fmt(Math.max(0, f.allRunning.ms - f.allScheduled.ms), 0)} ms after that (per pod, bound → Running: p50 ` +
      `${fmt(f.scheduledToRunning.p50, 0)} ms, p99 ${fmt(f.scheduledToRunning.p99, 0)} ms).`,
  );
  out.push(
    `The creates are ${f.syncs.length} syncs of ≤ ${BURST_REPLICAS} in slow-start batches of 1, 2, 4, …: ` +
      `${batches.length} rounds of creates one after another, each waiting for its slowest create (median ` +
      `${fmt(median(batches), 0)} ms a round), and ${gaps.length} waits between syncs for the controller's informer to ` +
      `see the last sync's pods (${gaps.map((g) => fmt(g, 0)).join(', ')} ms). A round is as slow as a request through ` +
      `the server's event loop: a trivial List from the watch cache took p50 ${fmt(f.rvPolls.rtt.p50, 0)} ms, p99 ` +
      `${fmt(f.rvPolls.rtt.p99, 0)} ms during the phase, against p50 ${fmt(f.idlePolls.rtt.p50, 1)} ms just before it. ` +
      `At that round trip, the ${batches.length} rounds alone would take ~` +
      `${fmt((batches.length * f.idlePolls.rtt.p50) / 1000, 1)} s: the slow start costs in proportion to how long ` +
      'each request waits for the loaded event loop.',
  );
  const p = f.profile;
  if (p?.areas) {
    const area = (re: RegExp) => p.areas!.find((a) => re.test(a.name))?.pct ?? NaN;
    out.push(
      `What keeps the server's main thread busy (${fmt((p.busySamples * (Number.isFinite(p.intervalMs) ? p.intervalMs : 1)) / 1000 / p.seconds, 2)} of a core, by the ` +
        `profile): V8's garbage collector ${fmt(area(/^V8's garbage collector/), 0)}%; the watch fan-out ` +
        `${fmt(area(/^watch fan-out/), 0)}% (every pod and node write is matched against the field selectors of ` +
        `all ~${fmt(n, 0)} agents' watches, one by one); the scheduler ${fmt(area(/^the scheduler/), 0)}% ` +
        `(${fmt(f.metrics.algorithmMeanMs, 2)} ms per DaemonSet pod: it runs its filters over every node although ` +
        "the pod's node affinity names one); the DaemonSet controller itself " +
        `${fmt(area(/^the DaemonSet/), 0)}%. The store committed ${fmt(f.storeWrites / ((f.end - f.t0) / 1000), 0)} ` +
        "writes/s meanwhile (pods, their status, events, and the fleet's leases and node statuses).",
    );
  }
  out.push(
    `The machine: server ${cores(f.cores.server)}, hollow agents ${cores(f.cores.hollow)}, bench ` +
      `${cores(f.cores.bench)} cores; other work ${cores(f.cores.others)} of the ${machineCores} cores` +
      (f.cores.others >= 0.1 ? ' — on a quiet machine the server would have had more of a core.' : '.'),
  );
  out.push(
    `Not a cost to the goal but to anyone watching over gRPC: the bench's pod watch delivered events up to ` +
      `${fmt(f.watchLag.max / 1000, 1)} s after the commit (p50 ${fmt(f.watchLag.p50, 0)} ms): grpc-js sends about two ` +
      "messages of one server stream per turn of the server's event loop, so a busy watch falls behind a busy server.",
  );
  return out;
}

// ------------------------------------------------------------------------------ main

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = new Date();
  const t0 = nowMs();
  const loadStart = loadavg()[0];
  const cleanup = new Cleanup();
  let signals = 0;
  const fail = (why: string, code: number) => {
    // Ctrl-C reaches this process twice under `npm run`: only a third signal skips the cleanup.
    if (++signals > 2) process.exit(code);
    if (signals > 1) return;
    log(why);
    void cleanup.runAll().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => fail('interrupted; cleaning up', 130));
  process.on('SIGTERM', () => fail('terminated; cleaning up', 143));
  const budget = 5 * 60_000 + args.nodes * 150 + 2 * args.waitSeconds * 1000;
  const watchdog = setTimeout(
    () => fail(`the benchmark took more than ${fmt(budget / 60_000, 0)} minutes; giving up`, 1),
    budget,
  );

  const tmp = mkdtempSync(join(tmpdir(), 'kubelab-bench-daemonset-'));
  cleanup.add('temp folder', () => rmSync(tmp, { recursive: true, force: true }));
  const machine = await machineInfo('', REPO_ROOT);
  let cluster: Cluster | undefined;
  let create: CreateFigures | undefined;
  let update: UpdateFigures | undefined;
  const quiets: Array<{ seconds: number; others: number }> = [];
  let error: string | undefined;
  let rss: Record<string, number> = {};
  try {
    cluster = await startCluster(args, tmp, cleanup);
    const c = cluster;
    log(`settling for ${args.settleSeconds} s`);
    await sleep(args.settleSeconds * 1000);
    checkAlive([c.fleet]);
    const admin = c.cp.client(true);
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    const w = await DsWatch.start(c.cp.client(true), c.cp.client(true), c.cp.client(true), args.nodes);
    cleanup.add('watch', () => w.stop());
    const clock = new RvClock(c.cp.client(true));
    cleanup.add('rv clock', () => clock.stop());
    quiets.push(await waitForQuiet(c.sampler, args.quietWaitSeconds));
    create = await createPhase(args, c, admin, w, clock);
    if (!create.timedOut) {
      log('settling for 5 s before the rolling update');
      await sleep(5000);
      quiets.push(await waitForQuiet(c.sampler, args.quietWaitSeconds));
      update = await updatePhase(args, c, admin, w, clock);
    }
    rss = {
      server: memoryOf(c.cp.pid).rss / MiB,
      hollow: memoryOf(c.fleet.pid).rss / MiB,
      bench: memoryOf(process.pid).rss / MiB,
    };
  } catch (err) {
    error = (err as Error).message;
    log(`failed: ${error}`);
  } finally {
    clearTimeout(watchdog);
    log('stopping everything');
    await cleanup.runAll();
  }
  if (cluster?.profileDir) {
    log('reading the server profile');
    if (create) create.profile = readServerProfile(cluster.profileDir, create.mono);
    if (update) update.profile = readServerProfile(cluster.profileDir, update.mono);
  }

  const section = render(
    machine,
    args,
    cluster,
    create,
    update,
    rss,
    started,
    (nowMs() - t0) / 1000,
    [loadStart, loadavg()[0]],
    quiets,
    cluster?.fleet.problems,
    error,
  );
  process.stdout.write('\n' + section);
  if (args.append && create) {
    const path = join(REPO_ROOT, 'BENCHMARKS.md');
    const replaced = replaceSection(path, 'daemonset', section);
    log(`${replaced ? 'replaced the daemonset section of' : 'added a daemonset section to'} ${path}`);
  } else if (args.append) log('not written to BENCHMARKS.md: the run failed');
  process.exitCode = error ? 1 : 0;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
