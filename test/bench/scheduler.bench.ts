/**
 * `npm run bench:scheduler`: how fast the scheduler places pods on a big hollow fleet, beside a
 * reference in the same run; the figures, the machine and the date go to BENCHMARKS.md, in the
 * section of this benchmark (replaced on every run).
 *
 * For each cluster size (1,000 hollow nodes by default: the goal is ≥ 500 pods/s there; 5,000
 * with `--nodes 1000,5000`, which makes the run ~15 minutes longer), against a fresh server:
 *
 *   1. `kubelab server` (SQLite, its in-process controllers without the scheduler:
 *      `--controllers '*,-scheduler'`) in a child process on 127.0.0.1; the hollow nodes joined
 *      ahead with a join token from the Tokens service (obtainCredentials, as the agent does,
 *      a few at a time, into each process's --data-dir), then run by `kubelab-agent --hollow`
 *      child processes at the agent's defaults but `--no-hollow-pods` (see --hollow-pods), which
 *      start from the stored credentials. The
 *      bench waits until every node is Ready and untainted (a Node informer, stopped afterwards),
 *      then lets the fleet settle.
 *   2. Throughput: --pods pending pods (cpu 10m, memory 16Mi each: they all fit) are created
 *      through gRPC by 32 writers; then the scheduler starts in a process of its own, `kubelab
 *      controller-manager --controllers scheduler --no-leader-elect`, and the bench watches the
 *      pods (gRPC, a connection of its own) until every one is bound. Its informers' first list
 *      and sync (`controller-manager` prints its banner once the informers have synced and the
 *      controllers started) are reported apart and left out of the rates: pods/s is measured
 *      from that banner to the last pod seen bound, and, as a second figure, from the first pod
 *      seen bound to the last. CPU of every process (utime+stime from /proc) over the same window.
 *   3. Latency: with the scheduler running, new pods are created at a steady rate below the
 *      measured throughput (--latency-fraction of it, or --latency-rate) for --latency-seconds;
 *      per pod, create call returned → the pod seen bound in the watch: p50/p99/max.
 *   4. Reference, on the same cluster once the scheduler is stopped and the machine is quiet
 *      again: as many pending pods in a namespace of their own, bound by a binder with no
 *      scheduling decision (test/bench/lib/bind-child.ts, a process of its own): one list, then
 *      for each pod the writes the scheduler makes (Bind and a Scheduled Event) on nodes taken
 *      round-robin, --reference-concurrency binds in flight (64, then all of them at once, as
 *      the scheduler's background binding has them). Measured the same way (from its
 *      `ready` line, after its list, to the last pod seen bound): the ceiling the apiserver and
 *      the transport leave a scheduler on this machine. No kube-scheduler runs here (no
 *      Kubernetes server binaries are to be had on this machine), so this is the reference.
 *
 * The scheduler's own metrics (attempts by result, time spent in the algorithm) are read from
 * its /metrics. With --profile DIR the controller-manager and the server run with --cpu-prof and
 * the report lists the functions with the most self time in the throughput phase.
 *
 * Options: --no-append (print only), --nodes 1000, --pods 5000, --latency-seconds 20,
 * --latency-fraction 0.5, --latency-rate N (pods/s; overrides the fraction), --hollow-processes N
 * (default: 2 up to 2,000 nodes, then 3), --node-status-update-frequency 10s (passed to the agents
 * only when given), --hollow-pods (let the hollow nodes run the pods bound to them, as the agent
 * does by default; without it they get `--no-hollow-pods`, so that on this 2-core machine their
 * pod work neither takes the cores nor loads the server with status writes, and every phase
 * finds the cluster as quiet as the first), --join-concurrency 16, --settle 15 (seconds after
 * every node is Ready),
 * --reference-concurrency 64,all (one reference run per value; `all`: every pod in flight at once,
 * as the scheduler did before it capped binds at 64), --no-reference, --profile DIR. A
 * quick run: `npm run
 * bench:scheduler -- --no-append --nodes 100 --pods 500 --latency-seconds 5`.
 */
import { scrape, type Scrape } from './lib/scrape.js';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Node, Pod } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client, Watch } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { freePort } from '../support/etcd.js';
import type { BindChildConfig, BindChildResult } from './lib/bind-child.js';
import { REPO_ROOT, startChildControlPlane, type ChildControlPlane } from './lib/child.js';
import { cpuSeconds } from './lib/cpu.js';
import { joinAhead } from './lib/fleet.js';
import { changedNote, machineInfo, type MachineInfo } from './lib/machine.js';
import { machineBusySeconds, memoryOf, MiB } from './lib/proc.js';
import { replaceSection, table } from './lib/report.js';
import { checkAlive, startProc, type Proc } from './lib/childproc.js';
import { Cleanup, log, topSelfTime } from './lib/run.js';
import { fmt, nowMs, percentileSorted, sleep, sortedCopy } from './lib/stats.js';
import { throughput } from './lib/workloads.js';

// ------------------------------------------------------------------------------ settings

interface Args {
  append: boolean;
  nodes: number[];
  pods: number;
  latencySeconds: number;
  latencyFraction: number;
  latencyRate?: number;
  hollowProcesses?: number;
  statusFrequency?: string;
  /** Let the hollow nodes run the pods bound to them (the agents' default); off: `--no-hollow-pods`. */
  hollowPods: boolean;
  joinConcurrency: number;
  settleSeconds: number;
  /** Binds in flight in each reference run (Infinity: every pod at once); empty: no reference. */
  referenceConcurrency: number[];
  profileDir?: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    append: true,
    nodes: [1000],
    pods: 5000,
    latencySeconds: 20,
    latencyFraction: 0.5,
    joinConcurrency: 16,
    settleSeconds: 15,
    referenceConcurrency: [64, Infinity],
    hollowPods: false,
  };
  const positive = (v: string, flag: string, whole = true) => {
    const n = Number(v);
    if (!(n > 0) || (whole && !Number.isInteger(n)))
      throw new Error(`${flag} takes a ${whole ? 'whole ' : ''}number above 0`);
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
    else if (a === '--nodes')
      args.nodes = value()
        .split(',')
        .map((v) => positive(v, a));
    else if (a === '--pods') args.pods = positive(value(), a);
    else if (a === '--latency-seconds') args.latencySeconds = positive(value(), a, false);
    else if (a === '--latency-fraction') args.latencyFraction = positive(value(), a, false);
    else if (a === '--latency-rate') args.latencyRate = positive(value(), a, false);
    else if (a === '--hollow-processes') args.hollowProcesses = positive(value(), a);
    else if (a === '--node-status-update-frequency') args.statusFrequency = value();
    else if (a === '--hollow-pods') args.hollowPods = true;
    else if (a === '--join-concurrency') args.joinConcurrency = positive(value(), a);
    else if (a === '--settle') args.settleSeconds = Number(value());
    else if (a === '--reference-concurrency')
      args.referenceConcurrency = value()
        .split(',')
        .map((v) => (v === 'all' ? Infinity : positive(v, a)));
    else if (a === '--no-reference') args.referenceConcurrency = [];
    else if (a === '--profile') args.profileDir = value();
    else throw new Error(`unknown option ${a}; see the comment at the top of test/bench/scheduler.bench.ts`);
  }
  if (args.latencyFraction >= 1)
    throw new Error('--latency-fraction must stay below 1 (below the throughput)');
  if (!(args.settleSeconds >= 0)) throw new Error('--settle takes seconds (0 or more)');
  return args;
}

const NAMESPACE = 'sched-bench';
/** The reference binder's pods. */
const REF_NAMESPACE = 'sched-bench-ref';
const POD_CPU = '10m';
const POD_MEMORY = '16Mi';
const WRITERS = 32;
/** The pods' cap per node at the agent's default --max-pods. */
const MAX_PODS_PER_NODE = 110;
const GOAL_PODS_PER_SEC = 500;
const GOAL_NODES = 1000;

function hollowProcessesFor(nodes: number, args: Args): number {
  return Math.min(nodes, args.hollowProcesses ?? (nodes <= 2000 ? 2 : 3));
}

function pendingPod(name: string, namespace = NAMESPACE): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'sched-bench' } },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'registry.k8s.io/pause:3.9',
          resources: { requests: { cpu: POD_CPU, memory: POD_MEMORY } },
        },
      ],
    },
  };
}

/**
 * CPU seconds of each named process now, and of the whole machine (`machine`: every core's busy
 * time, from /proc/stat): marks to compute cores used between two of them.
 */
interface CpuMark {
  at: number;
  /** CLOCK_MONOTONIC in µs: the clock of V8's profiles, in every process of the machine. */
  mono: number;
  cpu: Record<string, number>;
}

function cpuMark(pids: Record<string, number>): CpuMark {
  return {
    at: nowMs(),
    mono: Number(process.hrtime.bigint() / 1000n),
    cpu: {
      ...Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)])),
      machine: machineBusySeconds(),
    },
  };
}

/** Cores used on the machine by processes this benchmark did not start (others' work). */
function othersCores(c: Record<string, number>): number {
  let ours = 0;
  for (const [k, v] of Object.entries(c)) if (k !== 'machine' && Number.isFinite(v)) ours += v;
  return Math.max(0, c.machine - ours);
}

/** Cores used by each process between two marks. */
function coresBetween(a: CpuMark, b: CpuMark): Record<string, number> {
  const seconds = (b.at - a.at) / 1000;
  return Object.fromEntries(Object.keys(a.cpu).map((k) => [k, (b.cpu[k] - a.cpu[k]) / seconds]));
}

// ------------------------------------------------------------------------------ the profile

type CpuProfile = Parameters<typeof topSelfTime>[0] & { timeDeltas?: number[] };

interface ProfileSummary {
  /** Self time per function, in percent of the samples in which the process was not idle. */
  profile: Array<{ fn: string; selfPct: number }>;
  /** kubelab's own functions (main/, client/, proto/) by total time: their own and their callees'. */
  inclusive: Array<{ fn: string; pct: number }>;
  profilePath: string;
  profileWindow: { fromThroughputPhase: boolean; busySamples: number; seconds: number };
}

/**
 * The main thread's profile (the one with the most busy samples) from a --cpu-prof folder,
 * restricted to [fromUs, toUs] of CLOCK_MONOTONIC (the throughput phase) when its samples
 * cover that window, idle samples left out.
 */
function readProfile(dir: string, fromUs: number, toUs: number): ProfileSummary {
  let best: { path: string; profile: CpuProfile; busy: number } | undefined;
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile;
    const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
    const busy = (profile.samples ?? []).filter((id) => !idle.has(id)).length;
    if (!best || busy > best.busy) best = { path: join(dir, f), profile, busy };
  }
  if (!best) throw new Error('no .cpuprofile written');
  const { profile } = best;
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const hits = (from: number, to: number) => {
    const out = new Map<number, number>();
    let t = profile.startTime;
    let n = 0;
    for (let i = 0; i < samples.length; i++) {
      t += deltas[i] ?? 0;
      if (t < from || t > to || idle.has(samples[i])) continue;
      out.set(samples[i], (out.get(samples[i]) ?? 0) + 1);
      n++;
    }
    return { out, n };
  };
  let window = hits(fromUs, toUs);
  const fromThroughputPhase = window.n > 0;
  if (!fromThroughputPhase) window = hits(-Infinity, Infinity);
  const nodes = profile.nodes.map((n) => ({ ...n, hitCount: window.out.get(n.id) ?? 0 }));
  // Total time: a sample counts once for every distinct kubelab function on its stack.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const own = (id: number) => {
    const f = byId.get(id)!.callFrame;
    const at = f.url.indexOf(`${REPO_ROOT}/`);
    const path = at < 0 ? '' : f.url.slice(at + REPO_ROOT.length + 1);
    return /^(main|client|proto)\//.test(path) ? `${f.functionName || '(anonymous)'} ${path}` : undefined;
  };
  const total = new Map<string, number>();
  for (const [id, hits] of window.out) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const fn = own(at);
      if (fn) seen.add(fn);
    }
    for (const fn of seen) total.set(fn, (total.get(fn) ?? 0) + hits);
  }
  const inclusive = [...total.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([fn, hits]) => ({ fn, pct: (100 * hits) / window.n }));
  return {
    inclusive,
    profile: topSelfTime({ ...profile, nodes }, 20),
    profilePath: best.path,
    profileWindow: {
      fromThroughputPhase,
      busySamples: window.n,
      seconds: fromThroughputPhase ? (toUs - fromUs) / 1e6 : (profile.endTime - profile.startTime) / 1e6,
    },
  };
}

// ------------------------------------------------------------------------------ /metrics

interface SchedulerFigures {
  scheduled: number;
  unschedulable: number;
  errors: number;
  /** Mean time in the algorithm (filters and scores) per scheduled pod, ms. */
  algorithmMeanMs: number;
  /** Seconds spent in the algorithm in all. */
  algorithmSeconds: number;
}

function schedulerFigures(before: Scrape, after: Scrape): SchedulerFigures {
  const d = (k: string) => (after.get(k) ?? NaN) - (before.get(k) ?? 0);
  const dz = (k: string) => (after.get(k) ?? 0) - (before.get(k) ?? 0);
  const H = 'scheduler_scheduling_algorithm_duration_seconds';
  const seconds = dz(`${H}_sum{result="scheduled"}`) + dz(`${H}_sum{result="unschedulable"}`);
  return {
    scheduled: d('scheduler_schedule_attempts_total{result="scheduled"}'),
    unschedulable: dz('scheduler_schedule_attempts_total{result="unschedulable"}'),
    errors: dz('scheduler_schedule_attempts_total{result="error"}'),
    algorithmMeanMs: (dz(`${H}_sum{result="scheduled"}`) / d(`${H}_count{result="scheduled"}`)) * 1000,
    algorithmSeconds: seconds,
  };
}

// ------------------------------------------------------------------------------ watching

/** When each pod of the namespace was first seen bound, from one watch. */
class BindWatch {
  readonly bound = new Map<string, { at: number; node: string }>();
  private readonly waiters: Array<{ n: number; wake: () => void }> = [];
  error?: Error;
  private readonly done: Promise<void>;

  constructor(private readonly watch: Watch<Pod>) {
    this.done = (async () => {
      try {
        for await (const ev of watch) {
          if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') continue;
          const node = ev.object.spec?.nodeName;
          const name = ev.object.metadata?.name ?? '';
          if (!node || this.bound.has(name)) continue;
          this.bound.set(name, { at: nowMs(), node });
          this.wake();
        }
      } catch (err) {
        this.error = err as Error;
      }
      this.error ??= new Error('the pod watch ended');
      this.wake(true);
    })();
  }

  static async start(client: Client, resourceVersion: string, namespace = NAMESPACE): Promise<BindWatch> {
    return new BindWatch(await client.watch('Pod', { namespace, resourceVersion }));
  }

  private wake(all = false): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (all || this.bound.size >= this.waiters[i].n) {
        this.waiters[i].wake();
        this.waiters.splice(i, 1);
      }
    }
  }

  /** Resolves once `n` pods are bound in all, or after `ms`. */
  until(n: number, ms: number): Promise<void> {
    if (this.bound.size >= n || this.error) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push({
        n,
        wake: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  async stop(): Promise<void> {
    this.watch.stop();
    await this.done;
  }
}

function isSchedulable(n: Node): boolean {
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  return (
    ready && !n.spec?.unschedulable && !(n.spec?.taints ?? []).some((t) => t.effect !== 'PreferNoSchedule')
  );
}

// ------------------------------------------------------------------------------ one cluster size

interface ThroughputFigures {
  pods: number;
  created: { seconds: number; perSec: number; p50Ms: number; p99Ms: number };
  /** controller-manager spawned → banner (informers synced, controllers started), ms. */
  startMs: number;
  /** The reflectors' first List calls (from the controller-manager's /metrics), ms. */
  podListMs: number;
  nodeListMs: number;
  listItems: { pods: number; nodes: number };
  /** Banner → first pod seen bound, ms. */
  toFirstMs: number;
  /** First → last pod seen bound, ms. */
  firstToLastMs: number;
  /** Banner → last pod seen bound, ms. */
  syncedToLastMs: number;
  perSecFromSync: number;
  perSecFirstToLast: number;
  /** Pods seen bound per second, in 1-s buckets from the banner. */
  perSecond: number[];
  cores: Record<string, number>;
  rssMiB: Record<string, number>;
  scheduler: SchedulerFigures;
  nodesUsed: number;
  maxPerNode: number;
  bound: number;
}

interface LatencyFigures {
  asked: number;
  achieved: number;
  pods: number;
  seconds: number;
  /** The most the writer fell behind its schedule, ms. */
  writerLateMs: number;
  createP50Ms: number;
  createP99Ms: number;
  /** Seen bound − create call made (includes the create call). */
  fromCallP50Ms: number;
  fromCallP99Ms: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Seen bound before the create call had returned (latency counted as 0). */
  beforeReturn: number;
  missing: number;
  cores: Record<string, number>;
  scheduler: SchedulerFigures;
}

/** The reference binder's phase (see bind-child.ts). */
interface ReferenceFigures {
  pods: number;
  concurrency: number;
  created: { seconds: number; perSec: number };
  /** Waited for the machine to be quiet after the scheduler's phases, ms; and whether it got quiet. */
  quietWaitMs: number;
  quiet: boolean;
  /** Spawned → its `ready` line (after its one list of nodes and pods), ms. */
  startMs: number;
  toFirstMs: number;
  firstToLastMs: number;
  syncedToLastMs: number;
  perSecFromSync: number;
  perSecFirstToLast: number;
  perSecond: number[];
  cores: Record<string, number>;
  result?: BindChildResult;
  bound: number;
}

interface SizeResult {
  nodes: number;
  procs: Array<{ name: string; count: number }>;
  joinSeconds?: number;
  joinPerSec?: number;
  readySeconds?: number;
  throughput?: ThroughputFigures;
  latency?: LatencyFigures;
  profile?: ProfileSummary['profile'];
  inclusive?: ProfileSummary['inclusive'];
  profilePath?: string;
  profileWindow?: ProfileSummary['profileWindow'];
  references: ReferenceFigures[];
  /** The throughput phase (banner → last bound), CLOCK_MONOTONIC µs, for the server's profile. */
  throughputMono?: [number, number];
  serverProfile?: ProfileSummary;
  problems: Array<{ name: string; problems: Map<string, number> }>;
  error?: string;
}

async function runSize(
  nodes: number,
  args: Args,
  cleanup: Cleanup,
  tmp: string,
  r: SizeResult,
): Promise<void> {
  const dir = join(tmp, `n${nodes}`);
  mkdirSync(dir, { recursive: true });
  const procs: Proc[] = [];
  const local = new Cleanup();
  let serverProfileDir: string | undefined;
  try {
    log(
      `${fmt(nodes, 0)} nodes: starting kubelab server (SQLite, in-process controllers without the scheduler)`,
    );
    serverProfileDir = args.profileDir ? join(args.profileDir, `server-${nodes}-nodes`) : undefined;
    if (serverProfileDir) {
      rmSync(serverProfileDir, { recursive: true, force: true });
      mkdirSync(serverProfileDir, { recursive: true });
    }
    const cp = await startChildControlPlane({
      store: 'sqlite',
      serverArgs: ['--controllers', '*,-scheduler'],
      nodeArgs: serverProfileDir ? ['--cpu-prof', '--cpu-prof-dir', serverProfileDir] : [],
      startTimeoutMs: 60_000,
    });
    local.add('kubelab server', () => cp.stop());
    cleanup.add(`cluster of ${nodes} nodes`, () => local.runAll());
    await runSizeWith(cp, nodes, args, local, dir, procs, r);
  } finally {
    r.problems = procs.map((p) => ({ name: p.name, problems: p.problems }));
    await cleanup.now(`cluster of ${nodes} nodes`);
    rmSync(dir, { recursive: true, force: true });
    // The server's profile is written as it exits.
    if (serverProfileDir && r.throughputMono) {
      try {
        r.serverProfile = readProfile(serverProfileDir, ...r.throughputMono);
      } catch (err) {
        log(`could not read the server's profile in ${serverProfileDir}: ${(err as Error).message}`);
      }
    }
  }
}

async function runSizeWith(
  cp: ChildControlPlane,
  nodes: number,
  args: Args,
  local: Cleanup,
  dir: string,
  procs: Proc[],
  r: SizeResult,
): Promise<void> {
  const server = `https://${cp.server}`;
  const tokens = new TokensClient({ server, token: cp.token, caPem: cp.caPem });
  const joinToken = (await tokens.create({ description: 'bench:scheduler' })).token!;
  tokens.close();

  // ---- the fleet: joined ahead (a few at a time), then run by `kubelab-agent --hollow`.
  const nProcs = hollowProcessesFor(nodes, args);
  const fleet = Array.from({ length: nProcs }, (_, i) => {
    const prefix = `hollow-${String.fromCharCode(97 + i)}`;
    return {
      name: prefix,
      prefix,
      count: Math.floor(nodes / nProcs) + (i < nodes % nProcs ? 1 : 0),
      dataDir: join(dir, prefix),
    };
  });
  r.procs = fleet.map((f) => ({ name: f.name, count: f.count }));
  const names = fleet.flatMap((f) =>
    Array.from({ length: f.count }, (_, i) => ({ dataDir: f.dataDir, node: `${f.prefix}-${i}` })),
  );
  const j = await joinAhead(server, joinToken, names, args.joinConcurrency);
  r.joinSeconds = j.seconds;
  r.joinPerSec = j.perSec;

  const factory = new SharedInformerFactory(cp.client(true));
  const nodeInformer = factory.informerFor('Node');
  local.add('node informer', () => factory.shutdown());
  factory.start();
  if (!(await factory.waitForCacheSync(60_000)))
    throw new Error('the Node informer did not sync within 60 s');

  const t0 = nowMs();
  for (const f of fleet) {
    const p = startProc(
      f.name,
      [
        join(REPO_ROOT, 'bin/kubelab-agent.mjs'),
        '--hollow',
        String(f.count),
        '--hollow-prefix',
        f.prefix,
        '--server',
        server,
        '--data-dir',
        f.dataDir,
        '--log-level',
        'warn',
        ...(args.statusFrequency ? ['--node-status-update-frequency', args.statusFrequency] : []),
        ...(args.hollowPods ? [] : ['--no-hollow-pods']),
      ],
      /running/,
    );
    procs.push(p);
    local.add(f.name, () => p.stop());
  }
  log(`started ${fleet.map((f) => `${f.name} (${f.count})`).join(', ')}; waiting for every node to be Ready`);
  const readyTimeout = 5 * 60_000 + nodes * 100;
  let lastLog = nowMs();
  for (;;) {
    checkAlive(procs);
    const all = nodeInformer.list();
    const ready = all.filter(isSchedulable).length;
    if (ready >= nodes && procs.every((p) => p.upAt !== undefined)) break;
    if (nowMs() - t0 > readyTimeout)
      throw new Error(`only ${ready}/${nodes} nodes were Ready after ${fmt(readyTimeout / 1000, 0)} s`);
    if (nowMs() - lastLog >= 10_000) {
      lastLog = nowMs();
      log(
        `${fmt((nowMs() - t0) / 1000, 0)} s: ${all.length} nodes registered, ${ready} Ready; ` +
          `${procs.filter((p) => p.upAt !== undefined).length}/${procs.length} agent processes running every node`,
      );
    }
    await sleep(500);
  }
  r.readySeconds = (nowMs() - t0) / 1000;
  log(`every node Ready in ${fmt(r.readySeconds, 1)} s; settling for ${args.settleSeconds} s`);
  await local.now('node informer');
  await sleep(args.settleSeconds * 1000);
  checkAlive(procs);

  // ---- throughput: N pending pods, then the scheduler.
  const admin = cp.client(true);
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  const n = args.pods;
  if (n > nodes * MAX_PODS_PER_NODE)
    throw new Error(`${n} pods do not fit on ${nodes} nodes of ${MAX_PODS_PER_NODE} pods each`);
  log(`creating ${fmt(n, 0)} pending pods (${WRITERS} writers)`);
  const created = await throughput(n, WRITERS, (i) => admin.create(pendingPod(`tp-${i}`)));
  log(`created in ${fmt(created.seconds, 1)} s (${fmt(created.perSec, 0)}/s)`);
  const rv = (await admin.list('Pod', { namespace: NAMESPACE, limit: 1 })).resourceVersion ?? '';
  const watch = await BindWatch.start(cp.client(true), rv);
  local.add('pod watch', () => watch.stop());

  const cmMetrics = await freePort();
  // Node writes one profile per thread (tsx's module loader runs in a worker): a folder each.
  const profileDir = args.profileDir ? join(args.profileDir, `scheduler-${nodes}-nodes`) : undefined;
  if (profileDir) {
    rmSync(profileDir, { recursive: true, force: true });
    mkdirSync(profileDir, { recursive: true });
  }
  const pids = (): Record<string, number> => ({
    scheduler: scheduler.pid,
    server: cp.pid,
    ...Object.fromEntries(procs.filter((p) => p.name.startsWith('hollow')).map((p) => [p.name, p.pid])),
    bench: process.pid,
  });
  log('starting the scheduler: kubelab controller-manager --controllers scheduler --no-leader-elect');
  const spawnAt = nowMs();
  const scheduler = startProc(
    'scheduler',
    [
      ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
      join(REPO_ROOT, 'bin/kubelab.mjs'),
      'controller-manager',
      '--server',
      server,
      '--token-file',
      join(cp.dataDir, 'admin.token'),
      '--ca-file',
      join(cp.dataDir, 'pki', 'ca.crt'),
      '--controllers',
      'scheduler',
      '--no-leader-elect',
      '--metrics-listen',
      `127.0.0.1:${cmMetrics}`,
      '--log-level',
      'warn',
    ],
    /kubelab controller-manager .*against/,
  );
  procs.push(scheduler);
  local.add('scheduler', () => scheduler.stop());
  let startMark: CpuMark | undefined;
  scheduler.onUp = () => {
    startMark = cpuMark(pids());
    log(`scheduler up (informers synced) ${fmt((nowMs() - spawnAt) / 1000, 2)} s after it was spawned`);
  };
  const deadline = spawnAt + 10 * 60_000 + n * 20;
  lastLog = nowMs();
  let lastCount = 0;
  while (watch.bound.size < n) {
    checkAlive(procs);
    if (watch.error) throw watch.error;
    if (nowMs() > deadline)
      throw new Error(
        `only ${watch.bound.size}/${n} pods bound ${fmt((nowMs() - spawnAt) / 1000, 0)} s after the scheduler started`,
      );
    await watch.until(n, 250);
    if (nowMs() - lastLog >= 5_000) {
      log(
        `bound ${fmt(watch.bound.size, 0)}/${fmt(n, 0)} (${fmt((watch.bound.size - lastCount) / ((nowMs() - lastLog) / 1000), 0)}/s)`,
      );
      lastLog = nowMs();
      lastCount = watch.bound.size;
    }
  }
  const lastMark = cpuMark(pids());
  if (!startMark) {
    // The banner and the pods raced: every pod was bound before this loop looked.
    startMark = cpuMark(pids());
    startMark.at = scheduler.upAt ?? spawnAt;
  }
  r.throughputMono = [startMark.mono, lastMark.mono];
  const times = [...watch.bound.values()].map((b) => b.at).sort((a, b) => a - b);
  const first = times[0];
  const last = times[times.length - 1];
  const upAt = scheduler.upAt ?? spawnAt;
  const perSecond: number[] = [];
  for (const t of times) {
    const s = Math.max(0, Math.floor((t - upAt) / 1000));
    while (perSecond.length <= s) perSecond.push(0);
    perSecond[s]++;
  }
  const tpScrape = await scrape(cmMetrics);
  const perNode = new Map<string, number>();
  for (const b of watch.bound.values()) perNode.set(b.node, (perNode.get(b.node) ?? 0) + 1);
  const rss = (pid: number) => memoryOf(pid).rss / MiB;
  const listMs = (kind: string) =>
    ((tpScrape.get(`informer_list_duration_seconds_sum{kind="${kind}"}`) ?? NaN) /
      (tpScrape.get(`informer_list_duration_seconds_count{kind="${kind}"}`) ?? NaN)) *
    1000;
  r.throughput = {
    pods: n,
    created: { seconds: created.seconds, perSec: created.perSec, p50Ms: created.p50Ms, p99Ms: created.p99Ms },
    startMs: upAt - spawnAt,
    podListMs: listMs('Pod'),
    nodeListMs: listMs('Node'),
    listItems: {
      pods: tpScrape.get('informer_list_items{kind="Pod"}') ?? NaN,
      nodes: tpScrape.get('informer_list_items{kind="Node"}') ?? NaN,
    },
    toFirstMs: first - upAt,
    firstToLastMs: last - first,
    syncedToLastMs: last - upAt,
    perSecFromSync: n / ((last - upAt) / 1000),
    perSecFirstToLast: n / ((last - first) / 1000),
    perSecond,
    cores: coresBetween(startMark, lastMark),
    rssMiB: { scheduler: rss(scheduler.pid), server: rss(cp.pid) },
    scheduler: schedulerFigures(new Map(), tpScrape),
    nodesUsed: perNode.size,
    maxPerNode: Math.max(...perNode.values()),
    bound: watch.bound.size,
  };
  const tp = r.throughput;
  log(
    `${fmt(n, 0)} pods bound: ${fmt(tp.perSecFromSync, 0)} pods/s from the scheduler's start (sync excluded; ` +
      `${fmt(tp.syncedToLastMs / 1000, 2)} s), ${fmt(tp.perSecFirstToLast, 0)} pods/s first → last bound; ` +
      `CPU scheduler ${fmt(tp.cores.scheduler, 2)}, server ${fmt(tp.cores.server, 2)} cores`,
  );

  // ---- latency: a steady rate below the throughput, the scheduler running.
  const rate = args.latencyRate ?? Math.max(1, Math.floor(tp.perSecFromSync * args.latencyFraction));
  let count = Math.max(1, Math.round(rate * args.latencySeconds));
  if (n + count > nodes * MAX_PODS_PER_NODE) {
    count = nodes * MAX_PODS_PER_NODE - n;
    log(`latency: only ${count} more pods fit on ${nodes} nodes (${MAX_PODS_PER_NODE} pods each)`);
  }
  log(`latency: ${fmt(count, 0)} pods at ${fmt(rate, 0)}/s for ${args.latencySeconds} s`);
  await sleep(2000);
  const calledAt = new Float64Array(count);
  const returnedAt = new Float64Array(count);
  const failures: string[] = [];
  const inflight = new Set<Promise<void>>();
  const latStart = cpuMark(pids());
  const before = await scrape(cmMetrics);
  let writerLate = 0;
  const tStart = nowMs();
  for (let i = 0; i < count; i++) {
    const due = tStart + (i * 1000) / rate;
    const wait = due - nowMs();
    if (wait > 1) await sleep(wait);
    else writerLate = Math.max(writerLate, -wait);
    calledAt[i] = nowMs();
    const p: Promise<void> = admin.create(pendingPod(`lat-${i}`)).then(
      () => {
        returnedAt[i] = nowMs();
        inflight.delete(p);
      },
      (err: Error) => {
        failures.push(err.message);
        inflight.delete(p);
      },
    );
    inflight.add(p);
    if (i % 500 === 0) checkAlive(procs);
  }
  const writeSeconds = (nowMs() - tStart) / 1000;
  await Promise.all(inflight);
  await watch.until(n + count - failures.length, 60_000);
  const latEnd = cpuMark(pids());
  const after = await scrape(cmMetrics);
  const lat: number[] = [];
  const fromCall: number[] = [];
  const create: number[] = [];
  let beforeReturn = 0;
  let missing = 0;
  for (let i = 0; i < count; i++) {
    if (!returnedAt[i]) continue;
    create.push(returnedAt[i] - calledAt[i]);
    const b = watch.bound.get(`lat-${i}`);
    if (!b) {
      missing++;
      continue;
    }
    if (b.at < returnedAt[i]) beforeReturn++;
    lat.push(Math.max(0, b.at - returnedAt[i]));
    fromCall.push(b.at - calledAt[i]);
  }
  const sorted = sortedCopy(lat);
  const createSorted = sortedCopy(create);
  const callSorted = sortedCopy(fromCall);
  r.latency = {
    asked: rate,
    achieved: count / writeSeconds,
    pods: count,
    seconds: writeSeconds,
    writerLateMs: writerLate,
    createP50Ms: percentileSorted(createSorted, 50),
    createP99Ms: percentileSorted(createSorted, 99),
    fromCallP50Ms: percentileSorted(callSorted, 50),
    fromCallP99Ms: percentileSorted(callSorted, 99),
    p50Ms: percentileSorted(sorted, 50),
    p90Ms: percentileSorted(sorted, 90),
    p99Ms: percentileSorted(sorted, 99),
    maxMs: sorted.length ? sorted[sorted.length - 1] : NaN,
    beforeReturn,
    missing: missing + failures.length,
    cores: coresBetween(latStart, latEnd),
    scheduler: schedulerFigures(before, after),
  };
  if (failures.length) log(`${failures.length} creates failed, e.g. ${failures[0]}`);
  log(
    `latency: p50 ${fmt(r.latency.p50Ms)} ms, p99 ${fmt(r.latency.p99Ms)} ms, max ${fmt(r.latency.maxMs)} ms; ` +
      `${r.latency.missing} missing`,
  );

  // ---- stop the scheduler first (its profile is written as it exits).
  await local.now('pod watch');
  await local.now('scheduler');
  if (profileDir) {
    try {
      Object.assign(r, readProfile(profileDir, startMark.mono, lastMark.mono));
    } catch (err) {
      log(`could not read the scheduler's profile in ${profileDir}: ${(err as Error).message}`);
    }
  }

  for (const c of args.referenceConcurrency) await referencePhase(cp, args, c, local, procs, r);
}

/** Until the measured processes use less than `cores` in all for 3 s in a row (at most `maxMs`). */
async function waitQuiet(
  pids: () => Record<string, number>,
  cores: number,
  maxMs: number,
): Promise<{ ms: number; quiet: boolean }> {
  const t0 = nowMs();
  let calm = 0;
  let prev = cpuMark(pids());
  while (nowMs() - t0 < maxMs) {
    await sleep(1000);
    const now = cpuMark(pids());
    const c = coresBetween(prev, now);
    prev = now;
    const ours = Object.entries(c)
      .filter(([k]) => k !== 'machine')
      .reduce((a, [, v]) => a + (Number.isFinite(v) ? v : 0), 0);
    calm = ours < cores ? calm + 1 : 0;
    if (calm >= 3) return { ms: nowMs() - t0, quiet: true };
  }
  return { ms: nowMs() - t0, quiet: false };
}

function concurrencyLabel(inFlight: number, pods: number): string {
  return inFlight >= pods ? `all ${fmt(pods, 0)} at once` : fmt(inFlight, 0);
}

/** Phase 4: the same number of pods bound by the reference binder (bind-child.ts). */
async function referencePhase(
  cp: ChildControlPlane,
  args: Args,
  inFlight: number,
  local: Cleanup,
  procs: Proc[],
  r: SizeResult,
): Promise<void> {
  const n = args.pods;
  const concurrency = Math.min(n, inFlight);
  const label = concurrencyLabel(inFlight, n);
  const namespace = `${REF_NAMESPACE}-${inFlight === Infinity ? 'all' : inFlight}`;
  const hollowPids = () =>
    Object.fromEntries(procs.filter((p) => p.name.startsWith('hollow')).map((p) => [p.name, p.pid]));
  // The hollow agents run the pods just bound (status writes): let that settle first.
  log('reference: waiting for the server and the agents to be quiet (< 0.5 cores for 3 s, at most 120 s)');
  const quiet = await waitQuiet(() => ({ server: cp.pid, ...hollowPids() }), 0.5, 120_000);
  log(
    `reference: ${quiet.quiet ? 'quiet' : 'still busy'} after ${fmt(quiet.ms / 1000, 1)} s; creating ${fmt(n, 0)} pending pods in ${namespace}`,
  );
  const admin = cp.client(true);
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const created = await throughput(n, WRITERS, (i) => admin.create(pendingPod(`ref-${i}`, namespace)));
  log(`created in ${fmt(created.seconds, 1)} s (${fmt(created.perSec, 0)}/s)`);
  const rv = (await admin.list('Pod', { namespace, limit: 1 })).resourceVersion ?? '';
  const watch = await BindWatch.start(cp.client(true), rv, namespace);
  local.add('reference pod watch', () => watch.stop());
  const config: BindChildConfig = {
    server: `https://${cp.server}`,
    tokenFile: join(cp.dataDir, 'admin.token'),
    caFile: join(cp.dataDir, 'pki', 'ca.crt'),
    namespace,
    concurrency,
    events: true,
  };
  log(`reference: starting the binder (no scheduling decision), ${label} binds in flight`);
  const spawnAt = nowMs();
  const binder = startProc(
    'reference binder',
    ['--import', 'tsx', join(REPO_ROOT, 'test/bench/lib/bind-child.ts')],
    /^ready: /m,
    { KUBELAB_BENCH_BIND_CHILD: JSON.stringify(config) },
  );
  procs.push(binder);
  local.add('reference binder', () => binder.stop());
  const pids = (): Record<string, number> => ({
    binder: binder.pid,
    server: cp.pid,
    ...hollowPids(),
    bench: process.pid,
  });
  let startMark: CpuMark | undefined;
  binder.onUp = () => (startMark = cpuMark(pids()));
  const deadline = spawnAt + 5 * 60_000 + n * 20;
  let lastLog = nowMs();
  let lastCount = 0;
  while (watch.bound.size < n) {
    if (binder.exit && binder.exit.code !== 0) checkAlive([binder]);
    checkAlive(procs.filter((p) => p.name.startsWith('hollow')));
    if (watch.error) throw watch.error;
    if (nowMs() > deadline)
      throw new Error(
        `reference: only ${watch.bound.size}/${n} pods bound ${fmt((nowMs() - spawnAt) / 1000, 0)} s after the binder started`,
      );
    await watch.until(n, 250);
    if (nowMs() - lastLog >= 5_000) {
      log(
        `reference: bound ${fmt(watch.bound.size, 0)}/${fmt(n, 0)} (${fmt((watch.bound.size - lastCount) / ((nowMs() - lastLog) / 1000), 0)}/s)`,
      );
      lastLog = nowMs();
      lastCount = watch.bound.size;
    }
  }
  const lastMark = cpuMark(pids());
  if (!startMark) {
    startMark = cpuMark(pids());
    startMark.at = binder.upAt ?? spawnAt;
  }
  await binder.exited;
  const done = /^done (.*)$/m.exec(binder.tail);
  const times = [...watch.bound.values()].map((b) => b.at).sort((a, b) => a - b);
  const first = times[0];
  const last = times[times.length - 1];
  const upAt = binder.upAt ?? spawnAt;
  const perSecond: number[] = [];
  for (const t of times) {
    const sec = Math.max(0, Math.floor((t - upAt) / 1000));
    while (perSecond.length <= sec) perSecond.push(0);
    perSecond[sec]++;
  }
  r.references.push({
    pods: n,
    concurrency,
    created: { seconds: created.seconds, perSec: created.perSec },
    quietWaitMs: quiet.ms,
    quiet: quiet.quiet,
    startMs: upAt - spawnAt,
    toFirstMs: first - upAt,
    firstToLastMs: last - first,
    syncedToLastMs: last - upAt,
    perSecFromSync: n / ((last - upAt) / 1000),
    perSecFirstToLast: n / ((last - first) / 1000),
    perSecond,
    cores: coresBetween(startMark, lastMark),
    result: done ? (JSON.parse(done[1]) as BindChildResult) : undefined,
    bound: watch.bound.size,
  });
  const ref = r.references[r.references.length - 1];
  log(
    `reference: ${fmt(n, 0)} pods bound: ${fmt(ref.perSecFromSync, 0)} pods/s from its start (list excluded; ` +
      `${fmt(ref.syncedToLastMs / 1000, 2)} s), ${fmt(ref.perSecFirstToLast, 0)} pods/s first → last bound; ` +
      `CPU binder ${fmt(ref.cores.binder, 2)}, server ${fmt(ref.cores.server, 2)} cores`,
  );
  await local.now('reference pod watch');
}

// ------------------------------------------------------------------------------ the report

const ms = (v: number) => `${fmt(v)} ms`;
const s2 = (v: number | undefined) => (v === undefined ? 'n/a' : `${fmt(v / 1000, 2)} s`);

function render(
  machine: MachineInfo,
  args: Args,
  results: SizeResult[],
  started: Date,
  seconds: number,
  load: number[],
): string {
  const out: string[] = [];
  // The most other people's work used during a measured phase, in cores.
  const shared = Math.max(
    0,
    ...results.flatMap((r) =>
      [r.throughput?.cores, r.latency?.cores, ...r.references.map((f) => f.cores)]
        .filter((c): c is Record<string, number> => !!c)
        .map(othersCores),
    ),
  );
  out.push(
    `## ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — scheduler (\`npm run bench:scheduler\`)`,
  );
  out.push('');
  out.push(
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${fmt(machine.ramGiB, 1)} GiB RAM, ${machine.os}; Node ${machine.node}. ` +
      `kubelab ${machine.commit}. Whole run: ${fmt(seconds / 60, 1)} min; 1-minute load average ${fmt(load[0], 1)} at the start, ` +
      `${fmt(load[1], 1)} at the end. Every process below shares the ${machine.cores} cores` +
      (shared >= 0.1
        ? `; **the machine was shared: other people's work used up to ${fmt(shared, 2)} cores during a measured phase ` +
          '(the "others" CPU columns), so the rates are lower than on a quiet machine**.'
        : '.') +
      ` ${changedNote(machine)}`.trimEnd(),
  );
  out.push('');
  out.push(
    'Reference, side by side in the same run and on the same cluster: a binder with no scheduling decision ' +
      '(test/bench/lib/bind-child.ts, a process of its own, gRPC with the admin token like the scheduler) binds as many pending ' +
      "pods with the scheduler's writes — Bind and a Scheduled Event per pod — on nodes taken round-robin: what the apiserver, the " +
      'transport and this machine leave any scheduler. It runs once per setting of binds in flight ' +
      `(${args.referenceConcurrency.map((c) => concurrencyLabel(c, args.pods)).join('; ')}: the scheduler binds in the background ` +
      'without a limit, so with every pending pod decided at once it has them all in flight), each on pods of its own, ' +
      'after the scheduler is stopped and the server and agents are quiet again (< 0.5 cores). kube-scheduler cannot run here ' +
      '(no Kubernetes server binaries are to be had on this machine).',
  );
  out.push('');
  out.push(
    `Settings: per cluster size a fresh \`kubelab server\` (SQLite, \`--controllers '*,-scheduler'\`: the node lifecycle and the other ` +
      'controllers run in-process, the scheduler does not) in a child process on 127.0.0.1; the hollow nodes joined ahead with one join ' +
      `token (${args.joinConcurrency} joins at a time), then run by \`kubelab-agent --hollow N\` child processes at the agent's defaults` +
      (args.statusFrequency ? ` except \`--node-status-update-frequency ${args.statusFrequency}\`` : '') +
      ' (lease renewed every 10 s; status computed every 10 s, written on change or every 5 min)' +
      (args.hollowPods
        ? ', running the pods bound to them (`--hollow-pods`: their pod status writes load the server, and their CPU comes out of the same 2 cores). '
        : ' and `--no-hollow-pods`: the nodes heartbeat and report status but do not run the pods bound to them — on a real cluster ' +
          "their agents' work is on other machines; here it would take the same 2 cores (`--hollow-pods` to run them). ") +
      'Pods: one container each, ' +
      `requests cpu ${POD_CPU} and memory ${POD_MEMORY} (hollow nodes have 4 cores and 8 GiB: every pod fits), no selectors, ` +
      `in namespace ${NAMESPACE}, created through gRPC by ${WRITERS} writers while no scheduler runs. The scheduler is ` +
      '`kubelab controller-manager --controllers scheduler --no-leader-elect` in a process of its own (gRPC, TLS, admin token); the ' +
      'bench watches the pods through gRPC on a connection of its own and takes the time each pod is first seen with a node. ' +
      `Command: \`npm run bench:scheduler${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`.`,
  );
  out.push('');
  out.push(
    "- **from start**: pods ÷ (the controller-manager's banner → the last pod seen bound). The banner is printed once its informers " +
      'have listed every node and every pending pod and the scheduler has started: their first list and sync are left out, and shown ' +
      'in their own column (spawn → banner, with the List calls from its `informer_list_duration_seconds`).',
  );
  out.push('- **first → last**: pods ÷ (first pod seen bound → last pod seen bound).');
  out.push(
    '- CPU: cores used (utime+stime from /proc) from the banner (or ready line) to the last pod bound; "hollow" sums the agent ' +
      'processes; "machine" is every core\'s busy time (/proc/stat), "others" what processes this benchmark did not start used. ' +
      "Algorithm: the scheduler's `scheduler_scheduling_algorithm_duration_seconds` (filters and scores, per pod), and its " +
      'total over the phase.',
  );
  out.push('');

  out.push('### Throughput: pending pods bound by a scheduler started on them, and by the reference binder');
  out.push('');
  const rows: string[][] = [];
  for (const r of results) {
    const t = r.throughput;
    if (!t) {
      rows.push([fmt(r.nodes, 0), 'scheduler', 'n/a', `failed: ${r.error ?? '?'}`, '', '', '', '', '', '']);
      continue;
    }
    rows.push([
      fmt(r.nodes, 0),
      'scheduler',
      fmt(t.pods, 0),
      `${s2(t.startMs)} (List: nodes ${ms(t.nodeListMs)}, pods ${ms(t.podListMs)})`,
      s2(t.toFirstMs),
      s2(t.syncedToLastMs),
      `**${fmt(t.perSecFromSync, 0)}**`,
      `${fmt(t.perSecFirstToLast, 0)} (${s2(t.firstToLastMs)})`,
      `${fmt(t.scheduler.algorithmMeanMs, 3)} ms; ${fmt(t.scheduler.algorithmSeconds, 2)} s`,
      `${t.nodesUsed} nodes, ≤ ${t.maxPerNode} each`,
    ]);
    for (const f of r.references)
      rows.push([
        fmt(r.nodes, 0),
        `reference binder, ${concurrencyLabel(f.concurrency, f.pods)} in flight`,
        fmt(f.pods, 0),
        `${s2(f.startMs)} (one list of nodes and pods)`,
        s2(f.toFirstMs),
        s2(f.syncedToLastMs),
        `**${fmt(f.perSecFromSync, 0)}**`,
        `${fmt(f.perSecFirstToLast, 0)} (${s2(f.firstToLastMs)})`,
        '– (none)',
        f.result
          ? `${f.result.nodes} nodes round-robin; ${f.result.errors} bind errors${f.result.firstError ? ` (${f.result.firstError.slice(0, 80)})` : ''}`
          : 'n/a',
      ]);
  }
  out.push(
    table(
      [
        'nodes',
        'binder',
        'pods',
        'spawn → banner (informers synced) / ready line',
        '→ first bound',
        '→ last bound',
        'pods/s from start',
        'pods/s first → last',
        'algorithm per pod; total',
        'placed on',
      ],
      ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
      rows,
    ),
  );
  out.push('');
  const hollowCores = (c: Record<string, number>) =>
    Object.entries(c)
      .filter(([k]) => k.startsWith('hollow'))
      .reduce((a, [, v]) => a + v, 0);
  const cpuRows: string[][] = [];
  for (const r of results) {
    const t = r.throughput;
    if (t) {
      const c = t.cores;
      cpuRows.push([
        fmt(r.nodes, 0),
        'scheduler',
        fmt(c.scheduler, 2),
        fmt(c.server, 2),
        `${fmt(hollowCores(c), 2)} (${r.procs.filter((p) => p.name.startsWith('hollow')).length} processes)`,
        fmt(c.bench, 2),
        `${fmt(c.machine, 2)} / ${fmt(othersCores(c), 2)}`,
        `${fmt(t.rssMiB.scheduler, 0)} / ${fmt(t.rssMiB.server, 0)}`,
        `${fmt(t.created.perSec, 0)}/s (p50 ${ms(t.created.p50Ms)}, p99 ${ms(t.created.p99Ms)})`,
      ]);
    }
    for (const f of r.references) {
      const c = f.cores;
      cpuRows.push([
        fmt(r.nodes, 0),
        `reference binder, ${concurrencyLabel(f.concurrency, f.pods)} in flight`,
        fmt(c.binder, 2),
        fmt(c.server, 2),
        fmt(hollowCores(c), 2),
        fmt(c.bench, 2),
        `${fmt(c.machine, 2)} / ${fmt(othersCores(c), 2)}`,
        '–',
        `${fmt(f.created.perSec, 0)}/s; quiet after ${fmt(f.quietWaitMs / 1000, 0)} s${f.quiet ? '' : ' (not quiet: went on after 120 s)'}`,
      ]);
    }
  }
  if (cpuRows.length) {
    out.push(
      table(
        [
          'nodes',
          'binder',
          'CPU binder',
          'CPU server',
          'CPU hollow agents',
          'CPU bench (watch)',
          'CPU machine / others',
          'RSS MiB scheduler / server (end)',
          'pods created before (32 writers)',
        ],
        ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        cpuRows,
      ),
    );
    out.push('');
  }
  // What the figures say about where the time went, in words (computed, so a rerun rewrites it).
  for (const r of results) {
    const t = r.throughput;
    if (!t || !r.references.length) continue;
    const bounded = r.references.filter((f) => f.concurrency < f.pods);
    const all = r.references.find((f) => f.concurrency >= f.pods);
    const best = bounded.reduce<ReferenceFigures | undefined>(
      (a, f) => (!a || f.perSecFromSync > a.perSecFromSync ? f : a),
      undefined,
    );
    const words: string[] = [
      `**Reading (${fmt(r.nodes, 0)} nodes):** the scheduler's decisions took ${fmt(t.scheduler.algorithmSeconds, 1)} s in all ` +
        `(${fmt(t.scheduler.algorithmMeanMs, 2)} ms per pod), out of ${s2(t.syncedToLastMs)} from its banner to the last pod bound; ` +
        `its first pod was seen bound ${s2(t.toFirstMs)} after the banner, and from the first to the last it bound ${fmt(t.perSecFirstToLast, 0)}/s.`,
    ];
    if (best)
      words.push(
        `The same writes from the reference binder with ${fmt(best.concurrency, 0)} binds in flight: first pod bound after ` +
          `${s2(best.toFirstMs)}, ${fmt(best.perSecFromSync, 0)}/s from its start.`,
      );
    if (all)
      words.push(
        `With all ${fmt(all.pods, 0)} binds in flight at once (the scheduler sent them so before it kept to 64): first pod ` +
          `bound after ${s2(all.toFirstMs)}, ${fmt(all.perSecFromSync, 0)}/s from its start.`,
      );
    if (
      best &&
      all &&
      all.toFirstMs > 3 * Math.max(best.toFirstMs, 300) &&
      t.toFirstMs > 3 * Math.max(best.toFirstMs, 300)
    )
      words.push(
        'So binds sent all at once on one connection wait together and complete in a burst at the end (see the per-second ' +
          'counts below), and a scheduler that sends every bind at once pays that wait; with a bounded ' +
          `number of binds in flight the same apiserver binds ${fmt(best.perSecFromSync, 0)}/s from the first second.` +
          (t.perSecFromSync < GOAL_PODS_PER_SEC && best.perSecFromSync >= GOAL_PODS_PER_SEC
            ? ` The goal (≥ ${GOAL_PODS_PER_SEC}/s) is within reach of this machine: the limit seems to be how the scheduler sends its binds, not its decisions nor the server's capacity.`
            : ''),
      );
    const bindErrors = t.scheduler.errors;
    if (bindErrors > 0)
      words.push(
        `${fmt(bindErrors, 0)} binds failed in the throughput phase and were retried (see the logs below; a bind that waits past ` +
          "the client's 30 s deadline fails).",
      );
    out.push(words.join(' '));
    out.push('');
  }

  // What the profiles say about who was busy (a thread at 1.0 is saturated).
  for (const r of results) {
    const busy = (w: ProfileSummary['profileWindow'] | undefined) =>
      w && w.fromThroughputPhase ? w.busySamples / 1000 / w.seconds : undefined;
    const sched = busy(r.profileWindow);
    const server = busy(r.serverProfile?.profileWindow);
    if (sched === undefined && server === undefined) continue;
    const machineBusy = r.throughput?.cores.machine ?? NaN;
    const full = machineBusy >= 0.9 * machine.cores;
    out.push(
      `Busy threads at ${fmt(r.nodes, 0)} nodes over the throughput phase (from the profiles below): the scheduler's main thread ` +
        `${sched === undefined ? 'n/a' : fmt(sched, 2)}, the server's main thread ${server === undefined ? 'n/a' : fmt(server, 2)} ` +
        `of a core; the machine ${fmt(machineBusy, 2)} of its ${machine.cores} cores` +
        ((sched ?? 0) < 0.8 && (server ?? 0) < 0.8
          ? full
            ? ' — neither thread saturated its own core, but the machine was full: they also waited for a core.'
            : ' — neither saturated, and the machine had cores to spare: the time went to waiting, not computing.'
          : '.'),
    );
    out.push('');
  }
  const curves = results.filter((r) => r.throughput);
  if (curves.length) {
    out.push(
      'Pods seen bound per second after the banner (the reference: after its ready line): ' +
        curves
          .map(
            (r) =>
              `${fmt(r.nodes, 0)} nodes, scheduler [${r.throughput!.perSecond.join(', ')}]` +
              r.references
                .map(
                  (f) =>
                    `, reference with ${concurrencyLabel(f.concurrency, f.pods)} in flight [${f.perSecond.join(', ')}]`,
                )
                .join(''),
          )
          .join('; ') +
        '.',
    );
    out.push('');
  }

  out.push('### Latency: pods created at a steady rate with the scheduler running');
  out.push('');
  const latRows = results
    .filter((r) => r.latency)
    .map((r) => {
      const l = r.latency!;
      return [
        fmt(r.nodes, 0),
        `${fmt(l.asked, 0)} / ${fmt(l.achieved, 0)} (writer ≤ ${fmt(l.writerLateMs, 0)} ms late)`,
        `${fmt(l.pods, 0)} in ${fmt(l.seconds, 1)} s`,
        `**${fmt(l.p50Ms)}**`,
        fmt(l.p90Ms),
        `**${fmt(l.p99Ms)}**`,
        fmt(l.maxMs),
        `${fmt(l.createP50Ms)} / ${fmt(l.createP99Ms)}`,
        `${fmt(l.fromCallP50Ms)} / ${fmt(l.fromCallP99Ms)}`,
        String(l.missing),
        `${fmt(l.cores.scheduler, 2)} / ${fmt(l.cores.server, 2)}`,
      ];
    });
  out.push(
    'Latency = the pod seen bound in the watch − its create call returned (a pod seen bound before its create call returned counts 0 ms).',
  );
  out.push('');
  out.push(
    table(
      [
        'nodes',
        'pods/s asked / achieved',
        'pods',
        'p50 ms',
        'p90 ms',
        'p99 ms',
        'max ms',
        'create call p50 / p99 ms',
        'from the call: p50 / p99 ms',
        'missing',
        'CPU scheduler / server',
      ],
      ['r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      latRows,
    ),
  );
  out.push('');

  // ---- fleets and logs
  const notes: string[] = [];
  for (const r of results) {
    const bits = [
      `${fmt(r.nodes, 0)} nodes in ${r.procs.map((p) => `${p.name} (${fmt(p.count, 0)})`).join(', ')}`,
      r.joinSeconds !== undefined
        ? `joined in ${fmt(r.joinSeconds, 1)} s (${fmt(r.joinPerSec ?? NaN, 0)}/s)`
        : '',
      r.readySeconds !== undefined
        ? `every node Ready ${fmt(r.readySeconds, 1)} s after the agents started`
        : '',
    ].filter(Boolean);
    const t = r.throughput;
    const l = r.latency;
    if (t)
      bits.push(
        `scheduler attempts in the throughput phase: ${fmt(t.scheduler.scheduled, 0)} scheduled, ${t.scheduler.unschedulable} unschedulable, ${t.scheduler.errors} errors`,
      );
    if (l)
      bits.push(
        `in the latency phase: ${fmt(l.scheduler.scheduled, 0)} scheduled, ${l.scheduler.unschedulable} unschedulable, ${l.scheduler.errors} errors; ${l.beforeReturn} pods seen bound before their create call returned`,
      );
    for (const p of r.problems) {
      const total = [...p.problems.values()].reduce((a, b) => a + b, 0);
      if (total)
        bits.push(
          `${p.name} logged ${total} lines at warn or above: ` +
            [...p.problems.entries()]
              .sort((a, b) => b[1] - a[1])
              .slice(0, 3)
              .map(([k, v]) => `${v}× ${k.slice(0, 140)}`)
              .join('; '),
        );
    }
    if (r.error) bits.push(`**failed: ${r.error}**`);
    notes.push(`- ${bits.join('; ')}.`);
  }
  out.push(notes.join('\n'));
  out.push('');

  const profileTables = (
    title: string,
    what: string,
    p: Pick<ProfileSummary, 'profile' | 'inclusive' | 'profilePath' | 'profileWindow'>,
  ) => {
    const w = p.profileWindow;
    out.push(title);
    out.push('');
    out.push(
      `${what}, ${w.fromThroughputPhase ? `throughput phase only (banner → last pod bound, ${fmt(w.seconds, 2)} s)` : `whole life (${fmt(w.seconds, 1)} s; the throughput window had no samples)`}: ` +
        `${fmt(w.busySamples, 0)} busy samples (1 ms each: ${fmt(w.busySamples / 1000 / w.seconds, 2)} of a core busy on this thread); ` +
        `self time in percent of them (idle left out). Profile: \`${p.profilePath}\`.`,
    );
    out.push('');
    out.push(
      table(
        ['function (self time)', '% of busy samples'],
        ['l', 'r'],
        p.profile.map((x) => [`\`${x.fn}\``, fmt(x.selfPct, 1)]),
      ),
    );
    out.push('');
    out.push(
      "kubelab's own functions by total time (their own and their callees', in percent of the same busy samples):",
    );
    out.push('');
    out.push(
      table(
        ['function (total time)', '% of busy samples'],
        ['l', 'r'],
        p.inclusive.map((x) => [`\`${x.fn}\``, fmt(x.pct, 1)]),
      ),
    );
    out.push('');
  };
  for (const r of results) {
    if (r.profile && r.inclusive && r.profilePath && r.profileWindow)
      profileTables(
        `### Where the scheduler's time goes at ${fmt(r.nodes, 0)} nodes (\`--cpu-prof\` of the controller-manager)`,
        'Main thread',
        {
          profile: r.profile,
          inclusive: r.inclusive,
          profilePath: r.profilePath,
          profileWindow: r.profileWindow,
        },
      );
    if (r.serverProfile)
      profileTables(
        `### Where the server's time goes at ${fmt(r.nodes, 0)} nodes (\`--cpu-prof\` of \`kubelab server\`)`,
        "The server's busiest thread (its main thread)",
        r.serverProfile,
      );
  }

  out.push('### Targets');
  out.push('');
  const goal = results.find((r) => r.nodes === GOAL_NODES)?.throughput;
  const goalRows: string[][] = [
    [
      `pods scheduled per second at ${fmt(GOAL_NODES, 0)} nodes (from start, informer sync excluded)`,
      goal ? `${fmt(goal.perSecFromSync, 0)}/s` : 'n/a (not run)',
      `≥ ${GOAL_PODS_PER_SEC}/s`,
      goal ? (goal.perSecFromSync >= GOAL_PODS_PER_SEC ? 'PASS' : '**MISS**') : 'n/a',
    ],
  ];
  for (const r of results) {
    if (!r.throughput) continue;
    for (const f of r.references)
      goalRows.push([
        `scheduler ÷ reference binder with ${concurrencyLabel(f.concurrency, f.pods)} in flight (pods/s from start) at ${fmt(r.nodes, 0)} nodes`,
        `${fmt(r.throughput.perSecFromSync / f.perSecFromSync, 2)}× (${fmt(r.throughput.perSecFromSync, 0)} ÷ ${fmt(f.perSecFromSync, 0)})`,
        '– (1.0×: the scheduler costs nothing beyond its writes)',
        '–',
      ]);
    const best = r.references.reduce<ReferenceFigures | undefined>(
      (a, f) => (!a || f.perSecFromSync > a.perSecFromSync ? f : a),
      undefined,
    );
    if (best)
      goalRows.push([
        `the best reference binder at ${fmt(r.nodes, 0)} nodes (${concurrencyLabel(best.concurrency, best.pods)} in flight): can this machine reach the goal at all?`,
        `${fmt(best.perSecFromSync, 0)}/s`,
        `≥ ${GOAL_PODS_PER_SEC}/s`,
        best.perSecFromSync >= GOAL_PODS_PER_SEC ? 'PASS' : '**MISS**',
      ]);
  }
  out.push(table(['target', 'value', 'goal', 'result'], ['l', 'r', 'l', 'l'], goalRows));
  return out.join('\n') + '\n';
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
    // Ctrl-C reaches this process twice under `npm run` (the terminal's, and tsx relays it):
    // only a third signal skips the cleanup.
    if (++signals > 2) process.exit(code);
    if (signals > 1) return;
    log(why);
    void cleanup.runAll().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => fail('interrupted; cleaning up', 130));
  process.on('SIGTERM', () => fail('terminated; cleaning up', 143));
  const budget = args.nodes.reduce((a, n) => a + 15 * 60_000 + n * 300 + args.pods * 30, 0);
  const watchdog = setTimeout(
    () => fail(`the benchmark took more than ${fmt(budget / 60_000, 0)} minutes; giving up`, 1),
    budget,
  );

  const tmp = mkdtempSync(join(tmpdir(), 'kubelab-bench-scheduler-'));
  cleanup.add('temp folder', () => rmSync(tmp, { recursive: true, force: true }));
  const machine = await machineInfo('', REPO_ROOT);
  const results: SizeResult[] = [];
  try {
    for (const nodes of args.nodes) {
      const r: SizeResult = { nodes, procs: [], problems: [], references: [] };
      results.push(r);
      try {
        await runSize(nodes, args, cleanup, tmp, r);
      } catch (err) {
        r.error = (err as Error).message;
        log(`${nodes} nodes failed: ${r.error}`);
      }
    }
  } finally {
    clearTimeout(watchdog);
    log('stopping everything');
    await cleanup.runAll();
  }

  const section = render(machine, args, results, started, (nowMs() - t0) / 1000, [loadStart, loadavg()[0]]);
  process.stdout.write('\n' + section);
  const failed = results.every((r) => !r.throughput);
  if (args.append && !failed) {
    const path = join(REPO_ROOT, 'BENCHMARKS.md');
    const replaced = replaceSection(path, 'scheduler', section);
    log(`${replaced ? 'replaced the scheduler section of' : 'added a scheduler section to'} ${path}`);
  } else if (args.append) log('not written to BENCHMARKS.md: the run failed');
  process.exitCode = results.some((r) => r.error) ? 1 : 0;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
