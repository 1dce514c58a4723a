/**
 * `npm run bench:deployment`: a Deployment of 1,000 replicas on 1,000 hollow nodes that run
 * their pods — how long from creating it until every pod is Running, and how a rolling update
 * goes; the figures, the machine and the date go to BENCHMARKS.md, in the section of this
 * benchmark (replaced on every run) and its row of the summary table at the top. Goals: every
 * pod Running ≤ 10 s after the create call; the rolling update finished ≤ 60 s after the patch,
 * with never more than replicas + maxSurge live pods nor fewer than replicas − maxUnavailable
 * Ready ones.
 *
 * Setup (as bench:daemonset's): a fresh `kubelab server` (SQLite, its in-process controllers as
 * it runs them by default: the Deployment and ReplicaSet controllers, the scheduler and the
 * garbage collector among them) in a child process on 127.0.0.1, with `--cpu-prof` (see
 * --no-profile); --nodes hollow nodes (1,000) joined ahead with a join token (16 at a time) and
 * run by ONE `kubelab-agent --hollow N` child process at the agent's defaults (the hollow nodes
 * run the pods bound to them with the hollow runtime: a container is running at once, no
 * process), so the control plane, the fleet and this process each have a thread of their own.
 * The bench waits until every node is Ready and untainted, lets the fleet settle (--settle s)
 * and waits (≤ --quiet-wait s) until processes it did not start use < 0.3 cores: the machine
 * has 2 cores, often shared with other benchmarks.
 *
 * The bench watches the pods of its namespace, its Deployment, its ReplicaSets and the nodes
 * (gRPC, a connection of its own each) and notes, per pod, the first event in which it exists,
 * has spec.nodeName, is Running, Ready, being deleted, terminal and deleted, with that event's
 * resourceVersion. A watch over gRPC falls seconds behind a busy server, so times come from an
 * "RV clock" as well: another connection polls the server's watch-cache revision every 50 ms (a
 * List of one Namespace at resourceVersion "0"); a write of revision r was committed before the
 * first poll that saw ≥ r answered. A milestone's time is the earlier of the two.
 *
 *   1. create: a Deployment of --replicas (1,000) pods (one container, image bench/web:1, no
 *      resources: the scheduler spreads them by its default requests; RollingUpdate with
 *      maxSurge --max-surge and maxUnavailable --max-unavailable, 25% each) is created; from the
 *      create call: the Deployment controller's ReplicaSet created, every pod seen (the
 *      ReplicaSet controller's share: slow-start batches of 1, 2, 4, … and at most 500 creates
 *      per sync), scheduled, Running (the goal's figure), Ready, and the Deployment's status
 *      with availableReplicas = N and Progressing/NewReplicaSetAvailable; how the pods spread
 *      over the nodes; the ReplicaSet controller's creates matched to its plan.
 *   2. rolling update: the template's image is patched to bench/web:2 (a strategic merge patch,
 *      as `kubectl set image` sends); the rollout is finished once the Deployment's status shows
 *      the new generation observed with updatedReplicas = availableReplicas = replicas = N, and
 *      every live pod (not being deleted, not terminal) is on the new image and Ready. The
 *      bounds are checked after EVERY pod event of the watch, in order (the API's own sequence
 *      of states, not a sampling): live pods ≤ N + maxSurge, Ready live pods ≥ N −
 *      maxUnavailable; and after every ReplicaSet event the sum of the ReplicaSets'
 *      spec.replicas ≤ N + maxSurge. Every change of a ReplicaSet's spec.replicas (the
 *      Deployment controller's scaling steps) is listed with how long its ReplicaSet took to
 *      show it in its status.
 *   3. cronjob: a CronJob (batch/v1, schedule `* * * * *`, concurrencyPolicy Allow; its Jobs run
 *      one pod, restartPolicy Never, one container whose hollow run ends after 5 s: env
 *      KUBELAB_HOLLOW_RUN_SECONDS=5) is created in a namespace of its own, never within 3 s of a
 *      minute's turn, and its Jobs and their pods are watched for --cronjob-minutes (10) schedule
 *      times, the first being the first minute after its creationTimestamp. The controller
 *      (main/controllers/cronjob/) names a Job `<cronjob>-<minutes since the epoch>`, annotates it
 *      with its schedule time (batch.kubernetes.io/cronjob-scheduled-timestamp) and wakes 100 ms
 *      after each schedule time. Per schedule time, in ms after it (wall clock: the bench's clock
 *      is converted by Date.now() − it, measured at the start and the end): the Job created
 *      (committed: the earlier of the Job watch's first event and the RV clock; and as seen), the
 *      CronJob's status.lastScheduleTime written, the Job's pod created, bound, Running, and the
 *      Job Complete. Goal: every Job created ≤ 1,000 ms after its schedule time, and exactly one
 *      Job per schedule time (none missed, none doubled; a Job for a time outside the window's
 *      counts as a double). The phase ends once the last time's Job is Complete (≤ 50 s after
 *      that time, before the next one). It needs few nodes: `--phases cronjob --nodes 10`.
 *
 * Per phase: a timeline (cumulative counts, the bounds, and the cores each process used per
 * window), every process's CPU, the store's writes (resourceVersion before and after), pod
 * writes seen in the watch, the watch's lag and the RV clock's round trips, nodes that went
 * NotReady or tainted, the scheduler's and the deployment and replicaset workqueues' metrics
 * (/metrics), and with the profile the server main thread's time by part and its busiest
 * functions. When a goal is missed, the section ends with where the time went, in words.
 *
 * Options: --no-append (print only), --phases create,update,cronjob (which to run, default all;
 * update needs create), --nodes 1000, --replicas 1000, --max-surge 25%, --max-unavailable 25%,
 * --cronjob-minutes 10, --join-concurrency 16, --settle 10, --quiet-wait 30, --wait 180 (seconds
 * per Deployment phase before giving up), --profile DIR (where the server's profile goes; default
 * a temp folder, kept; by default only when a Deployment phase runs), --no-profile. A quick run:
 * `npm run bench:deployment -- --no-append --nodes 100`; the CronJob alone: `npm run
 * bench:deployment -- --phases cronjob --nodes 10`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOLLOW_RUN_SECONDS_ENV } from '../../agent/runtime/hollow.js';
import { isPodReady, isPodTerminal } from '../../client/api/pods.js';
import type {
  CronJob,
  Deployment,
  DeploymentStatus,
  Event,
  Job,
  Node,
  Pod,
  ReplicaSet,
} from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client, Watch } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { SLOW_START_INITIAL_BATCH_SIZE } from '../../main/controllers/common/slowstart.js';
import { SCHEDULED_TIMESTAMP_ANNOTATION } from '../../main/controllers/cronjob/jobs.js';
import { jobNameFor, NEXT_SCHEDULE_DELTA_MS } from '../../main/controllers/cronjob/schedule.js';
import { BURST_REPLICAS } from '../../main/controllers/replicaset/controller.js';
import { AGENT_BIN } from '../support/agentproc.js';
import { freePort } from '../support/etcd.js';
import { REPO_ROOT, startChildControlPlane, type ChildControlPlane } from './lib/child.js';
import { checkAlive, startProc, type Proc } from './lib/childproc.js';
import { monotonicUs, summarizeCpuProfile, type CpuProfileSummary } from './lib/cpuprofile.js';
import { joinAhead } from './lib/fleet.js';
import { changedNote, machineInfo, type MachineInfo } from './lib/machine.js';
import { memoryOf, MiB, ProcSampler } from './lib/proc.js';
import { replaceSection, table, upsertSummaryRow, type SummaryRow } from './lib/report.js';
import { Cleanup, log } from './lib/run.js';
import { scrape, scrapeDelta, type Scrape } from './lib/scrape.js';
import { fmt, median, nowMs, percentileSorted, sleep, sortedCopy } from './lib/stats.js';

// ------------------------------------------------------------------------------ settings

const PHASES = ['create', 'update', 'cronjob'] as const;
type Phase = (typeof PHASES)[number];

interface Args {
  append: boolean;
  phases: Set<Phase>;
  nodes: number;
  replicas: number;
  maxSurge: string;
  maxUnavailable: string;
  cronjobMinutes: number;
  joinConcurrency: number;
  settleSeconds: number;
  quietWaitSeconds: number;
  waitSeconds: number;
  profile: boolean;
  profileDir?: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    append: true,
    phases: new Set(PHASES),
    nodes: 1000,
    replicas: 1000,
    maxSurge: '25%',
    maxUnavailable: '25%',
    cronjobMinutes: 10,
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
  const intOrPercent = (v: string, flag: string) => {
    if (!/^\d+%?$/.test(v)) throw new Error(`${flag} takes a count (250) or a percentage (25%)`);
    return v;
  };
  const phases = (v: string, flag: string) => {
    const list = v.split(',').map((x) => x.trim());
    const bad = list.filter((x) => !(PHASES as readonly string[]).includes(x));
    if (bad.length || !v.trim())
      throw new Error(`${flag} takes a list of ${PHASES.join(', ')} (comma-separated): ${bad.join(', ')}`);
    return new Set(list as Phase[]);
  };
  let profileGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--no-append') args.append = false;
    else if (a === '--phases') args.phases = phases(value(), a);
    else if (a === '--cronjob-minutes') args.cronjobMinutes = positive(value(), a);
    else if (a === '--nodes') args.nodes = positive(value(), a);
    else if (a === '--replicas') args.replicas = positive(value(), a);
    else if (a === '--max-surge') args.maxSurge = intOrPercent(value(), a);
    else if (a === '--max-unavailable') args.maxUnavailable = intOrPercent(value(), a);
    else if (a === '--join-concurrency') args.joinConcurrency = positive(value(), a);
    else if (a === '--settle') args.settleSeconds = seconds(value(), a);
    else if (a === '--quiet-wait') args.quietWaitSeconds = seconds(value(), a);
    else if (a === '--wait') args.waitSeconds = positive(value(), a);
    else if (a === '--profile') {
      args.profile = true;
      args.profileDir = value();
      profileGiven = true;
    } else if (a === '--no-profile') {
      args.profile = false;
      profileGiven = true;
    } else
      throw new Error(`unknown option ${a}; see the comment at the top of test/bench/deployment.bench.ts`);
  }
  if (/^0+%?$/.test(args.maxSurge) && /^0+%?$/.test(args.maxUnavailable))
    throw new Error('--max-surge and --max-unavailable may not both be 0');
  if (args.phases.has('update') && !args.phases.has('create'))
    throw new Error('--phases: the update phase needs the create phase (it updates its Deployment)');
  // The server's profile serves the Deployment phases' reports only.
  if (!profileGiven) args.profile = args.phases.has('create');
  return args;
}

const NAMESPACE = 'deploy-bench';
const DEPLOY_NAME = 'web';
const CONTAINER = 'web';
const HOLLOW_PREFIX = 'deploy-hollow';
const IMAGE_1 = 'bench/web:1';
const IMAGE_2 = 'bench/web:2';
const GOAL_RUNNING_MS = 10_000;
const GOAL_ROLLOUT_MS = 60_000;
const NEW_RS_AVAILABLE = 'NewReplicaSetAvailable';
/** Cores that processes this benchmark did not start may use while the machine counts as quiet. */
const QUIET_CORES = 0.3;
/** How often the RV clock polls the store's revision, ms. */
const RV_POLL_MS = 50;
/** Timeline rows per phase, at most. */
const TIMELINE_ROWS = 24;
/** Scaling steps listed in the report, at most. */
const STEP_ROWS = 40;
const CRON_NAMESPACE = 'cron-bench';
const CRON_NAME = 'tick';
const CRON_IMAGE = 'bench/tick:1';
const CRON_SCHEDULE = '* * * * *';
/** How long each Job's one container runs (its hollow run), s. */
const CRON_RUN_SECONDS = 5;
/** Job created ≤ this long after its schedule time, ms. */
const GOAL_CRON_CREATE_MS = 1000;
/** The phase ends at the latest this long after the last schedule time (before the next), ms. */
const CRON_TAIL_MS = 50_000;

/**
 * An int-or-percent against `total`, as Kubernetes resolves the fenceposts: maxSurge rounded
 * up, maxUnavailable down (both 0 would mean 1 unavailable; refused by parseArgs).
 */
function scaled(value: string, total: number, roundUp: boolean): number {
  const m = /^(\d+)%$/.exec(value);
  if (!m) return Number(value);
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

interface Bounds {
  surge: number;
  unavailable: number;
  /** Live pods at most (replicas + maxSurge), and Ready live pods at least (replicas − maxUnavailable). */
  maxLive: number;
  minReady: number;
}

function bounds(args: Args): Bounds {
  const surge = scaled(args.maxSurge, args.replicas, true);
  const unavailable = scaled(args.maxUnavailable, args.replicas, false);
  return { surge, unavailable, maxLive: args.replicas + surge, minReady: args.replicas - unavailable };
}

const intOrPercentValue = (v: string): string | number => (/%$/.test(v) ? v : Number(v));

function deployment(args: Args): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: DEPLOY_NAME, namespace: NAMESPACE },
    spec: {
      replicas: args.replicas,
      selector: { matchLabels: { app: DEPLOY_NAME } },
      strategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          maxSurge: intOrPercentValue(args.maxSurge),
          maxUnavailable: intOrPercentValue(args.maxUnavailable),
        },
      },
      template: {
        metadata: { labels: { app: DEPLOY_NAME } },
        spec: { containers: [{ name: CONTAINER, image: IMAGE_1 }] },
      },
    },
  };
}

const progressingReason = (s: DeploymentStatus | undefined) =>
  s?.conditions?.find((c) => c.type === 'Progressing')?.reason ?? '';

// ------------------------------------------------------------------------------ watching

type Milestone = 'added' | 'scheduled' | 'running' | 'ready' | 'deleting' | 'terminal' | 'deleted';

/**
 * What the watch saw of one pod: per milestone, when the bench's watch delivered it (this
 * process's clock, ms) and the resourceVersion of the write that reached it.
 */
interface PodRecord {
  uid: string;
  name: string;
  /** Its ReplicaSet (the controller owner reference). */
  rs: string;
  node: string;
  image: string;
  seen: Partial<Record<Milestone, number>>;
  rv: Partial<Record<Milestone, number>>;
  /** Not being deleted, not terminal, not deleted. */
  live: boolean;
  /** Live and Ready. */
  readyLive: boolean;
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

  /** The earlier of the watch's delivery `at` and the clock's "committed by" for `rv`. */
  when(rv: number | undefined, at: number): number {
    const by = this.committedBy(rv);
    return by === undefined ? at : Math.min(at, by);
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
  status: DeploymentStatus;
}

/** One event of the ReplicaSet watch. */
interface RsEvent {
  at: number;
  rv: number;
  type: string;
  uid: string;
  name: string;
  image: string;
  /** spec.replicas (0 once deleted). */
  spec: number;
  replicas: number;
  ready: number;
  available: number;
}

/** The pods' bounds after one pod event (while tracking). */
interface BoundSample {
  at: number;
  rv: number;
  live: number;
  readyLive: number;
}

/**
 * One watch each of the namespace's pods, its Deployments, its ReplicaSets and the nodes, from
 * before the Deployment exists.
 */
class DeployWatch {
  readonly pods = new Map<string, PodRecord>();
  readonly statuses: StatusSeen[] = [];
  readonly rsEvents: RsEvent[] = [];
  readonly byImage = new Map<string, Counts>();
  readonly podEvents = { ADDED: 0, MODIFIED: 0, DELETED: 0 };
  error?: Error;
  /** Live pods now, and Ready live pods, in all and by image. */
  live = 0;
  readyLive = 0;
  readonly liveByImage = new Map<string, number>();
  readonly readyLiveByImage = new Map<string, number>();
  /** spec.replicas of each ReplicaSet that exists, by uid, and their sum. */
  private readonly rsSpec = new Map<string, number>();
  rsSum = 0;
  /** From `track()` on: every pod event's bounds, and every ReplicaSet event's sum. */
  private tracking: { image: string; replicas: number } | undefined;
  readonly samples: BoundSample[] = [];
  readonly rsSums: Array<{ at: number; rv: number; sum: number }> = [];
  maxLive = 0;
  maxLiveSample?: BoundSample;
  minReadyLive = Infinity;
  minReadySample?: BoundSample;
  maxRsSum = 0;
  maxRsSumAt?: { at: number; rv: number };
  /**
   * The last pod event after which every live pod was on the tracked image and Ready, and there
   * were at least `replicas` of them (undefined while that does not hold).
   */
  done?: { at: number; rv: number };
  /** The bounds when `track()` was called. */
  trackStart?: BoundSample;
  /**
   * Nodes not Ready or with a NoSchedule/NoExecute taint (a node whose lease lapsed on a starved
   * machine gets the not-ready taint); the most at once since `trackNodes()`.
   */
  readonly unhealthyNodes = new Set<string>();
  maxUnhealthyNodes = 0;
  private readonly loops: Array<Promise<void>>;

  private constructor(
    private readonly podWatch: Watch<Pod>,
    private readonly deployWatch: Watch<Deployment>,
    private readonly rsWatch: Watch<ReplicaSet>,
    private readonly nodeWatch: Watch<Node>,
  ) {
    this.loops = [
      this.consume(podWatch, (t, p, at) => this.onPod(t, p, at)),
      this.consume(deployWatch, (t, d, at) => this.onDeployment(t, d, at)),
      this.consume(rsWatch, (t, rs, at) => this.onReplicaSet(t, rs, at)),
      this.consume(nodeWatch, (t, n) => this.onNode(t, n)),
    ];
  }

  static async start(
    podClient: Client,
    deployClient: Client,
    rsClient: Client,
    nodeClient: Client,
  ): Promise<DeployWatch> {
    const from = async (c: Client, kind: 'Pod' | 'Deployment' | 'ReplicaSet') =>
      (await c.list(kind, { namespace: NAMESPACE, limit: 1 })).resourceVersion ?? '';
    const pods = await podClient.watch('Pod', {
      namespace: NAMESPACE,
      resourceVersion: await from(podClient, 'Pod'),
    });
    const deploys = await deployClient.watch('Deployment', {
      namespace: NAMESPACE,
      resourceVersion: await from(deployClient, 'Deployment'),
    });
    const rss = await rsClient.watch('ReplicaSet', {
      namespace: NAMESPACE,
      resourceVersion: await from(rsClient, 'ReplicaSet'),
    });
    // From "0": every node first, as ADDED.
    const nodeWatch = await nodeClient.watch('Node', { resourceVersion: '0' });
    return new DeployWatch(pods, deploys, rss, nodeWatch);
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

  private onDeployment(type: string, d: Deployment, at: number): void {
    if (type === 'DELETED' || d.metadata?.name !== DEPLOY_NAME) return;
    this.statuses.push({
      at,
      rv: Number(d.metadata?.resourceVersion),
      generation: d.metadata?.generation ?? 0,
      status: d.status ?? {},
    });
  }

  private onReplicaSet(type: string, rs: ReplicaSet, at: number): void {
    if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
    const uid = rs.metadata?.uid ?? '';
    const rv = Number(rs.metadata?.resourceVersion);
    const spec = type === 'DELETED' ? 0 : (rs.spec?.replicas ?? 0);
    this.rsEvents.push({
      at,
      rv,
      type,
      uid,
      name: rs.metadata?.name ?? '',
      image: rs.spec?.template?.spec?.containers?.[0]?.image ?? '',
      spec,
      replicas: rs.status?.replicas ?? 0,
      ready: rs.status?.readyReplicas ?? 0,
      available: rs.status?.availableReplicas ?? 0,
    });
    this.rsSum += spec - (this.rsSpec.get(uid) ?? 0);
    if (type === 'DELETED') this.rsSpec.delete(uid);
    else this.rsSpec.set(uid, spec);
    if (this.tracking) {
      this.rsSums.push({ at, rv, sum: this.rsSum });
      if (this.rsSum > this.maxRsSum) {
        this.maxRsSum = this.rsSum;
        this.maxRsSumAt = { at, rv };
      }
    }
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
        rs: pod.metadata?.ownerReferences?.find((o) => o.controller)?.name ?? '(none)',
        node: '',
        image: pod.spec?.containers?.[0]?.image ?? '',
        seen: {},
        rv: {},
        live: false,
        readyLive: false,
        events: 0,
      };
      this.pods.set(uid, r);
    }
    r.events++;
    if (!r.node && pod.spec?.nodeName) r.node = pod.spec.nodeName;
    const c = this.counts(r.image);
    const reach = (m: Milestone, yes: boolean) => {
      if (!yes || r.seen[m] !== undefined) return false;
      r.seen[m] = at;
      r.rv[m] = rv;
      return true;
    };
    const ready = isPodReady(pod);
    if (reach('added', true)) c.created++;
    if (reach('scheduled', !!pod.spec?.nodeName)) c.scheduled++;
    if (reach('running', pod.status?.phase === 'Running')) c.running++;
    if (reach('ready', ready)) c.ready++;
    reach('deleting', !!pod.metadata?.deletionTimestamp);
    reach('terminal', isPodTerminal(pod));
    reach('deleted', type === 'DELETED');
    const live = type !== 'DELETED' && !pod.metadata?.deletionTimestamp && !isPodTerminal(pod);
    const readyLive = live && ready;
    const bump = (m: Map<string, number>, by: number) => m.set(r.image, (m.get(r.image) ?? 0) + by);
    if (live !== r.live) {
      r.live = live;
      this.live += live ? 1 : -1;
      bump(this.liveByImage, live ? 1 : -1);
    }
    if (readyLive !== r.readyLive) {
      r.readyLive = readyLive;
      this.readyLive += readyLive ? 1 : -1;
      bump(this.readyLiveByImage, readyLive ? 1 : -1);
    }
    if (this.tracking) this.check(at, rv);
  }

  /** After a pod event: the bounds, and whether every live pod is on the new image and Ready. */
  private check(at: number, rv: number): void {
    const s: BoundSample = { at, rv, live: this.live, readyLive: this.readyLive };
    this.samples.push(s);
    if (s.live > this.maxLive) {
      this.maxLive = s.live;
      this.maxLiveSample = s;
    }
    if (s.readyLive < this.minReadyLive) {
      this.minReadyLive = s.readyLive;
      this.minReadySample = s;
    }
    const { image, replicas } = this.tracking!;
    const allNew = this.live >= replicas && (this.readyLiveByImage.get(image) ?? 0) === this.live;
    if (allNew && !this.done) this.done = { at, rv };
    if (!allNew) this.done = undefined;
  }

  /**
   * Tracks the bounds from now on: every pod event's live and Ready live pods, every ReplicaSet
   * event's sum of spec.replicas, and when every live pod is on `image` and Ready.
   */
  track(image: string, replicas: number): void {
    this.tracking = { image, replicas };
    this.samples.length = 0;
    this.rsSums.length = 0;
    const s: BoundSample = { at: nowMs(), rv: 0, live: this.live, readyLive: this.readyLive };
    this.trackStart = s;
    this.maxLive = s.live;
    this.maxLiveSample = s;
    this.minReadyLive = s.readyLive;
    this.minReadySample = s;
    this.maxRsSum = this.rsSum;
    this.maxRsSumAt = { at: s.at, rv: 0 };
    this.done = undefined;
  }

  /** The first status seen at or after `from` that satisfies `ok`, or undefined. */
  firstStatus(from: number, ok: (s: StatusSeen) => boolean): StatusSeen | undefined {
    return this.statuses.find((s) => s.at >= from && ok(s));
  }

  latestStatus(): DeploymentStatus {
    return this.statuses[this.statuses.length - 1]?.status ?? {};
  }

  async stop(): Promise<void> {
    this.podWatch.stop();
    this.deployWatch.stop();
    this.rsWatch.stop();
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
  /** Per column: a cumulative count at the window's end, or the most / least in the window. */
  values: number[];
  cores?: ProcCores;
}

/** One controller's workqueue over a phase (workqueue_* with name="…"). */
interface QueueFigures {
  /** Syncs (work items done), their total time, queue adds and retries. */
  syncs: number;
  syncSeconds: number;
  adds: number;
  retries: number;
  /** Mean time a key waited in the queue before a sync took it, ms. */
  queueMeanMs: number;
}

interface ServerMetrics {
  scheduled: number;
  schedulingErrors: number;
  unschedulable: number;
  /** Mean time in the scheduler's algorithm per scheduled pod, ms. */
  algorithmMeanMs: number;
  deployment: QueueFigures;
  replicaset: QueueFigures;
}

/** One controller's workqueue between two scrapes. */
function queueFigures(before: Scrape, after: Scrape, name: string): QueueFigures {
  const d = (m: string) => scrapeDelta(before, after, `workqueue_${m}{name="${name}"}`);
  return {
    syncs: d('work_duration_seconds_count'),
    syncSeconds: d('work_duration_seconds_sum'),
    adds: d('adds_total'),
    retries: d('retries_total'),
    queueMeanMs: (d('queue_duration_seconds_sum') / d('queue_duration_seconds_count')) * 1000,
  };
}

function serverMetrics(before: Scrape, after: Scrape): ServerMetrics {
  const d = (k: string) => scrapeDelta(before, after, k);
  const H = 'scheduler_scheduling_algorithm_duration_seconds';
  const queue = (name: string) => queueFigures(before, after, name);
  return {
    scheduled: d('scheduler_schedule_attempts_total{result="scheduled"}'),
    schedulingErrors: d('scheduler_schedule_attempts_total{result="error"}'),
    unschedulable: d('scheduler_schedule_attempts_total{result="unschedulable"}'),
    algorithmMeanMs: (d(`${H}_sum{result="scheduled"}`) / d(`${H}_count{result="scheduled"}`)) * 1000,
    deployment: queue('deployment'),
    replicaset: queue('replicaset'),
  };
}

type ServerProfile = CpuProfileSummary & { areas?: Array<{ name: string; pct: number }> };

/** What every phase reports besides its own figures. */
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
  /** ReplicaSet and Deployment events the bench's watches saw in the phase. */
  rsEvents: number;
  deployEvents: number;
  metrics: ServerMetrics;
  /** How much later the bench's pod watch delivered a milestone than the RV clock saw it committed, ms. */
  watchLag: Dist;
  /** The RV clock's polls in the phase, and their round trips. */
  rvPolls: { n: number; rtt: Dist };
  /** The RV clock's round trips in the 3 s before the phase's call: the server's responsiveness at rest. */
  idlePolls: { n: number; rtt: Dist };
  /** The most nodes not Ready or tainted NoSchedule/NoExecute at once in the phase, and at its end. */
  maxUnhealthyNodes: number;
  unhealthyNodesAtEnd: number;
  profile?: ServerProfile;
}

/** A milestone reached: ms after the call, committed (RV clock) and seen in a watch. */
interface AllReached {
  ms: number;
  seenMs: number;
}

const NOT_REACHED: AllReached = { ms: NaN, seenMs: NaN };

interface CreateFigures extends PhaseCommon {
  generation: number;
  podsCreated: number;
  rsCreated: AllReached;
  allExist: AllReached;
  allScheduled: AllReached;
  allRunning: AllReached;
  allReady: AllReached;
  statusAvailable: AllReached;
  statusComplete: AllReached;
  toCreated: Dist;
  createdToScheduled: Dist;
  scheduledToRunning: Dist;
  runningToReady: Dist;
  toRunning: Dist;
  /**
   * The ReplicaSet controller's creates as its code plans them — syncs of at most
   * BURST_REPLICAS creates, each in slow-start batches that wait for their slowest create —
   * matched to the pods in commit order, from the ReplicaSet's creation.
   */
  syncs: SyncSeen[];
  /** The longest pause between two consecutive pod creates committed, and when it began (ms after the call). */
  longestGapMs: number;
  longestGapAtMs: number;
  spread: Spread;
}

/** How the pods spread over the nodes. */
interface Spread {
  nodes: number;
  nodesUsed: number;
  /** Nodes by how many of the pods they got: [0, 1, 2, 3, 4 or more]. */
  histogram: number[];
  maxPerNode: number;
  /** The fewest any node got, and the ideal (pods ÷ nodes, rounded up). */
  minPerNode: number;
  ideal: number;
}

interface SyncSeen {
  batches: number[];
  /** ms after the create call: the sync's first pod committed, its last. */
  first: number;
  last: number;
  /** Per batch: its last pod committed − the previous batch's last (or the ReplicaSet's creation), ms. */
  batchMs: number[];
  /** This sync's first pod − the previous sync's last pod (or the ReplicaSet's creation), ms. */
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

/** `created`: the pods' create times in commit order; `from`: when the plan could start; `t0`: the call. */
function matchPlan(created: number[], from: number, t0: number): SyncSeen[] {
  const out: SyncSeen[] = [];
  let i = 0;
  let prevLast = from;
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

/** One change of a ReplicaSet's spec.replicas in the rolling update: a Deployment controller's step. */
interface ScaleStep {
  /** Committed, ms after the patch call. */
  ms: number;
  rs: 'new' | 'old';
  name: string;
  from: number;
  to: number;
  /** Until the ReplicaSet's status.replicas showed the new size (the pods created or marked for deletion), ms. */
  statusMs: number;
  /** Scale-ups: until its status.availableReplicas reached the new size, ms. */
  availableMs: number;
  /** Since the previous ReplicaSet write (any; or the patch call): what the Deployment controller answered at the latest, ms. */
  reactionMs: number;
  /** Live and Ready live pods when it was committed (the pod watch's state at that revision). */
  live: number;
  readyLive: number;
}

interface UpdateFigures extends PhaseCommon {
  generation: number;
  bounds: Bounds;
  newPods: number;
  oldPods: number;
  newRsCreated: AllReached;
  allNewExist: AllReached;
  allNewReady: AllReached;
  allOldMarked: AllReached;
  allOldGone: AllReached;
  statusDone: AllReached;
  podsDone: AllReached;
  /** The goal's figure: the later of statusDone and podsDone (committed), ms after the patch call. */
  finishMs: number;
  maxLive: number;
  maxLiveMs: number;
  minReadyLive: number;
  minReadyMs: number;
  /** Pod events after which a bound was broken. */
  liveOver: number;
  readyUnder: number;
  podEventsChecked: number;
  maxRsSum: number;
  maxRsSumMs: number;
  rsEventsChecked: number;
  /** The most the Deployment's status reported (status.replicas), and its least availableReplicas. */
  maxStatusReplicas: number;
  minStatusAvailable: number;
  steps: ScaleStep[];
  newCreatedToScheduled: Dist;
  newScheduledToRunning: Dist;
  newRunningToReady: Dist;
  oldMarkedToGone: Dist;
  oldMarkedToDeleted: Dist;
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
    return (await tokens.create({ description: 'bench:deployment' })).token!;
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
    profileDir = args.profileDir ?? join(tmpdir(), 'kubelab-bench-deployment-prof');
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

/** A timeline column: its value for the window [from, to] (this process's clock, ms). */
type Series = (from: number, to: number) => number;

function timeline(sampler: ProcSampler, t0: number, end: number, series: Series[]): TimelineRow[] {
  const w = windowSeconds(end - t0);
  const rows: TimelineRow[] = [];
  for (let k = 0; t0 + k * w * 1000 < end; k++) {
    const from = t0 + k * w * 1000;
    const to = Math.min(end, from + w * 1000);
    rows.push({
      fromS: k * w,
      toS: (to - t0) / 1000,
      values: series.map((f) => f(from, to)),
      cores: coresOver(sampler, from, to),
    });
  }
  return rows;
}

/** Cumulative: how many of `times` are at or before the window's end. */
const countUpTo =
  (times: Array<number | undefined>): Series =>
  (_from, to) =>
    times.reduce((n: number, t) => n + (t !== undefined && t <= to ? 1 : 0), 0);

/**
 * The most (or least) of a stepwise value over each window: `points` are (time, value) in time
 * order, the value holding until the next point; `initial` before the first.
 */
function extremeOver(points: Array<{ t: number; v: number }>, initial: number, most: boolean): Series {
  return (from, to) => {
    let v = initial;
    let best = NaN;
    for (const p of points) {
      if (p.t > to) break;
      if (p.t <= from) v = p.v;
      else best = Number.isNaN(best) ? p.v : most ? Math.max(best, p.v) : Math.min(best, p.v);
    }
    return Number.isNaN(best) ? v : most ? Math.max(best, v) : Math.min(best, v);
  };
}

// ------------------------------------------------------------------------------ the phases

/**
 * When a pod reached a milestone: the earlier of the RV clock's "committed by" and the moment the
 * watch delivered it (both are upper bounds of the commit).
 */
function when(clock: RvClock, r: PodRecord, m: Milestone): number | undefined {
  const seen = r.seen[m];
  return seen === undefined ? undefined : clock.when(r.rv[m], seen);
}

/** When the `n`-th of `recs` reached `m` (committed and seen), ms after t0; NaN if fewer did. */
function allReached(clock: RvClock, recs: PodRecord[], m: Milestone, n: number, t0: number): AllReached {
  const nth = (xs: number[]) => (xs.length >= n && n > 0 ? sortedCopy(xs)[n - 1] - t0 : NaN);
  return {
    ms: nth(defined(recs.map((r) => when(clock, r, m)))),
    seenMs: nth(defined(recs.map((r) => r.seen[m]))),
  };
}

const reachedAt = (clock: RvClock, x: { at: number; rv: number } | undefined, t0: number): AllReached =>
  x ? { ms: clock.when(x.rv, x.at) - t0, seenMs: x.at - t0 } : NOT_REACHED;

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
  events0: { pods: DeployWatch['podEvents']; rs: number; deploys: number },
  w: DeployWatch,
  recs: PodRecord[],
  timedOut: boolean,
  series: Series[],
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
      ADDED: w.podEvents.ADDED - events0.pods.ADDED,
      MODIFIED: w.podEvents.MODIFIED - events0.pods.MODIFIED,
      DELETED: w.podEvents.DELETED - events0.pods.DELETED,
    },
    rsEvents: w.rsEvents.length - events0.rs,
    deployEvents: w.statuses.length - events0.deploys,
    metrics: serverMetrics(before, after),
    watchLag: dist(lags),
    rvPolls: clock.polls(t0, end),
    idlePolls: clock.polls(t0 - 3000, t0),
    maxUnhealthyNodes: w.maxUnhealthyNodes,
    unhealthyNodesAtEnd: w.unhealthyNodes.size,
  };
}

function spreadOf(recs: PodRecord[], nodes: number): Spread {
  const perNode = new Map<string, number>();
  for (const r of recs) if (r.node) perNode.set(r.node, (perNode.get(r.node) ?? 0) + 1);
  const histogram = [nodes - perNode.size, 0, 0, 0, 0];
  for (const k of perNode.values()) histogram[Math.min(4, k)]++;
  const counts = [...perNode.values()];
  return {
    nodes,
    nodesUsed: perNode.size,
    histogram,
    maxPerNode: counts.length ? Math.max(...counts) : 0,
    minPerNode: perNode.size < nodes ? 0 : Math.min(...counts),
    ideal: Math.ceil(recs.length / nodes),
  };
}

function phaseStart(w: DeployWatch) {
  return { pods: { ...w.podEvents }, rs: w.rsEvents.length, deploys: w.statuses.length };
}

async function createPhase(
  args: Args,
  c: Cluster,
  admin: Client,
  w: DeployWatch,
  clock: RvClock,
): Promise<CreateFigures> {
  const n = args.replicas;
  const before = await scrape(c.metricsPort);
  const rv0 = await storeRevision(admin);
  const events0 = phaseStart(w);
  const counts = w.counts(IMAGE_1);
  log(
    `create: creating Deployment ${NAMESPACE}/${DEPLOY_NAME} (image ${IMAGE_1}, ${n} replicas) on ${args.nodes} nodes`,
  );
  w.trackNodes();
  const mono0 = monotonicUs();
  const t0 = nowMs();
  const created = await admin.create(deployment(args));
  const callMs = nowMs() - t0;
  const generation = created.metadata?.generation ?? 1;
  const statusAvailable = () => w.firstStatus(t0, (s) => (s.status.availableReplicas ?? 0) >= n);
  const statusComplete = () =>
    w.firstStatus(
      t0,
      (s) =>
        (s.status.observedGeneration ?? 0) >= generation &&
        (s.status.availableReplicas ?? 0) >= n &&
        progressingReason(s.status) === NEW_RS_AVAILABLE,
    );
  const progress = () => {
    const s = w.latestStatus();
    log(
      `create: ${fmt((nowMs() - t0) / 1000, 1)} s: the pod watch has seen ${counts.created}/${n} pods, ` +
        `${counts.scheduled} scheduled, ${counts.running} Running, ${counts.ready} Ready; the Deployment's status: ` +
        `${s.replicas ?? 0} replicas, ${s.availableReplicas ?? 0} available, Progressing ${progressingReason(s) || '–'}; ` +
        `${w.unhealthyNodes.size} nodes not Ready or tainted`,
    );
  };
  let lastLog = nowMs();
  const deadline = t0 + args.waitSeconds * 1000;
  while (!(counts.running >= n && counts.ready >= n && statusComplete()) && nowMs() < deadline) {
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
    countUpTo(at('ready')),
  ]);
  const rsAdded = w.rsEvents.find((e) => e.type === 'ADDED' && e.at >= t0);
  const rsCreated = reachedAt(clock, rsAdded, t0);
  const byCommit = [...recs].sort((a, b) => (a.rv.added ?? 0) - (b.rv.added ?? 0));
  const createdAt = byCommit.map((r) => when(clock, r, 'added')!);
  let longestGap = 0;
  let longestGapAt = NaN;
  for (let i = 1; i < createdAt.length; i++)
    if (createdAt[i] - createdAt[i - 1] > longestGap) {
      longestGap = createdAt[i] - createdAt[i - 1];
      longestGapAt = createdAt[i - 1] - t0;
    }
  const figures: CreateFigures = {
    ...common,
    generation,
    podsCreated: recs.length,
    rsCreated,
    allExist: allReached(clock, recs, 'added', n, t0),
    allScheduled: allReached(clock, recs, 'scheduled', n, t0),
    allRunning: allReached(clock, recs, 'running', n, t0),
    allReady: allReached(clock, recs, 'ready', n, t0),
    statusAvailable: reachedAt(clock, statusAvailable(), t0),
    statusComplete: reachedAt(clock, statusComplete(), t0),
    toCreated: dist(defined(recs.map((r) => between(t0, when(clock, r, 'added'))))),
    createdToScheduled: dist(
      defined(recs.map((r) => between(when(clock, r, 'added'), when(clock, r, 'scheduled')))),
    ),
    scheduledToRunning: dist(
      defined(recs.map((r) => between(when(clock, r, 'scheduled'), when(clock, r, 'running')))),
    ),
    runningToReady: dist(
      defined(recs.map((r) => between(when(clock, r, 'running'), when(clock, r, 'ready')))),
    ),
    toRunning: dist(defined(recs.map((r) => between(t0, when(clock, r, 'running'))))),
    syncs: matchPlan(createdAt, Number.isFinite(rsCreated.ms) ? t0 + rsCreated.ms : t0, t0),
    longestGapMs: longestGap,
    longestGapAtMs: longestGapAt,
    spread: spreadOf(recs, args.nodes),
  };
  log(
    `create: the create call took ${fmt(callMs, 0)} ms; ReplicaSet created ${fmt(rsCreated.ms, 0)} ms; all ${n} pods ` +
      `created ${fmt(figures.allExist.ms, 0)} ms, scheduled ${fmt(figures.allScheduled.ms, 0)} ms, Running ` +
      `${fmt(figures.allRunning.ms, 0)} ms (seen in the watch: ${fmt(figures.allRunning.seenMs, 0)} ms), status ` +
      `availableReplicas=${n} ${fmt(figures.statusAvailable.ms, 0)} ms, ${NEW_RS_AVAILABLE} ` +
      `${fmt(figures.statusComplete.ms, 0)} ms after the create call; ${figures.spread.nodesUsed} nodes used, at most ` +
      `${figures.spread.maxPerNode} pods on one` +
      (timedOut ? ` (gave up after ${args.waitSeconds} s)` : ''),
  );
  return figures;
}

/** The Deployment controller's scaling steps in the rolling update, from the ReplicaSet watch. */
function scaleSteps(
  w: DeployWatch,
  clock: RvClock,
  t0: number,
  newImage: string,
  samples: BoundSample[],
): ScaleStep[] {
  const steps: ScaleStep[] = [];
  const lastSpec = new Map<string, number>();
  /** The previous ReplicaSet write (any: created, scaled, status), or the patch call. */
  let prevWrite = t0;
  const events = w.rsEvents;
  // The pods' state at a revision: the last sample at or before it.
  const stateAt = (rv: number) => {
    let lo = 0;
    let hi = samples.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (samples[mid].rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? samples[lo - 1] : undefined;
  };
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    const t = clock.when(e.rv, e.at);
    const before = lastSpec.get(e.uid) ?? 0;
    lastSpec.set(e.uid, e.spec);
    if (e.at >= t0 && e.spec !== before && e.type !== 'DELETED') {
      const up = e.spec > before;
      let statusAt: number | undefined;
      let availableAt: number | undefined;
      for (let j = i + 1; j < events.length; j++) {
        const f = events[j];
        if (f.uid !== e.uid) continue;
        const tf = clock.when(f.rv, f.at);
        if (statusAt === undefined && (up ? f.replicas >= e.spec : f.replicas <= e.spec)) statusAt = tf;
        if (up && availableAt === undefined && f.available >= e.spec) availableAt = tf;
        if (statusAt !== undefined && (!up || availableAt !== undefined)) break;
      }
      const s = stateAt(e.rv) ?? w.trackStart;
      steps.push({
        ms: t - t0,
        rs: e.image === newImage ? 'new' : 'old',
        name: e.name,
        from: before,
        to: e.spec,
        statusMs: statusAt === undefined ? NaN : statusAt - t,
        availableMs: availableAt === undefined ? NaN : availableAt - t,
        reactionMs: t - prevWrite,
        live: s?.live ?? NaN,
        readyLive: s?.readyLive ?? NaN,
      });
    }
    if (e.at >= t0) prevWrite = Math.max(t0, t);
  }
  return steps;
}

async function updatePhase(
  args: Args,
  c: Cluster,
  admin: Client,
  w: DeployWatch,
  clock: RvClock,
): Promise<UpdateFigures> {
  const n = args.replicas;
  const b = bounds(args);
  const before = await scrape(c.metricsPort);
  const rv0 = await storeRevision(admin);
  const events0 = phaseStart(w);
  const counts = w.counts(IMAGE_2);
  const oldRecs = () => [...w.pods.values()].filter((r) => r.image === IMAGE_1);
  const oldAlive = () => oldRecs().filter((r) => r.seen.deleted === undefined).length;
  log(
    `update: patching the template's image to ${IMAGE_2} (maxSurge ${args.maxSurge} = ${b.surge}, ` +
      `maxUnavailable ${args.maxUnavailable} = ${b.unavailable}: live ≤ ${b.maxLive}, Ready ≥ ${b.minReady})`,
  );
  w.trackNodes();
  const mono0 = monotonicUs();
  const t0 = nowMs();
  w.track(IMAGE_2, n);
  const patched = await admin.patch(
    'Deployment',
    DEPLOY_NAME,
    { spec: { template: { spec: { containers: [{ name: CONTAINER, image: IMAGE_2 }] } } } },
    { namespace: NAMESPACE, type: 'strategic' },
  );
  const generation = patched.metadata?.generation ?? 0;
  const statusDone = () =>
    w.firstStatus(
      t0,
      (s) =>
        s.generation >= generation &&
        (s.status.observedGeneration ?? 0) >= generation &&
        s.status.updatedReplicas === n &&
        s.status.availableReplicas === n &&
        s.status.replicas === n,
    );
  const progress = () => {
    const s = w.latestStatus();
    log(
      `update: ${fmt((nowMs() - t0) / 1000, 1)} s: the pod watch has seen ${counts.created} new pods, ` +
        `${counts.running} Running, ${counts.ready} Ready, ${oldAlive()} old pods left; live ${w.live} ` +
        `(max ${w.maxLive}, ≤ ${b.maxLive}), Ready live ${w.readyLive} (min ${w.minReadyLive}, ≥ ${b.minReady}), ` +
        `ReplicaSets' replicas ${w.rsSum} (max ${w.maxRsSum}); the Deployment's status: ${s.replicas ?? 0} replicas, ` +
        `${s.updatedReplicas ?? 0} updated, ${s.availableReplicas ?? 0} available; ` +
        `${w.unhealthyNodes.size} nodes not Ready or tainted`,
    );
  };
  let lastLog = nowMs();
  const deadline = t0 + args.waitSeconds * 1000;
  while (!(w.done && statusDone()) && nowMs() < deadline) {
    if (w.error) throw w.error;
    checkAlive([c.fleet]);
    await sleep(50);
    if (nowMs() - lastLog >= 2000) {
      lastLog = nowMs();
      progress();
    }
  }
  const timedOut = nowMs() >= deadline;
  const podsDoneAt = w.done;
  // The last old pods may still be on their way out: give them a few seconds (not counted).
  for (let i = 0; i < 100 && oldAlive() > 0 && !timedOut; i++) await sleep(50);
  await sleep(2 * RV_POLL_MS);
  progress();
  const olds = oldRecs();
  const news = [...w.pods.values()].filter((r) => r.image === IMAGE_2);
  const at = (rs: PodRecord[], m: Milestone) => rs.map((r) => when(clock, r, m));
  const samples = [...w.samples];
  const committed = samples.map((s) => ({ t: clock.when(s.rv, s.at), s }));
  const rsSums = w.rsSums.map((x) => ({ t: clock.when(x.rv, x.at), v: x.sum }));
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
      extremeOver(
        committed.map(({ t, s }) => ({ t, v: s.live })),
        n,
        true,
      ),
      extremeOver(
        committed.map(({ t, s }) => ({ t, v: s.readyLive })),
        n,
        false,
      ),
      extremeOver(rsSums, n, true),
    ],
  );
  const gone = (r: PodRecord) => {
    const t = defined([when(clock, r, 'terminal'), when(clock, r, 'deleted')]);
    return t.length ? Math.min(...t) : undefined;
  };
  const newRsAdded = w.rsEvents.find((e) => e.type === 'ADDED' && e.at >= t0);
  const statuses = w.statuses.filter((s) => s.at >= t0);
  const status = statusDone();
  const statusReached = reachedAt(clock, status, t0);
  const podsDone = reachedAt(clock, podsDoneAt, t0);
  const figures: UpdateFigures = {
    ...common,
    generation,
    bounds: b,
    newPods: news.length,
    oldPods: olds.length,
    newRsCreated: reachedAt(clock, newRsAdded, t0),
    allNewExist: allReached(clock, news, 'added', n, t0),
    allNewReady: allReached(clock, news, 'ready', n, t0),
    allOldMarked: allReached(clock, olds, 'deleting', olds.length, t0),
    allOldGone: allReached(clock, olds, 'deleted', olds.length, t0),
    statusDone: statusReached,
    podsDone,
    finishMs: Math.max(statusReached.ms, podsDone.ms),
    maxLive: w.maxLive,
    maxLiveMs: w.maxLiveSample ? clock.when(w.maxLiveSample.rv || undefined, w.maxLiveSample.at) - t0 : NaN,
    minReadyLive: w.minReadyLive,
    minReadyMs: w.minReadySample
      ? clock.when(w.minReadySample.rv || undefined, w.minReadySample.at) - t0
      : NaN,
    liveOver: samples.filter((s) => s.live > b.maxLive).length,
    readyUnder: samples.filter((s) => s.readyLive < b.minReady).length,
    podEventsChecked: samples.length,
    maxRsSum: w.maxRsSum,
    maxRsSumMs: w.maxRsSumAt ? clock.when(w.maxRsSumAt.rv || undefined, w.maxRsSumAt.at) - t0 : NaN,
    rsEventsChecked: w.rsSums.length,
    maxStatusReplicas: Math.max(0, ...statuses.map((s) => s.status.replicas ?? 0)),
    minStatusAvailable: Math.min(n, ...statuses.map((s) => s.status.availableReplicas ?? 0)),
    steps: scaleSteps(w, clock, t0, IMAGE_2, samples),
    newCreatedToScheduled: dist(
      defined(news.map((r) => between(when(clock, r, 'added'), when(clock, r, 'scheduled')))),
    ),
    newScheduledToRunning: dist(
      defined(news.map((r) => between(when(clock, r, 'scheduled'), when(clock, r, 'running')))),
    ),
    newRunningToReady: dist(
      defined(news.map((r) => between(when(clock, r, 'running'), when(clock, r, 'ready')))),
    ),
    oldMarkedToGone: dist(defined(olds.map((r) => between(when(clock, r, 'deleting'), gone(r))))),
    oldMarkedToDeleted: dist(
      defined(olds.map((r) => between(when(clock, r, 'deleting'), when(clock, r, 'deleted')))),
    ),
  };
  log(
    `update: finished ${fmt(figures.finishMs, 0)} ms after the patch (status ${fmt(statusReached.ms, 0)} ms, every live ` +
      `pod new and Ready ${fmt(podsDone.ms, 0)} ms); live pods max ${figures.maxLive} (≤ ${b.maxLive}), Ready live ` +
      `min ${figures.minReadyLive} (≥ ${b.minReady}), ReplicaSets' replicas max ${figures.maxRsSum}; ` +
      `${figures.steps.length} scaling steps` +
      (timedOut ? ` (gave up after ${args.waitSeconds} s)` : ''),
  );
  return figures;
}

// ------------------------------------------------------------------------------ the CronJob phase

type JobMilestone = 'added' | 'complete' | 'failed' | 'deleting' | 'deleted';

/** What the Job watch saw of one Job: per milestone, when it was delivered and its resourceVersion. */
interface JobRecord {
  uid: string;
  name: string;
  /** The schedule time its annotation names, epoch ms (NaN without one). */
  scheduled: number;
  /** Its controller owner (the CronJob) or '(none)'. */
  owner: string;
  seen: Partial<Record<JobMilestone, number>>;
  rv: Partial<Record<JobMilestone, number>>;
}

/** A CronJob status seen in the watch (lastScheduleTime as epoch ms, NaN unset). */
interface CronStatusSeen {
  at: number;
  rv: number;
  lastSchedule: number;
  active: number;
}

/** Reads a watch to its end, handing each event over with the moment it was delivered. */
function consumeWatch<T>(
  w: Watch<T>,
  on: (type: string, obj: T, at: number) => void,
  failed: (err: Error) => void,
): Promise<void> {
  return (async () => {
    try {
      for await (const ev of w) on(ev.type, ev.object, nowMs());
    } catch (err) {
      failed(err as Error);
    }
    failed(new Error('a watch ended'));
  })();
}

/** One watch each of the CronJob namespace's Jobs, pods and CronJobs, from before the CronJob exists. */
class CronWatch {
  readonly jobs = new Map<string, JobRecord>();
  readonly pods = new Map<string, PodRecord>();
  readonly statuses: CronStatusSeen[] = [];
  readonly jobEvents = { ADDED: 0, MODIFIED: 0, DELETED: 0 };
  readonly podEvents = { ADDED: 0, MODIFIED: 0, DELETED: 0 };
  cronEvents = 0;
  error?: Error;
  private stopping = false;
  private readonly loops: Array<Promise<void>>;

  private constructor(
    private readonly watches: Array<{ stop(): void }>,
    loops: Array<Promise<void>>,
  ) {
    this.loops = loops;
  }

  static async start(jobClient: Client, podClient: Client, cronClient: Client): Promise<CronWatch> {
    const from = async (c: Client, kind: 'Job' | 'Pod' | 'CronJob') =>
      (await c.list(kind, { namespace: CRON_NAMESPACE, limit: 1 })).resourceVersion ?? '';
    const jobs = await jobClient.watch('Job', {
      namespace: CRON_NAMESPACE,
      resourceVersion: await from(jobClient, 'Job'),
    });
    const pods = await podClient.watch('Pod', {
      namespace: CRON_NAMESPACE,
      resourceVersion: await from(podClient, 'Pod'),
    });
    const crons = await cronClient.watch('CronJob', {
      namespace: CRON_NAMESPACE,
      resourceVersion: await from(cronClient, 'CronJob'),
    });
    const loops: Array<Promise<void>> = [];
    const w = new CronWatch([jobs, pods, crons], loops);
    const failed = (err: Error) => {
      if (!w.stopping) w.error ??= err;
    };
    loops.push(
      consumeWatch(jobs, (t, j, at) => w.onJob(t, j, at), failed),
      consumeWatch(pods, (t, p, at) => w.onPod(t, p, at), failed),
      consumeWatch(crons, (t, cj, at) => w.onCronJob(t, cj, at), failed),
    );
    return w;
  }

  private onJob(type: string, job: Job, at: number): void {
    if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
    this.jobEvents[type]++;
    const uid = job.metadata?.uid ?? '';
    let r = this.jobs.get(uid);
    if (!r) {
      const stamp = job.metadata?.annotations?.[SCHEDULED_TIMESTAMP_ANNOTATION];
      r = {
        uid,
        name: job.metadata?.name ?? '',
        scheduled: stamp ? Date.parse(stamp) : NaN,
        owner: job.metadata?.ownerReferences?.find((o) => o.controller)?.name ?? '(none)',
        seen: {},
        rv: {},
      };
      this.jobs.set(uid, r);
    }
    const rec = r;
    const rv = Number(job.metadata?.resourceVersion);
    const holds = (t: string) => !!job.status?.conditions?.some((c) => c.type === t && c.status === 'True');
    const reach = (m: JobMilestone, yes: boolean) => {
      if (!yes || rec.seen[m] !== undefined) return;
      rec.seen[m] = at;
      rec.rv[m] = rv;
    };
    reach('added', true);
    reach('complete', holds('Complete'));
    reach('failed', holds('Failed'));
    reach('deleting', !!job.metadata?.deletionTimestamp);
    reach('deleted', type === 'DELETED');
  }

  private onPod(type: string, pod: Pod, at: number): void {
    if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
    this.podEvents[type]++;
    const uid = pod.metadata?.uid ?? '';
    let r = this.pods.get(uid);
    if (!r) {
      r = {
        uid,
        name: pod.metadata?.name ?? '',
        // Its Job (the controller owner reference).
        rs: pod.metadata?.ownerReferences?.find((o) => o.controller)?.name ?? '(none)',
        node: '',
        image: pod.spec?.containers?.[0]?.image ?? '',
        seen: {},
        rv: {},
        live: false,
        readyLive: false,
        events: 0,
      };
      this.pods.set(uid, r);
    }
    const rec = r;
    rec.events++;
    if (!rec.node && pod.spec?.nodeName) rec.node = pod.spec.nodeName;
    const rv = Number(pod.metadata?.resourceVersion);
    const reach = (m: Milestone, yes: boolean) => {
      if (!yes || rec.seen[m] !== undefined) return;
      rec.seen[m] = at;
      rec.rv[m] = rv;
    };
    reach('added', true);
    reach('scheduled', !!pod.spec?.nodeName);
    reach('running', pod.status?.phase === 'Running');
    reach('ready', isPodReady(pod));
    reach('deleting', !!pod.metadata?.deletionTimestamp);
    reach('terminal', isPodTerminal(pod));
    reach('deleted', type === 'DELETED');
  }

  private onCronJob(type: string, cj: CronJob, at: number): void {
    if (type === 'DELETED' || cj.metadata?.name !== CRON_NAME) return;
    this.cronEvents++;
    const lastSchedule = Date.parse(cj.status?.lastScheduleTime ?? '');
    const active = cj.status?.active?.length ?? 0;
    const prev = this.statuses[this.statuses.length - 1];
    if (prev && Object.is(prev.lastSchedule, lastSchedule) && prev.active === active) return;
    this.statuses.push({ at, rv: Number(cj.metadata?.resourceVersion), lastSchedule, active });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const w of this.watches) w.stop();
    await Promise.all(this.loops);
  }
}

/** One schedule time of the phase; times in ms after it (wall clock). */
interface CronMinute {
  /** Epoch ms. */
  scheduled: number;
  /** The Jobs that carry it (normally one), in creation order. */
  jobs: string[];
  /** The (first) Job is named `<cronjob>-<minutes since the epoch>`, as the controller names it. */
  nameOk: boolean;
  created: AllReached;
  /** The CronJob's status.lastScheduleTime written with this time. */
  status: AllReached;
  podCreated: AllReached;
  podBound: AllReached;
  podRunning: AllReached;
  complete: AllReached;
  /** Cores used over the time ± 2 s. */
  cores?: ProcCores;
  /** The RV clock's slowest round trip over the time − 1 s … + 2 s, ms. */
  rttMax: number;
}

interface CronFigures {
  t0: number;
  end: number;
  /** The create call (epoch ms) and the CronJob's creationTimestamp. */
  createCall: number;
  creationTimestamp: string;
  /** Date.now() − the bench's clock, ms, at the phase's start and end. */
  offsetMs: [number, number];
  minutes: CronMinute[];
  /** Jobs for a time that is none of the window's (before the first, not a minute, unannotated). */
  strays: Array<{ name: string; scheduled: number }>;
  /** Jobs for times after the window's last (not counted). */
  later: string[];
  missed: number;
  doubled: number;
  /** The last time's Job was not Complete when the phase ended. */
  unfinished: boolean;
  created: Dist;
  createdSeen: Dist;
  status: Dist;
  podCreated: Dist;
  podBound: Dist;
  podRunning: Dist;
  complete: Dist;
  cores: ProcCores;
  storeWrites: number;
  jobEvents: { ADDED: number; MODIFIED: number; DELETED: number };
  podEvents: { ADDED: number; MODIFIED: number; DELETED: number };
  cronEvents: number;
  rvPolls: { n: number; rtt: Dist };
  idlePolls: { n: number; rtt: Dist };
  maxUnhealthyNodes: number;
  unhealthyNodesAtEnd: number;
  scheduled: number;
  unschedulable: number;
  cronQueue: QueueFigures;
  jobQueue: QueueFigures;
  /** The namespace's Events at the end, by component and reason (counts summed), with one message each. */
  events: Array<{ component: string; reason: string; type: string; count: number; message: string }>;
}

function cronJob(): CronJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: CRON_NAME, namespace: CRON_NAMESPACE },
    spec: {
      schedule: CRON_SCHEDULE,
      concurrencyPolicy: 'Allow',
      jobTemplate: {
        metadata: { labels: { app: CRON_NAME } },
        spec: {
          template: {
            metadata: { labels: { app: CRON_NAME } },
            spec: {
              restartPolicy: 'Never',
              containers: [
                {
                  name: CRON_NAME,
                  image: CRON_IMAGE,
                  env: [{ name: HOLLOW_RUN_SECONDS_ENV, value: String(CRON_RUN_SECONDS) }],
                },
              ],
            },
          },
        },
      },
    },
  };
}

/**
 * Date.now() − the bench's clock (performance.timeOrigin + performance.now()), ms: read just as
 * Date.now() turns to a new millisecond (so its truncation does not count), the median of 5.
 */
function wallOffset(): number {
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const a = Date.now();
    let b = a;
    while (b === a) b = Date.now();
    xs.push(b - nowMs());
  }
  return median(xs);
}

/** A clock offset, ms (2 decimals; no "-0.00"). */
const offsetText = (x: number) => fmt(Math.abs(x) < 0.005 ? 0 : x, 2);

const utc = (epochMs: number, withMs = false) =>
  Number.isFinite(epochMs) ? new Date(epochMs).toISOString().slice(11, withMs ? 23 : 19) : '–';

async function cronPhase(
  args: Args,
  c: Cluster,
  admin: Client,
  w: DeployWatch,
  clock: RvClock,
): Promise<CronFigures> {
  const count = args.cronjobMinutes;
  // Not within 3 s of a minute's turn: the first schedule time is then clearly after the create.
  for (;;) {
    const s = Date.now() % 60_000;
    if (s >= 3000 && s <= 55_000) break;
    await sleep(250);
  }
  const cw = await CronWatch.start(c.cp.client(true), c.cp.client(true), c.cp.client(true));
  try {
    const before = await scrape(c.metricsPort);
    const rv0 = await storeRevision(admin);
    const offset0 = wallOffset();
    w.trackNodes();
    const t0 = nowMs();
    const createCall = t0 + offset0;
    const created = await admin.create(cronJob());
    const creationTimestamp = created.metadata?.creationTimestamp ?? '';
    const creation = Number.isFinite(Date.parse(creationTimestamp))
      ? Date.parse(creationTimestamp)
      : createCall;
    // `* * * * *`: the first schedule time is the first minute's turn after the creationTimestamp.
    const first = (Math.floor(creation / 60_000) + 1) * 60_000;
    const times = Array.from({ length: count }, (_, k) => first + k * 60_000);
    const last = times[times.length - 1];
    log(
      `cronjob: created CronJob ${CRON_NAMESPACE}/${CRON_NAME} (${CRON_SCHEDULE}) at ${utc(createCall, true)} UTC ` +
        `(creationTimestamp ${creationTimestamp}); watching its Jobs for the ${count} schedule times ` +
        `${utc(first)} … ${utc(last)} UTC`,
    );
    const jobsFor = (t: number) => [...cw.jobs.values()].filter((j) => j.scheduled === t);
    let lastLog = nowMs();
    let unfinished = true;
    while (Date.now() < last + CRON_TAIL_MS) {
      if (cw.error) throw cw.error;
      if (w.error) throw w.error;
      checkAlive([c.fleet]);
      const lastJobs = jobsFor(last);
      if (
        Date.now() >= last + 5000 &&
        lastJobs.length &&
        lastJobs.every((j) => j.seen.complete !== undefined)
      ) {
        unfinished = false;
        break;
      }
      await sleep(200);
      if (nowMs() - lastLog >= 15_000) {
        lastLog = nowMs();
        const jobs = [...cw.jobs.values()].sort((a, b) => a.scheduled - b.scheduled);
        const latest = jobs[jobs.length - 1];
        const next = times.find((t) => t > Date.now());
        log(
          `cronjob: ${utc(Date.now())} UTC: ${jobs.length} Jobs seen` +
            (latest
              ? ` (latest ${latest.name} for ${utc(latest.scheduled)}, seen ${fmt(latest.seen.added! + offset0 - latest.scheduled, 0)} ms after its time` +
                `${latest.seen.complete !== undefined ? ', Complete' : ''})`
              : '') +
            `; ${next !== undefined ? `next schedule time ${utc(next)} UTC` : 'waiting for the last Job to complete'}; ` +
            `${w.unhealthyNodes.size} nodes not Ready or tainted`,
        );
      }
    }
    // Let the RV clock pass the last revisions.
    await sleep(2 * RV_POLL_MS);
    const end = nowMs();
    const offset1 = wallOffset();
    c.sampler.sample();
    const after = await scrape(c.metricsPort);
    const rv1 = await storeRevision(admin);
    const eventList = await admin.list('Event', { namespace: CRON_NAMESPACE });

    /** A bench-clock moment as ms after the schedule time `t` (wall clock). */
    const rel = (x: number | undefined, t: number) => (x === undefined ? NaN : x + offset0 - t);
    const jobWhen = (j: JobRecord | undefined, m: JobMilestone) => {
      const seen = j?.seen[m];
      return seen === undefined ? undefined : clock.when(j!.rv[m], seen);
    };
    const jobReached = (j: JobRecord | undefined, m: JobMilestone, t: number): AllReached => ({
      ms: rel(jobWhen(j, m), t),
      seenMs: rel(j?.seen[m], t),
    });
    const podReached = (p: PodRecord | undefined, m: Milestone, t: number): AllReached => ({
      ms: rel(p ? when(clock, p, m) : undefined, t),
      seenMs: rel(p?.seen[m], t),
    });
    const window = new Set(times);
    const byCreation = (a: JobRecord, b: JobRecord) => (a.rv.added ?? 0) - (b.rv.added ?? 0);
    const minutes: CronMinute[] = times.map((t) => {
      const jobs = jobsFor(t).sort(byCreation);
      const job = jobs[0];
      const pod = job
        ? [...cw.pods.values()]
            .filter((p) => p.rs === job.name)
            .sort((a, b) => (a.rv.added ?? 0) - (b.rv.added ?? 0))[0]
        : undefined;
      const status = cw.statuses.find((s) => s.lastSchedule === t);
      const tb = t - offset0;
      return {
        scheduled: t,
        jobs: jobs.map((j) => j.name),
        nameOk: !!job && job.name === jobNameFor(cronJob(), t),
        created: jobReached(job, 'added', t),
        status: status
          ? { ms: rel(clock.when(status.rv, status.at), t), seenMs: rel(status.at, t) }
          : NOT_REACHED,
        podCreated: podReached(pod, 'added', t),
        podBound: podReached(pod, 'scheduled', t),
        podRunning: podReached(pod, 'running', t),
        complete: jobReached(job, 'complete', t),
        cores: coresOver(c.sampler, tb - 2000, tb + 2000),
        rttMax: clock.polls(tb - 1000, tb + 2000).rtt.max,
      };
    });
    const strays = [...cw.jobs.values()]
      .filter((j) => !window.has(j.scheduled) && !(j.scheduled > last))
      .sort(byCreation)
      .map((j) => ({ name: j.name, scheduled: j.scheduled }));
    const later = [...cw.jobs.values()].filter((j) => j.scheduled > last).map((j) => j.name);
    const finite = (xs: number[]) => xs.filter((x) => Number.isFinite(x));
    const d = (f: (m: CronMinute) => number) => dist(finite(minutes.map(f)));
    const events = new Map<string, CronFigures['events'][number]>();
    for (const e of eventList.items as Event[]) {
      const component = e.source?.component ?? e.reportingComponent ?? '?';
      const key = `${component}/${e.reason}/${e.type}`;
      const x = events.get(key) ?? {
        component,
        reason: e.reason ?? '',
        type: e.type ?? '',
        count: 0,
        message: e.message ?? '',
      };
      x.count += e.count ?? 1;
      events.set(key, x);
    }
    const figures: CronFigures = {
      t0,
      end,
      createCall,
      creationTimestamp,
      offsetMs: [offset0, offset1],
      minutes,
      strays,
      later,
      missed: minutes.filter((m) => !m.jobs.length).length,
      doubled: minutes.reduce((n, m) => n + Math.max(0, m.jobs.length - 1), 0) + strays.length,
      unfinished,
      created: d((m) => m.created.ms),
      createdSeen: d((m) => m.created.seenMs),
      status: d((m) => m.status.ms),
      podCreated: d((m) => m.podCreated.ms),
      podBound: d((m) => m.podBound.ms),
      podRunning: d((m) => m.podRunning.ms),
      complete: d((m) => m.complete.ms),
      cores: coresOver(c.sampler, t0, end) ?? {
        server: NaN,
        hollow: NaN,
        bench: NaN,
        machine: NaN,
        others: NaN,
      },
      storeWrites: rv1 - rv0,
      jobEvents: { ...cw.jobEvents },
      podEvents: { ...cw.podEvents },
      cronEvents: cw.cronEvents,
      rvPolls: clock.polls(t0, end),
      idlePolls: clock.polls(t0 - 3000, t0),
      maxUnhealthyNodes: w.maxUnhealthyNodes,
      unhealthyNodesAtEnd: w.unhealthyNodes.size,
      scheduled: scrapeDelta(before, after, 'scheduler_schedule_attempts_total{result="scheduled"}'),
      unschedulable: scrapeDelta(before, after, 'scheduler_schedule_attempts_total{result="unschedulable"}'),
      cronQueue: queueFigures(before, after, 'cronjob'),
      jobQueue: queueFigures(before, after, 'job'),
      events: [...events.values()].sort(
        (a, b) => a.component.localeCompare(b.component) || b.count - a.count,
      ),
    };
    log(
      `cronjob: ${minutes.filter((m) => m.jobs.length).length}/${count} schedule times got a Job (${figures.missed} missed, ` +
        `${figures.doubled} doubled or stray); Job created after its time p50 ${fmt(figures.created.p50, 0)} ms, max ` +
        `${fmt(figures.created.max, 0)} ms (committed); pod Running p50 ${fmt(figures.podRunning.p50, 0)} ms, max ` +
        `${fmt(figures.podRunning.max, 0)} ms; Date.now() − the bench's clock ${offsetText(offset0)} → ${offsetText(offset1)} ms`,
    );
    return figures;
  } finally {
    await cw.stop();
  }
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
    name: 'the Deployment controller (main/controllers/deployment/)',
    test: (_fn, path) => path.startsWith('main/controllers/deployment/'),
  },
  {
    name: 'the ReplicaSet controller (main/controllers/replicaset/)',
    test: (_fn, path) => path.startsWith('main/controllers/replicaset/'),
  },
  {
    name: "the controllers' shared code (main/controllers/common/: claims, owned-object events, slow start)",
    test: (_fn, path) => path.startsWith('main/controllers/common/'),
  },
  {
    name: 'the other controllers (garbage collector, node lifecycle, DaemonSet, …)',
    test: (_fn, path) =>
      path.startsWith('main/controllers/') && !/\/(scheduler|deployment|replicaset|common)\//.test(path),
  },
  {
    name: "the in-process informers (client/cache/: the controllers' caches and handlers)",
    test: (_fn, path) => path.startsWith('client/cache/'),
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
const num = (v: number) => (Number.isFinite(v) ? fmt(v, 0) : '–');

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
      ...r.values.map((v) => num(v)),
      cores(r.cores?.server),
      cores(r.cores?.hollow),
      cores(r.cores?.bench),
      cores(r.cores?.others),
    ]),
  );
}

function queueBullet(what: string, q: QueueFigures): string {
  return (
    `${what}: ${fmt(q.syncs, 0)} syncs taking ${fmt(q.syncSeconds, 2)} s in all ` +
    `(${fmt((q.syncSeconds / Math.max(1, q.syncs)) * 1000, 0)} ms each on average, API calls awaited included), ` +
    `${fmt(q.adds, 0)} queue adds, ${fmt(q.retries, 0)} delayed requeues (workqueue_retries_total: rate-limited retries ` +
    `after a failed sync, and delayed re-syncs), ${fmt(q.queueMeanMs, 1)} ms mean wait in the queue`
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
      `leases, node statuses, ReplicaSets and the Deployment); the pod watch saw ${fmt(p.podEvents.ADDED, 0)} ADDED, ` +
      `${fmt(p.podEvents.MODIFIED, 0)} MODIFIED, ${fmt(p.podEvents.DELETED, 0)} DELETED (${fmt(writes / Math.max(1, pods), 1)} ` +
      `pod writes per pod); the ReplicaSet watch ${fmt(p.rsEvents, 0)} events, the Deployment watch ${fmt(p.deployEvents, 0)}`,
    `the pod watch delivered milestones after the RV clock saw them committed by p50 ${fmt(p.watchLag.p50, 0)} ms, ` +
      `p99 ${fmt(p.watchLag.p99, 0)} ms, max ${fmt(p.watchLag.max, 0)} ms; the RV clock polled ${fmt(p.rvPolls.n, 0)} times ` +
      `(round trip p50 ${fmt(p.rvPolls.rtt.p50, 1)} ms, p99 ${fmt(p.rvPolls.rtt.p99, 0)} ms, max ${fmt(p.rvPolls.rtt.max, 0)} ms; ` +
      `in the 3 s before the call p50 ${fmt(p.idlePolls.rtt.p50, 1)} ms)`,
    p.maxUnhealthyNodes
      ? `**nodes not Ready or tainted NoSchedule/NoExecute: up to ${fmt(p.maxUnhealthyNodes, 0)} at once, ` +
        `${fmt(p.unhealthyNodesAtEnd, 0)} at the end** (their leases lapsed while the machine was starved: the node lifecycle ` +
        'controller marks them not-ready and the scheduler leaves them out)'
      : 'every node stayed Ready and untainted',
    `the scheduler: ${fmt(m.scheduled, 0)} scheduled, ${fmt(m.unschedulable, 0)} unschedulable, ${fmt(m.schedulingErrors, 0)} errors; ` +
      `algorithm ${fmt(m.algorithmMeanMs, 3)} ms per pod (${fmt((m.algorithmMeanMs * m.scheduled) / 1000, 2)} s in all)`,
    queueBullet('the Deployment controller (workqueue "deployment", 5 workers)', m.deployment),
    queueBullet('the ReplicaSet controller (workqueue "replicaset", 5 workers)', m.replicaset),
  ];
}

/**
 * A function's location relative to the checkout (topSelfTime strips only a checkout at
 * /work/main; this bench may run from another clone).
 */
const repoRelative = (fn: string) =>
  fn.split(`file://${REPO_ROOT}/`).join('').split(`${REPO_ROOT}/`).join('');

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
      p.self.slice(0, 12).map((x) => [`\`${repoRelative(x.fn)}\``, fmt(x.pct, 1)]),
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

const profileBusy = (p: ServerProfile) =>
  (p.busySamples * (Number.isFinite(p.intervalMs) ? p.intervalMs : 1)) / 1000 / p.seconds;
const areaPct = (p: ServerProfile | undefined, re: RegExp) =>
  p?.areas?.find((a) => re.test(a.name))?.pct ?? NaN;

/** Which stretch of the create phase took longest, in words (the critical path, committed times). */
function createReading(f: CreateFigures, n: number): string {
  const parts: Array<[string, number]> = [
    ['the Deployment controller creating the ReplicaSet (create call → ReplicaSet created)', f.rsCreated.ms],
    [
      'the ReplicaSet controller creating the pods (ReplicaSet created → the last pod created)',
      f.allExist.ms - f.rsCreated.ms,
    ],
    [
      'the scheduler binding the last ones (last pod created → last pod bound)',
      f.allScheduled.ms - f.allExist.ms,
    ],
    ['the agents starting the last ones (last bound → last Running)', f.allRunning.ms - f.allScheduled.ms],
    [
      `the controllers' statuses catching up (last Ready → Deployment status availableReplicas = ${fmt(n, 0)})`,
      f.statusAvailable.ms - f.allReady.ms,
    ],
  ];
  const known = parts.filter(([, v]) => Number.isFinite(v));
  if (!known.length) return '';
  const [top] = [...known].sort((a, b) => b[1] - a[1]);
  return (
    `Critical path (commit times): ${known.map(([k, v]) => `${k} ${stretch(v)}`).join('; ')}. ` +
    `The longest stretch is ${top[0].split(' (')[0]}.`
  );
}

/** A stretch of a critical path; one below 0 is within the clocks' resolution (two watches, one poll). */
const stretch = (v: number) =>
  v > -0.5 ? `${fmt(Math.max(0, v), 0)} ms` : `≤ 0 ms (${fmt(v, 0)}: within the clocks' resolution)`;

/** Which stretch of the rolling update took longest, in words (the critical path, committed times). */
function updateReading(u: UpdateFigures, n: number): string {
  const parts: Array<[string, number]> = [
    [
      'the Deployment and ReplicaSet controllers creating the new pods (patch call → the last new pod created)',
      u.allNewExist.ms,
    ],
    [
      'the scheduler and the agents starting the last ones (last new pod created → all new pods Ready)',
      u.allNewReady.ms - u.allNewExist.ms,
    ],
    [
      'the last old pods marked for deletion (all new Ready → every live pod new and Ready)',
      u.podsDone.ms - u.allNewReady.ms,
    ],
    [
      `the statuses catching up (every live pod new and Ready → Deployment status available = ${fmt(n, 0)})`,
      u.statusDone.ms - u.podsDone.ms,
    ],
  ];
  const known = parts.filter(([, v]) => Number.isFinite(v));
  if (!known.length) return '';
  const [top] = [...known].sort((a, b) => b[1] - a[1]);
  return (
    `Critical path (commit times): ${known.map(([k, v]) => `${k} ${stretch(v)}`).join('; ')}. ` +
    `The longest stretch is ${top[0].split(' (')[0]}.`
  );
}

function reachedRow(what: string, r: AllReached, bold = false): string[] {
  const b = (s: string) => (bold ? `**${s}**` : s);
  return [b(what), b(ms(r.ms)), ms(r.seenMs)];
}

/** The update's scaling steps, summed up: where the rollout's time went, from this run's figures. */
function stepSummary(u: UpdateFigures) {
  const ups = u.steps.filter((s) => s.rs === 'new' && s.to > s.from);
  const downs = u.steps.filter((s) => s.rs === 'old' && s.to < s.from);
  const upCreate = defined(ups.map((s) => (Number.isFinite(s.statusMs) ? s.statusMs : undefined)));
  const upAvailable = defined(ups.map((s) => (Number.isFinite(s.availableMs) ? s.availableMs : undefined)));
  const reactions = defined(u.steps.map((s) => (Number.isFinite(s.reactionMs) ? s.reactionMs : undefined)));
  const downStatus = defined(downs.map((s) => (Number.isFinite(s.statusMs) ? s.statusMs : undefined)));
  return { ups, downs, upCreate, upAvailable, reactions, downStatus };
}

function render(
  machine: MachineInfo,
  args: Args,
  cluster: Cluster | undefined,
  create: CreateFigures | undefined,
  update: UpdateFigures | undefined,
  cron: CronFigures | undefined,
  rss: Record<string, number>,
  started: Date,
  seconds: number,
  load: number[],
  quiets: Array<{ seconds: number; others: number }>,
  problems: Map<string, number> | undefined,
  error: string | undefined,
): string {
  const n = args.replicas;
  const b = bounds(args);
  const out: string[] = [];
  const shared = Math.max(create?.cores.others ?? 0, update?.cores.others ?? 0, cron?.cores.others ?? 0);
  const deploying = args.phases.has('create');
  const cronning = args.phases.has('cronjob');
  out.push(
    `## ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — deployment (\`npm run bench:deployment\`)`,
  );
  out.push('');
  out.push(
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${fmt(machine.ramGiB, 1)} GiB RAM, ${machine.os}; Node ${machine.node}. ` +
      `kubelab ${machine.commit}. Whole run: ${fmt(seconds / 60, 1)} min; 1-minute load average ${fmt(load[0], 1)} at the start, ` +
      `${fmt(load[1], 1)} at the end. The server, the hollow fleet and the bench share the ${machine.cores} cores` +
      (shared >= 0.1
        ? `; **the machine was shared: other work used ${fmt(shared, 2)} cores on average during a measured phase (the ` +
          '"others" CPU column), so the times are longer than on a quiet machine**.'
        : '.') +
      ` ${changedNote(machine)}`.trimEnd(),
  );
  out.push('');
  const notQuiet = quiets.filter((q) => !(q.others < QUIET_CORES));
  out.push(
    `Settings: phases run: ${PHASES.filter((p) => args.phases.has(p)).join(', ')}. A fresh \`kubelab server\` (SQLite, ` +
      'its in-process controllers as it runs them by default: ' +
      [
        deploying &&
          'the Deployment controller and the ReplicaSet controller (5 workers each; the ReplicaSet controller creates in ' +
            `slow-start batches 1, 2, 4, …, at most ${BURST_REPLICAS} creates per sync)`,
        cronning &&
          `the CronJob controller and the Job controller (5 workers each; the CronJob controller wakes ` +
            `${NEXT_SCHEDULE_DELTA_MS} ms after a schedule time)`,
      ]
        .filter(Boolean)
        .join(', ') +
      `, the scheduler and the garbage collector among them) in a ` +
      `child process on 127.0.0.1${cluster?.profileDir ? ', with `--cpu-prof`' : ''}; ${fmt(args.nodes, 0)} hollow nodes ` +
      `joined ahead (${args.joinConcurrency} at a time${cluster ? `: ${fmt(cluster.join.seconds, 1)} s` : ''}) and run by ` +
      `one \`kubelab-agent --hollow ${args.nodes}\` process at the agent's defaults (the hollow runtime runs their pods: a ` +
      `container runs at once, no process)${cluster ? `, every node Ready ${fmt(cluster.readySeconds, 1)} s after it started` : ''}; ` +
      `then ${args.settleSeconds} s to settle and, before each phase, a wait (≤ ${args.quietWaitSeconds} s) for the ` +
      `processes this benchmark did not start to use < ${QUIET_CORES} cores` +
      (notQuiet.length
        ? ` (**not reached before ${notQuiet.length === quiets.length ? (quiets.length > 1 ? 'any phase' : 'the phase') : `${notQuiet.length} of ${quiets.length} phases`}: ` +
          `others used ${notQuiet.map((q) => fmt(q.others, 2)).join(' and ')} cores; measured anyway**)`
        : '') +
      '.' +
      (deploying
        ? ` The Deployment: ${fmt(n, 0)} replicas, one container (image ${IMAGE_1}, no resources: the scheduler spreads ` +
          `the pods by its default requests), RollingUpdate with maxSurge ${args.maxSurge} (${fmt(b.surge, 0)} pods) and ` +
          `maxUnavailable ${args.maxUnavailable} (${fmt(b.unavailable, 0)} pods).`
        : '') +
      (cronning
        ? ` The CronJob (namespace ${CRON_NAMESPACE}): schedule \`${CRON_SCHEDULE}\`, concurrencyPolicy Allow, the ` +
          'history limits at their defaults (3 succeeded, 1 failed); its Jobs run one pod, restartPolicy Never, one ' +
          `container (image ${CRON_IMAGE}) whose hollow run ends after ${CRON_RUN_SECONDS} s ` +
          `(env ${HOLLOW_RUN_SECONDS_ENV}=${CRON_RUN_SECONDS}); watched for ${args.cronjobMinutes} schedule times.`
        : '') +
      ` Command: \`npm run bench:deployment` +
      `${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`.`,
  );
  out.push('');
  out.push(
    'How it is timed: the bench watches ' +
      (deploying ? "the Deployment's namespace's pods, its Deployment, its ReplicaSets, " : '') +
      (cronning ? "the CronJob's namespace's Jobs, pods and CronJobs, " : '') +
      'and the nodes (gRPC, a connection of its own each) and notes, per pod' +
      (cronning ? ' (and per Job: created, Complete)' : '') +
      ', the first event in which it exists, has spec.nodeName, is Running, ' +
      "Ready, being deleted, terminal, deleted — with that event's resourceVersion. Another connection polls the revision " +
      `of the server's watch cache every ${RV_POLL_MS} ms (a List of one Namespace at resourceVersion "0", up to 20 in ` +
      'flight): a write of revision r was committed, and in the cache the in-process controllers read, before the first ' +
      "poll that returned ≥ r answered. A milestone's time is the earlier of that and the moment the watch delivered it. " +
      "**Committed** columns use these times; **seen** columns when the bench's watch delivered the event (it runs " +
      "seconds behind when the server is busy: the lag is given). The committed times are late by up to a poll's round " +
      "trip (given per phase: it is also how long any request waited for the server's event loop), so short per-pod " +
      'parts read 0 or one round trip.',
  );
  out.push('');
  if (error) {
    out.push(`**The run failed: ${error}**`);
    out.push('');
  }

  if (create) {
    out.push(`### 1. Create a Deployment: ${fmt(n, 0)} replicas on ${fmt(args.nodes, 0)} nodes`);
    out.push('');
    out.push(
      table(
        ['milestone', 'committed, ms after the create call', 'seen in a watch, ms'],
        ['l', 'r', 'r'],
        [
          reachedRow("the Deployment's ReplicaSet created (seen: in the ReplicaSet watch)", create.rsCreated),
          reachedRow(`all ${fmt(n, 0)} pods exist`, create.allExist),
          reachedRow(`all ${fmt(n, 0)} bound (spec.nodeName)`, create.allScheduled),
          reachedRow(`all ${fmt(n, 0)} Running`, create.allRunning, true),
          reachedRow(`all ${fmt(n, 0)} Ready`, create.allReady),
          reachedRow(
            `Deployment status availableReplicas = ${fmt(n, 0)} (seen: in the Deployment watch)`,
            create.statusAvailable,
          ),
          reachedRow(
            `Deployment status Progressing reason ${NEW_RS_AVAILABLE}, generation ${create.generation} observed`,
            create.statusComplete,
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
          distRow('create call → pod created (the Deployment and ReplicaSet controllers)', create.toCreated),
          distRow('created → bound (the scheduler)', create.createdToScheduled),
          distRow('bound → Running (the agent: its watch, start, status write)', create.scheduledToRunning),
          distRow('Running → Ready', create.runningToReady),
          distRow('**create call → Running**', create.toRunning, true),
        ],
      ),
    );
    out.push('');
    const s = create.spread;
    out.push(
      `Spread over the nodes (the scheduler's choice; no spread constraint in the template): ${fmt(s.nodesUsed, 0)} of ` +
        `${fmt(s.nodes, 0)} nodes got pods, at most ${fmt(s.maxPerNode, 0)} on one, at least ${fmt(s.minPerNode, 0)} ` +
        `(even would be ${fmt(s.ideal, 0)}); nodes by pods: ${s.histogram
          .map((k, i) => `${i === 4 ? '4+' : i}: ${fmt(k, 0)}`)
          .join(', ')}.`,
    );
    out.push('');
    out.push(
      `The ReplicaSet controller's creates: syncs of at most ${BURST_REPLICAS} (its burst), each in slow-start batches ` +
        'that wait for their slowest create before the next, doubling; a sync starts once its informer has seen every pod ' +
        'of the one before (expectations). Matched to the pods in commit order (batch time: its last pod committed − the ' +
        "previous batch's last, or the ReplicaSet's creation):",
    );
    out.push('');
    out.push(
      table(
        [
          'sync',
          'pods',
          'slow-start batches',
          'first → last pod, ms after the call',
          'time per batch, ms',
          'wait before the sync, ms',
        ],
        ['l', 'r', 'l', 'r', 'l', 'r'],
        create.syncs.map((x, k) => [
          String(k + 1),
          fmt(
            x.batches.reduce((a, c) => a + c, 0),
            0,
          ),
          x.batches.join(', '),
          `${fmt(x.first, 0)} → ${fmt(x.last, 0)}`,
          x.batchMs.map((v) => fmt(v, 0)).join(', '),
          fmt(x.gapBefore, 0),
        ]),
      ),
    );
    out.push('');
    const batchTimes = create.syncs.flatMap((x) => x.batchMs);
    out.push(
      `${batchTimes.length} batches one after another, median ${fmt(median(batchTimes), 0)} ms each. ` +
        `Longest pause between two consecutive creates: ${fmt(create.longestGapMs, 0)} ms, from ${fmt(create.longestGapAtMs, 0)} ms.`,
    );
    out.push('');
    out.push(createReading(create, n));
    out.push('');
    const bits = [
      `${fmt(create.podsCreated, 0)} pods created for ${fmt(n, 0)} replicas${create.timedOut ? ` (**gave up after ${args.waitSeconds} s**)` : ''}`,
      ...commonBullets(create, create.podsCreated),
    ];
    out.push(bits.map((x) => `- ${x}.`).join('\n'));
    out.push('');
    out.push(
      'Timeline (cumulative counts, committed times, at the end of each window; CPU: cores used in the window):',
    );
    out.push('');
    out.push(timelineTable(create.timeline, ['pods created', 'bound', 'Running', 'Ready']));
    out.push('');
  }

  if (update) {
    const u = update;
    out.push(
      `### 2. Rolling update (maxSurge ${args.maxSurge} = ${fmt(b.surge, 0)}, maxUnavailable ${args.maxUnavailable} = ` +
        `${fmt(b.unavailable, 0)}): image ${IMAGE_1} → ${IMAGE_2}`,
    );
    out.push('');
    out.push(
      table(
        ['milestone', 'committed, ms after the patch call', 'seen in a watch, ms'],
        ['l', 'r', 'r'],
        [
          reachedRow('the new ReplicaSet created (seen: in the ReplicaSet watch)', u.newRsCreated),
          reachedRow(`all ${fmt(n, 0)} new pods exist`, u.allNewExist),
          reachedRow(`all ${fmt(n, 0)} new pods Ready`, u.allNewReady),
          reachedRow(`all ${fmt(u.oldPods, 0)} old pods marked for deletion`, u.allOldMarked),
          reachedRow(`every live pod on ${IMAGE_2} and Ready (seen: in the pod watch)`, u.podsDone),
          reachedRow(
            `Deployment status: generation ${u.generation} observed, updatedReplicas = availableReplicas = replicas = ` +
              `${fmt(n, 0)} (seen: in the Deployment watch)`,
            u.statusDone,
          ),
          [
            '**the rollout finished (the later of the two above)**',
            `**${ms(u.finishMs)}**`,
            ms(Math.max(u.podsDone.seenMs, u.statusDone.seenMs)),
          ],
          reachedRow(`all ${fmt(u.oldPods, 0)} old pods deleted`, u.allOldGone),
        ],
      ),
    );
    out.push('');
    out.push(
      `The bounds, recounted after every one of the ${fmt(u.podEventsChecked, 0)} pod events of the phase in the order of ` +
        'the writes (so every state the API went through is counted, however late the watch; live: not being deleted, ' +
        `not terminal): **live pods at most ${fmt(u.maxLive, 0)}** (allowed ${fmt(b.maxLive, 0)} = replicas + maxSurge: ` +
        `${u.maxLive <= b.maxLive ? 'within' : `**over, after ${fmt(u.liveOver, 0)} events**`}; first reached at ` +
        `${ms(u.maxLiveMs)} ms); **Ready live pods at least ${fmt(u.minReadyLive, 0)}** (required ${fmt(b.minReady, 0)} = ` +
        `replicas − maxUnavailable: ${u.minReadyLive >= b.minReady ? 'within' : `**under, after ${fmt(u.readyUnder, 0)} events**`}; ` +
        `first reached at ${ms(u.minReadyMs)} ms). After every one of the ${fmt(u.rsEventsChecked, 0)} ReplicaSet events: ` +
        `**the sum of the ReplicaSets' spec.replicas at most ${fmt(u.maxRsSum, 0)}** (allowed ${fmt(b.maxLive, 0)}: ` +
        `${u.maxRsSum <= b.maxLive ? 'within' : '**over**'}; first at ${ms(u.maxRsSumMs)} ms). The Deployment's status ` +
        `reported at most ${fmt(u.maxStatusReplicas, 0)} replicas and at least ${fmt(u.minStatusAvailable, 0)} available.`,
    );
    out.push('');
    const shown = u.steps.slice(0, STEP_ROWS);
    out.push(
      `The Deployment controller's scaling steps (every change of a ReplicaSet's spec.replicas in the ReplicaSet watch, ` +
        `${fmt(u.steps.length, 0)} in all${u.steps.length > shown.length ? `, the first ${shown.length} shown` : ''}), ` +
        "with how long the ReplicaSet's status took to show it (status.replicas: the ReplicaSet controller's creates or " +
        'deletes seen in its informer; availableReplicas: the new pods bound, Running, Ready and counted) and how long ' +
        'after the previous ReplicaSet write (any: a create, a scale, a status; or the patch call) the step was committed ' +
        '(at most how long the Deployment controller took to answer what it saw):',
    );
    out.push('');
    out.push(
      table(
        [
          'step at, ms',
          'ReplicaSet',
          'spec.replicas',
          'live / Ready live then',
          'status.replicas reached it after, ms',
          'availableReplicas reached it after, ms',
          'after the previous ReplicaSet write, ms',
        ],
        ['r', 'l', 'r', 'r', 'r', 'r', 'r'],
        shown.map((s) => [
          fmt(s.ms, 0),
          s.rs,
          `${fmt(s.from, 0)} → ${fmt(s.to, 0)}`,
          `${num(s.live)} / ${num(s.readyLive)}`,
          ms(s.statusMs),
          s.to > s.from ? ms(s.availableMs) : '',
          num(s.reactionMs),
        ]),
      ),
    );
    out.push('');
    const st = stepSummary(u);
    out.push(
      `In sum: ${st.ups.length} scale-ups of the new ReplicaSet (status.replicas reached the new size after p50 ` +
        `${fmt(median(st.upCreate), 0)} ms, availableReplicas after p50 ${fmt(median(st.upAvailable), 0)} ms), ` +
        `${st.downs.length} scale-downs of the old one (status.replicas after p50 ${fmt(median(st.downStatus), 0)} ms), ` +
        `and the Deployment controller's steps came p50 ${fmt(median(st.reactions), 0)} ms after the previous ` +
        'ReplicaSet write.',
    );
    out.push('');
    out.push(
      table(
        ['per pod, committed times, ms', 'pods', 'p50', 'p90', 'p99', 'max'],
        ['l', 'r', 'r', 'r', 'r', 'r'],
        [
          distRow('new pod created → bound (the scheduler)', u.newCreatedToScheduled),
          distRow('new pod bound → Running (the agent)', u.newScheduledToRunning),
          distRow('new pod Running → Ready', u.newRunningToReady),
          distRow('old pod marked for deletion → gone (terminal or deleted: the agent)', u.oldMarkedToGone),
          distRow('old pod marked for deletion → deleted', u.oldMarkedToDeleted),
        ],
      ),
    );
    out.push('');
    out.push(updateReading(u, n));
    out.push('');
    const bits = [
      `${fmt(u.newPods, 0)} new pods created for ${fmt(n, 0)} replicas${u.timedOut ? ` (**gave up after ${args.waitSeconds} s**)` : ''}`,
      ...commonBullets(u, u.newPods + u.oldPods),
      `RSS at the end, MiB: ${Object.entries(rss)
        .map(([k, v]) => `${k} ${fmt(v, 0)}`)
        .join(', ')}`,
    ];
    if (problems?.size) {
      const total = [...problems.values()].reduce((a, c) => a + c, 0);
      bits.push(
        `the hollow fleet logged ${total} lines at warn or above: ` +
          [...problems.entries()]
            .sort((x, y) => y[1] - x[1])
            .slice(0, 3)
            .map(([k, v]) => `${v}× ${k.slice(0, 140)}`)
            .join('; '),
      );
    }
    out.push(bits.map((x) => `- ${x}.`).join('\n'));
    out.push('');
    out.push(
      "Timeline (cumulative counts at the end of each window, committed times; live, Ready live and the ReplicaSets' " +
        'replicas: the most, or the least, in the window; CPU: cores used in the window):',
    );
    out.push('');
    out.push(
      timelineTable(u.timeline, [
        'old marked',
        'old deleted',
        'new created',
        'new Ready',
        'live (max)',
        'Ready live (min)',
        'RS replicas (max)',
      ]),
    );
    out.push('');
  }

  if (cron) {
    const k = cron.minutes.length;
    const withJob = cron.minutes.filter((m) => m.jobs.length).length;
    out.push(
      `### 3. A CronJob every minute for ${k} minutes (\`${CRON_SCHEDULE}\`, concurrencyPolicy Allow) on ` +
        `${fmt(args.nodes, 0)} nodes`,
    );
    out.push('');
    out.push(
      `The CronJob ${CRON_NAMESPACE}/${CRON_NAME} was created at ${utc(cron.createCall, true)} UTC (the call; ` +
        `creationTimestamp ${cron.creationTimestamp}); its ${k} schedule times watched: ` +
        `${utc(cron.minutes[0]?.scheduled)} … ${utc(cron.minutes[k - 1]?.scheduled)} UTC. The controller names a Job ` +
        `\`${CRON_NAME}-<minutes since the epoch>\`, annotates it with its schedule time (${SCHEDULED_TIMESTAMP_ANNOTATION}) ` +
        `and wakes ${NEXT_SCHEDULE_DELTA_MS} ms after each schedule time, so ${NEXT_SCHEDULE_DELTA_MS} ms is the floor of ` +
        "a Job's lateness. Times are ms after the schedule time on the wall clock: the bench's milestones (committed: the " +
        "earlier of the watch's delivery and the RV clock; seen: the watch's delivery) converted by Date.now() − the " +
        `bench's clock, ${offsetText(cron.offsetMs[0])} ms at the start and ${offsetText(cron.offsetMs[1])} ms at the end (the ` +
        'server and the bench read the same machine clock). A Job is matched to its time by its annotation; its pod by ' +
        'its controller owner reference.',
    );
    out.push('');
    out.push(
      table(
        [
          'schedule time (UTC)',
          'Jobs',
          '**Job created**, committed, ms',
          'seen, ms',
          'CronJob status lastScheduleTime, ms',
          'pod created, ms',
          'pod bound, ms',
          '**pod Running**, committed, ms',
          'Job Complete, ms',
          'CPU server / others (± 2 s)',
          'RV clock round trip max, ms',
        ],
        ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        cron.minutes.map((m) => [
          utc(m.scheduled).slice(0, 5),
          m.jobs.length
            ? `${m.jobs.map((j) => `\`${j}\``).join(', ')}${m.nameOk ? '' : " (**not the controller's name**)"}`
            : '**none**',
          `**${ms(m.created.ms)}**`,
          ms(m.created.seenMs),
          ms(m.status.ms),
          ms(m.podCreated.ms),
          ms(m.podBound.ms),
          `**${ms(m.podRunning.ms)}**`,
          ms(m.complete.ms),
          `${cores(m.cores?.server)} / ${cores(m.cores?.others)}`,
          num(m.rttMax),
        ]),
      ),
    );
    out.push('');
    out.push(
      table(
        ['per schedule time, ms after it', 'Jobs', 'p50', 'p90', 'p99', 'max'],
        ['l', 'r', 'r', 'r', 'r', 'r'],
        [
          distRow('**Job created (committed)**', cron.created, true),
          distRow('Job created (seen in the Job watch)', cron.createdSeen),
          distRow('CronJob status.lastScheduleTime written (committed)', cron.status),
          distRow("the Job's pod created (the Job controller)", cron.podCreated),
          distRow('pod bound (the scheduler)', cron.podBound),
          distRow('**pod Running (committed)**', cron.podRunning, true),
          distRow(`Job Complete (its container runs ${CRON_RUN_SECONDS} s)`, cron.complete),
        ],
      ),
    );
    out.push('');
    out.push(
      `Jobs per schedule time: ${withJob} of ${k} times got a Job` +
        (cron.missed || cron.doubled
          ? ` — **${cron.missed} missed, ${cron.doubled} doubled or stray**`
          : ', each exactly one: none missed, none doubled') +
        (cron.strays.length
          ? `; Jobs for no time of the window: ${cron.strays
              .map(
                (x) =>
                  `\`${x.name}\` (${Number.isFinite(x.scheduled) ? utc(x.scheduled) : 'no schedule annotation'})`,
              )
              .join(', ')}`
          : '; no Job for any other time') +
        (cron.later.length
          ? `; after the window (not counted): ${cron.later.map((x) => `\`${x}\``).join(', ')}`
          : '') +
        (cron.unfinished ? "; **the last time's Job was not Complete when the phase ended**" : '') +
        '.',
    );
    out.push('');
    const bits = [
      `CPU, cores used over the phase (${fmt((cron.end - cron.t0) / 1000, 1)} s): server ${cores(cron.cores.server)}, ` +
        `hollow agents ${cores(cron.cores.hollow)}, bench ${cores(cron.cores.bench)}; machine ${cores(cron.cores.machine)}, ` +
        `others ${cores(cron.cores.others)}`,
      `the store committed ${fmt(cron.storeWrites, 0)} writes (${fmt(cron.storeWrites / ((cron.end - cron.t0) / 1000), 1)}/s; ` +
        `every kind, node leases and statuses included); the Job watch saw ${fmt(cron.jobEvents.ADDED, 0)} ADDED, ` +
        `${fmt(cron.jobEvents.MODIFIED, 0)} MODIFIED, ${fmt(cron.jobEvents.DELETED, 0)} DELETED (the history limit ` +
        `deletes the older Jobs); the pod watch ${fmt(cron.podEvents.ADDED, 0)} ADDED, ${fmt(cron.podEvents.MODIFIED, 0)} ` +
        `MODIFIED, ${fmt(cron.podEvents.DELETED, 0)} DELETED; the CronJob watch ${fmt(cron.cronEvents, 0)} events`,
      `the RV clock polled ${fmt(cron.rvPolls.n, 0)} times (round trip p50 ${fmt(cron.rvPolls.rtt.p50, 1)} ms, p99 ` +
        `${fmt(cron.rvPolls.rtt.p99, 0)} ms, max ${fmt(cron.rvPolls.rtt.max, 0)} ms; in the 3 s before the create ` +
        `p50 ${fmt(cron.idlePolls.rtt.p50, 1)} ms)`,
      cron.maxUnhealthyNodes
        ? `**nodes not Ready or tainted NoSchedule/NoExecute: up to ${fmt(cron.maxUnhealthyNodes, 0)} at once, ` +
          `${fmt(cron.unhealthyNodesAtEnd, 0)} at the end**`
        : 'every node stayed Ready and untainted',
      `the scheduler: ${fmt(cron.scheduled, 0)} scheduled, ${fmt(cron.unschedulable, 0)} unschedulable`,
      queueBullet('the CronJob controller (workqueue "cronjob", 5 workers)', cron.cronQueue),
      queueBullet('the Job controller (workqueue "job", 5 workers)', cron.jobQueue),
      `Events in ${CRON_NAMESPACE} at the end (by component and reason, counts summed; the recorders' spam filter ` +
        `drops some of a busy object's): ${
          cron.events
            .map(
              (e) =>
                `${e.component} ${e.type === 'Warning' ? '**Warning** ' : ''}${e.reason} ×${fmt(e.count, 0)}`,
            )
            .join(', ') || 'none'
        }`,
    ];
    for (const e of cron.events.filter(
      (x) => x.type === 'Warning' || /Missed|Unexpected|Missing/.test(x.reason),
    ))
      bits.push(`${e.component} ${e.reason}: "${e.message.slice(0, 200)}"`);
    if (!update) {
      bits.push(
        `RSS at the end, MiB: ${Object.entries(rss)
          .map(([k2, v]) => `${k2} ${fmt(v, 0)}`)
          .join(', ')}`,
      );
      if (problems?.size) {
        const total = [...problems.values()].reduce((a, c) => a + c, 0);
        bits.push(
          `the hollow fleet logged ${total} lines at warn or above: ` +
            [...problems.entries()]
              .sort((x, y) => y[1] - x[1])
              .slice(0, 3)
              .map(([k2, v]) => `${v}× ${k2.slice(0, 140)}`)
              .join('; '),
        );
      }
    }
    out.push(bits.map((x) => `- ${x}.`).join('\n'));
    out.push('');
  }

  if (create?.profile) out.push(...profileTables('create', create.profile));
  if (update?.profile) out.push(...profileTables('rolling update', update.profile));

  out.push('### Goal');
  out.push('');
  // The goals of the phases this run was asked for (n/a: asked for, not measured).
  const goals = goalRows(args, create, update, cron).filter((g) => args.phases.has(g.phase));
  out.push(
    table(
      ['target', 'value', 'goal', 'result'],
      ['l', 'r', 'l', 'l'],
      goals.map((g) => [g.target, g.value, g.goal, g.result]),
    ),
  );
  if (create && !createMet(create)) {
    out.push('');
    out.push(
      `The create goal is missed${Number.isFinite(create.allRunning.ms) ? ` by ${fmt((create.allRunning.ms - GOAL_RUNNING_MS) / 1000, 1)} s` : ''}. Where the time goes:`,
    );
    out.push('');
    out.push(
      createWhereTheTimeGoes(create, n, machine.cores)
        .map((r) => `- ${r}`)
        .join('\n'),
    );
  }
  if (update && !updateMet(update)) {
    out.push('');
    out.push(
      `The rolling update goal is missed${Number.isFinite(update.finishMs) ? ` by ${fmt((update.finishMs - GOAL_ROLLOUT_MS) / 1000, 1)} s` : ''}. Where the time goes:`,
    );
    out.push('');
    out.push(
      updateWhereTheTimeGoes(update, n, machine.cores)
        .map((r) => `- ${r}`)
        .join('\n'),
    );
  }
  if (cron && !cronMet(cron)) {
    out.push('');
    out.push('The CronJob goal is missed. What the figures show:');
    out.push('');
    out.push(
      cronWhereTheTimeGoes(cron)
        .map((r) => `- ${r}`)
        .join('\n'),
    );
  }
  return out.join('\n') + '\n';
}

const createMet = (c: CreateFigures) => !c.timedOut && c.allRunning.ms <= GOAL_RUNNING_MS;
const updateMet = (u: UpdateFigures) => !u.timedOut && u.finishMs <= GOAL_ROLLOUT_MS;
const cronOnTime = (c: CronFigures) => c.missed === 0 && c.created.max <= GOAL_CRON_CREATE_MS;
const cronOnePerMinute = (c: CronFigures) => c.missed === 0 && c.doubled === 0;
const cronMet = (c: CronFigures) => cronOnTime(c) && cronOnePerMinute(c);

interface GoalRow {
  target: string;
  value: string;
  goal: string;
  result: string;
  /** undefined: not measured. */
  pass?: boolean;
  short: string;
  /** The phase that measures it. */
  phase: Phase;
}

function goalRows(args: Args, create?: CreateFigures, update?: UpdateFigures, cron?: CronFigures): GoalRow[] {
  const n = args.replicas;
  const b = bounds(args);
  const row = (
    phase: Phase,
    target: string,
    short: string,
    value: string | undefined,
    goal: string,
    pass: boolean | undefined,
  ): GoalRow => ({
    phase,
    target,
    short,
    value: value ?? 'n/a',
    goal,
    pass,
    result: pass === undefined ? 'n/a' : pass ? 'PASS' : '**MISS**',
  });
  return [
    row(
      'create',
      `create → all ${fmt(n, 0)} pods Running (committed)`,
      'all Running',
      create && `${ms(create.allRunning.ms)} ms`,
      `≤ ${fmt(GOAL_RUNNING_MS, 0)} ms`,
      create && createMet(create),
    ),
    row(
      'update',
      'rolling update: patch → finished (status updated = available = replicas, every live pod new and Ready)',
      'rollout',
      update && `${ms(update.finishMs)} ms`,
      `≤ ${fmt(GOAL_ROLLOUT_MS, 0)} ms`,
      update && updateMet(update),
    ),
    row(
      'update',
      'rolling update: most live pods at once (every pod event)',
      'max live',
      update && fmt(update.maxLive, 0),
      `≤ ${fmt(b.maxLive, 0)} (replicas + maxSurge)`,
      update && update.maxLive <= b.maxLive,
    ),
    row(
      'update',
      'rolling update: fewest Ready live pods at once (every pod event)',
      'min Ready',
      update && fmt(update.minReadyLive, 0),
      `≥ ${fmt(b.minReady, 0)} (replicas − maxUnavailable)`,
      update && update.minReadyLive >= b.minReady,
    ),
    row(
      'update',
      "rolling update: most ReplicaSets' spec.replicas in all (every ReplicaSet event)",
      'max RS replicas',
      update && fmt(update.maxRsSum, 0),
      `≤ ${fmt(b.maxLive, 0)}`,
      update && update.maxRsSum <= b.maxLive,
    ),
    row(
      'cronjob',
      `CronJob \`${CRON_SCHEDULE}\`: every Job created after its schedule time (committed; the latest of ` +
        `${cron ? cron.minutes.length : args.cronjobMinutes} times, a missed time counting as late)`,
      'Job created',
      cron && (cron.missed ? `${cron.missed} missed` : `max ${ms(cron.created.max)} ms`),
      `≤ ${fmt(GOAL_CRON_CREATE_MS, 0)} ms`,
      cron && cronOnTime(cron),
    ),
    row(
      'cronjob',
      'CronJob: Jobs per schedule time (none missed, none doubled, none for another time)',
      'Jobs per minute',
      cron &&
        `${cron.minutes.filter((m) => m.jobs.length === 1).length} of ${cron.minutes.length} times with exactly 1` +
          `${cron.missed ? `, ${cron.missed} missed` : ''}${cron.doubled ? `, ${cron.doubled} doubled or stray` : ''}`,
      'exactly 1 each',
      cron && cronOnePerMinute(cron),
    ),
  ];
}

/** The CronJob goal missed: the late or missed times and what the machine and the server did then. */
function cronWhereTheTimeGoes(c: CronFigures): string[] {
  const out: string[] = [];
  const bad = c.minutes.filter(
    (m) => m.jobs.length !== 1 || !(m.created.ms <= GOAL_CRON_CREATE_MS) || !m.nameOk,
  );
  for (const m of bad)
    out.push(
      `${utc(m.scheduled).slice(0, 5)} UTC: ${m.jobs.length} Job${m.jobs.length === 1 ? '' : 's'}` +
        (m.jobs.length
          ? ` (${m.jobs.join(', ')}), the first created ${ms(m.created.ms)} ms after the time (seen ${ms(m.created.seenMs)} ms), ` +
            `the CronJob's status at ${ms(m.status.ms)} ms`
          : '') +
        `; around it the server used ${cores(m.cores?.server)} cores, other work ${cores(m.cores?.others)}, and the ` +
        `slowest RV-clock List took ${num(m.rttMax)} ms.`,
    );
  if (c.strays.length)
    out.push(
      `Jobs for no schedule time of the window: ${c.strays
        .map((x) => `${x.name} (${Number.isFinite(x.scheduled) ? rfc3339Ms(x.scheduled) : 'no annotation'})`)
        .join(', ')}.`,
    );
  const notable = c.events.filter((e) => e.type === 'Warning' || /Missed|Unexpected|Missing/.test(e.reason));
  if (notable.length)
    out.push(
      `The controllers said: ${notable.map((e) => `${e.component} ${e.reason} ×${e.count} ("${e.message.slice(0, 160)}")`).join('; ')}.`,
    );
  out.push(
    `The CronJob controller's queue: ${fmt(c.cronQueue.syncs, 0)} syncs, ${fmt(c.cronQueue.retries, 0)} delayed ` +
      `requeues, ${fmt(c.cronQueue.queueMeanMs, 1)} ms mean wait; the machine over the phase: server ` +
      `${cores(c.cores.server)}, others ${cores(c.cores.others)} cores.`,
  );
  return out;
}

const rfc3339Ms = (epochMs: number) => new Date(epochMs).toISOString();

/** The create goal missed: the critical path and what slows it, in words, from this run's figures. */
function createWhereTheTimeGoes(f: CreateFigures, n: number, machineCores: number): string[] {
  const out: string[] = [];
  const batches = f.syncs.flatMap((s) => s.batchMs);
  const gaps = f.syncs.slice(1).map((s) => s.gapBefore);
  const goal = f.allRunning.ms;
  const controllerShare = f.allExist.ms / goal;
  out.push(
    `${controllerShare >= 0.5 ? "**The controllers' creates set the pace**: the" : 'The'} ReplicaSet was created ` +
      `${fmt(f.rsCreated.ms, 0)} ms after the create call and the last of the ${fmt(n, 0)} pods ` +
      `${fmt(f.allExist.ms / 1000, 1)} s after it (${fmt(100 * controllerShare, 0)}% of the ${fmt(goal / 1000, 1)} s); ` +
      `the last was bound ${fmt(Math.max(0, f.allScheduled.ms - f.allExist.ms), 0)} ms later and the last was Running ` +
      `${fmt(Math.max(0, f.allRunning.ms - f.allScheduled.ms), 0)} ms after that (per pod, bound → Running: p50 ` +
      `${fmt(f.scheduledToRunning.p50, 0)} ms, p99 ${fmt(f.scheduledToRunning.p99, 0)} ms).`,
  );
  out.push(
    `The creates are ${f.syncs.length} syncs of ≤ ${BURST_REPLICAS} in slow-start batches of 1, 2, 4, …: ` +
      `${batches.length} rounds of creates one after another, each waiting for its slowest create (median ` +
      `${fmt(median(batches), 0)} ms a round), and ${gaps.length} waits between syncs for the controller's informer to ` +
      `see the last sync's pods (${gaps.map((g) => fmt(g, 0)).join(', ') || 'none'} ms). A round is as slow as a ` +
      `request through the server's event loop: a trivial List from the watch cache took p50 ${fmt(f.rvPolls.rtt.p50, 0)} ` +
      `ms, p99 ${fmt(f.rvPolls.rtt.p99, 0)} ms during the phase, against p50 ${fmt(f.idlePolls.rtt.p50, 1)} ms just ` +
      'before it.',
  );
  const p = f.profile;
  if (p?.areas) {
    out.push(
      `What keeps the server's main thread busy (${fmt(profileBusy(p), 2)} of a core, by the profile): V8's garbage ` +
        `collector ${fmt(areaPct(p, /^V8's/), 0)}%; the watch fan-out ${fmt(areaPct(p, /^watch fan-out/), 0)}%; the ` +
        `scheduler ${fmt(areaPct(p, /^the scheduler/), 0)}% (${fmt(f.metrics.algorithmMeanMs, 2)} ms per pod in its ` +
        `algorithm); the ReplicaSet controller ${fmt(areaPct(p, /^the ReplicaSet/), 0)}% and the Deployment controller ` +
        `${fmt(areaPct(p, /^the Deployment/), 0)}%, their shared code ${fmt(areaPct(p, /shared code/), 0)}%, the ` +
        `in-process informers ${fmt(areaPct(p, /informers/), 0)}%. The store committed ` +
        `${fmt(f.storeWrites / ((f.end - f.t0) / 1000), 0)} writes/s meanwhile.`,
    );
  }
  out.push(
    `The machine: server ${cores(f.cores.server)}, hollow agents ${cores(f.cores.hollow)}, bench ` +
      `${cores(f.cores.bench)} cores; other work ${cores(f.cores.others)} of the ${machineCores} cores` +
      (f.cores.others >= 0.1 ? ' — on a quiet machine the server would have had more of a core.' : '.'),
  );
  return out;
}

/** The rollout goal missed: the steps and what slows them, in words, from this run's figures. */
function updateWhereTheTimeGoes(u: UpdateFigures, n: number, machineCores: number): string[] {
  const out: string[] = [];
  const st = stepSummary(u);
  const sum = (xs: number[]) => xs.reduce((a, c) => a + c, 0);
  const availableAfterCreate = defined(
    st.ups.map((s) =>
      Number.isFinite(s.availableMs) && Number.isFinite(s.statusMs) ? s.availableMs - s.statusMs : undefined,
    ),
  );
  out.push(
    `The rollout went in ${u.steps.length} scaling steps (${st.ups.length} up, ${st.downs.length} down). The ` +
      `${st.ups.length} scale-ups of the new ReplicaSet waited, one after another, for the ReplicaSet controller to ` +
      `create the pods and show them (status.replicas: ${fmt(sum(st.upCreate) / 1000, 1)} s in all, p50 ` +
      `${fmt(median(st.upCreate), 0)} ms a step) and then for them to be bound, Running, Ready and counted ` +
      `(${fmt(sum(availableAfterCreate) / 1000, 1)} s in all, p50 ${fmt(median(availableAfterCreate), 0)} ms); the ` +
      `Deployment controller's steps came p50 ${fmt(median(st.reactions), 0)} ms after the previous ReplicaSet write ` +
      `(${fmt(sum(st.reactions) / 1000, 1)} s over all steps, overlapping).`,
  );
  out.push(
    `Per pod: new pod created → bound p50 ${fmt(u.newCreatedToScheduled.p50, 0)} ms (p99 ` +
      `${fmt(u.newCreatedToScheduled.p99, 0)}), bound → Running p50 ${fmt(u.newScheduledToRunning.p50, 0)} ms (p99 ` +
      `${fmt(u.newScheduledToRunning.p99, 0)}); old pod marked → gone p50 ${fmt(u.oldMarkedToGone.p50, 0)} ms. The last ` +
      `new pod was Ready at ${ms(u.allNewReady.ms)} ms, every live pod new and Ready at ${ms(u.podsDone.ms)} ms, the ` +
      `Deployment's status caught up at ${ms(u.statusDone.ms)} ms.`,
  );
  const p = u.profile;
  if (p?.areas) {
    out.push(
      `The server's main thread (${fmt(profileBusy(p), 2)} of a core, by the profile): V8's garbage collector ` +
        `${fmt(areaPct(p, /^V8's/), 0)}%; the watch fan-out ${fmt(areaPct(p, /^watch fan-out/), 0)}%; the scheduler ` +
        `${fmt(areaPct(p, /^the scheduler/), 0)}%; the ReplicaSet controller ${fmt(areaPct(p, /^the ReplicaSet/), 0)}%, ` +
        `the Deployment controller ${fmt(areaPct(p, /^the Deployment/), 0)}%, their shared code ` +
        `${fmt(areaPct(p, /shared code/), 0)}%, the in-process informers ${fmt(areaPct(p, /informers/), 0)}%. ` +
        `A trivial List took p50 ${fmt(u.rvPolls.rtt.p50, 0)} ms, p99 ${fmt(u.rvPolls.rtt.p99, 0)} ms during the phase.`,
    );
  }
  out.push(
    `The machine: server ${cores(u.cores.server)}, hollow agents ${cores(u.cores.hollow)}, bench ` +
      `${cores(u.cores.bench)} cores; other work ${cores(u.cores.others)} of the ${machineCores} cores` +
      (u.cores.others >= 0.1 ? ' — on a quiet machine the server would have had more of a core.' : '.') +
      ` ${fmt(n, 0)} replicas: ${fmt(u.storeWrites, 0)} store writes in the phase.`,
  );
  return out;
}

function summaryRow(
  machine: MachineInfo,
  args: Args,
  create: CreateFigures | undefined,
  update: UpdateFigures | undefined,
  cron: CronFigures | undefined,
  started: Date,
  load: number[],
): SummaryRow {
  const n = args.replicas;
  const b = bounds(args);
  const goals = goalRows(args, create, update, cron).filter((g) => g.pass !== undefined);
  const missed = goals.filter((g) => !g.pass);
  const figures = [
    create &&
      `${fmt(n, 0)} replicas on ${fmt(args.nodes, 0)} hollow nodes: all Running ${ms(create.allRunning.ms)} ms, ` +
        `status availableReplicas = ${fmt(n, 0)} at ${ms(create.statusAvailable.ms)} ms and ${NEW_RS_AVAILABLE} at ` +
        `${ms(create.statusComplete.ms)} ms after the create call (committed); ${fmt(create.spread.nodesUsed, 0)} nodes ` +
        `used, ≤ ${fmt(create.spread.maxPerNode, 0)} pods on one`,
    update &&
      `rolling update ${IMAGE_1} → ${IMAGE_2} (maxSurge ${args.maxSurge}, maxUnavailable ${args.maxUnavailable}): ` +
        `finished ${ms(update.finishMs)} ms after the patch in ${update.steps.length} scaling steps; live pods max ` +
        `${fmt(update.maxLive, 0)} (≤ ${fmt(b.maxLive, 0)}), Ready live min ${fmt(update.minReadyLive, 0)} ` +
        `(≥ ${fmt(b.minReady, 0)}), ReplicaSets' replicas max ${fmt(update.maxRsSum, 0)}`,
    cron &&
      `CronJob \`${CRON_SCHEDULE}\` for ${cron.minutes.length} min on ${fmt(args.nodes, 0)} hollow nodes: Job created ` +
        `p50 ${ms(cron.created.p50)} ms, max ${ms(cron.created.max)} ms after its schedule time (committed), its pod ` +
        `Running p50 ${ms(cron.podRunning.p50)} ms, max ${ms(cron.podRunning.max)} ms; ` +
        `${cron.minutes.filter((m) => m.jobs.length === 1).length} of ${cron.minutes.length} minutes with exactly one ` +
        `Job (${cron.missed} missed, ${cron.doubled} doubled)`,
  ].filter(Boolean);
  const shared = Math.max(create?.cores.others ?? 0, update?.cores.others ?? 0, cron?.cores.others ?? 0);
  return {
    bench: '`bench:deployment`',
    date: started.toISOString().slice(0, 16).replace('T', ' '),
    machine: `${machine.cpu}, ${machine.cores} cores, ${fmt(machine.ramGiB, 1)} GiB`,
    figures: figures.join('; '),
    result:
      `${goals.length - missed.length} of ${goals.length} goals met` +
      (missed.length
        ? `; misses: ${missed.map((g) => `${g.short} ${g.value} (goal ${g.goal})`).join(', ')}`
        : '') +
      (shared >= 0.1
        ? `; machine shared (others ${fmt(shared, 2)} cores, 1-min load ${fmt(load[1], 1)} at the end)`
        : '') +
      (machine.changed.length ? "; measured with others' uncommitted changes in the tree" : ''),
  };
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
  const budget =
    5 * 60_000 +
    args.nodes * 150 +
    (args.phases.has('create') ? 2 * args.waitSeconds * 1000 : 0) +
    (args.phases.has('cronjob') ? (args.cronjobMinutes + 3) * 60_000 : 0);
  const watchdog = setTimeout(
    () => fail(`the benchmark took more than ${fmt(budget / 60_000, 0)} minutes; giving up`, 1),
    budget,
  );

  const tmp = mkdtempSync(join(tmpdir(), 'kubelab-bench-deployment-'));
  cleanup.add('temp folder', () => rmSync(tmp, { recursive: true, force: true }));
  const machine = await machineInfo('', REPO_ROOT);
  let cluster: Cluster | undefined;
  let create: CreateFigures | undefined;
  let update: UpdateFigures | undefined;
  let cron: CronFigures | undefined;
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
    const w = await DeployWatch.start(
      c.cp.client(true),
      c.cp.client(true),
      c.cp.client(true),
      c.cp.client(true),
    );
    cleanup.add('watch', () => w.stop());
    const clock = new RvClock(c.cp.client(true));
    cleanup.add('rv clock', () => clock.stop());
    if (args.phases.has('create')) {
      quiets.push(await waitForQuiet(c.sampler, args.quietWaitSeconds));
      create = await createPhase(args, c, admin, w, clock);
      if (!create.timedOut && args.phases.has('update')) {
        log('settling for 5 s before the rolling update');
        await sleep(5000);
        quiets.push(await waitForQuiet(c.sampler, args.quietWaitSeconds));
        update = await updatePhase(args, c, admin, w, clock);
      }
    }
    if (args.phases.has('cronjob')) {
      if (create) {
        log('settling for 5 s before the CronJob');
        await sleep(5000);
      }
      await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: CRON_NAMESPACE } });
      quiets.push(await waitForQuiet(c.sampler, args.quietWaitSeconds));
      cron = await cronPhase(args, c, admin, w, clock);
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

  const load: [number, number] = [loadStart, loadavg()[0]];
  const section = render(
    machine,
    args,
    cluster,
    create,
    update,
    cron,
    rss,
    started,
    (nowMs() - t0) / 1000,
    load,
    quiets,
    cluster?.fleet.problems,
    error,
  );
  process.stdout.write('\n' + section);
  if (args.append && (create || cron)) {
    const path = join(REPO_ROOT, 'BENCHMARKS.md');
    const replaced = replaceSection(path, 'deployment', section);
    upsertSummaryRow(path, summaryRow(machine, args, create, update, cron, started, load));
    log(
      `${replaced ? 'replaced the deployment section of' : 'added a deployment section to'} ${path}, and its summary row`,
    );
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
