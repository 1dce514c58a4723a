/**
 * `npm run bench:pods`: pod start latency — a Pod created without a node (so it goes through
 * the scheduler) until the API shows it Running — on a real agent and on a hollow fleet; the
 * figures, the machine and the date go to BENCHMARKS.md, in the section of this benchmark
 * (replaced on every run). Goal: p99 ≤ 1 s (Kubernetes' pod startup SLO is 5 s at p99).
 *
 * Per pod, from one watch of the pods' namespace (gRPC, a connection of its own): the moment
 * the create call was made (this process's clock), the moment the watch first showed the pod
 * with spec.nodeName set (scheduled: the scheduler's share) and the moment it first showed
 * status.phase Running (the agent's share follows: scheduled seen → Running seen). p50, p90,
 * p99 and max of each part, and of the create call itself.
 *
 *   1. real: a fresh `kubelab server` (SQLite, its in-process controllers, the scheduler
 *      among them) in a child process on 127.0.0.1, and ONE real agent (bin/kubelab-agent.mjs,
 *      a child process, joined with a token from the Tokens service, at its defaults: max-pods
 *      110). --real-pods pods (100) are created at --real-rate per second (10), each running
 *      `sh -c 'sleep 3600 # <marker>-<name>'` as a process on this machine. Then every pod is
 *      deleted (default grace period) and the bench waits until they are gone from the API;
 *      whatever still runs with the marker in its command line is killed with its process group
 *      (also on failure or Ctrl-C).
 *   2. hollow: a fresh server, --nodes hollow nodes (100) joined ahead (16 at a time) and run by
 *      one `kubelab-agent --hollow N` child process (so the control plane and the fleet do not
 *      share a thread), at the agent's defaults; once every node is Ready and the fleet has
 *      settled (--settle s), --pods pods (3,000) are created at --rate per second (100).
 *
 * In both, before the measured pods: a warm-up of --real-warmup (5) or --warmup (100) pods at
 * the same rate, not counted, and a wait (at most --quiet-wait s, 60) until the processes this
 * benchmark did not start use < 0.3 cores for 3 s: the machine has 2 cores, often shared with
 * other people's tests. Per 5-s window of creation the report gives the parts' p99 and every
 * process's CPU, so a slow stretch can be told from a busy machine.
 *
 * The server's scheduler metrics (attempts, time in the algorithm) are read from its /metrics.
 * With --profile DIR the server runs with --cpu-prof and the report lists the functions with
 * the most self time from the first create to the last pod Running.
 *
 * Options: --no-append (print only), --scenarios real,hollow, --real-pods 100, --real-rate 10,
 * --real-warmup 5, --nodes 100, --pods 3000, --rate 100, --warmup 100, --settle 10 (seconds after
 * the nodes are Ready), --quiet-wait 60, --wait 120 (seconds to wait for Running after the last
 * create), --join-concurrency 16, --profile DIR. A quick run: `npm run bench:pods -- --no-append
 * --real-pods 20 --nodes 20 --pods 200`.
 */
import { scrape, type Scrape } from './lib/scrape.js';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Node, Pod } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client, Watch } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { freePort } from '../support/etcd.js';
import { AGENT_BIN, processesWith } from '../support/agentproc.js';
import { REPO_ROOT, startChildControlPlane, type ChildControlPlane } from './lib/child.js';
import { checkAlive, startProc, type Proc } from './lib/childproc.js';
import { cpuSeconds } from './lib/cpu.js';
import { monotonicUs, summarizeCpuProfile, type CpuProfileSummary } from './lib/cpuprofile.js';
import { joinAhead } from './lib/fleet.js';
import { changedNote, machineInfo, type MachineInfo } from './lib/machine.js';
import { otherBenchmarks } from './lib/others.js';
import { machineBusySeconds, memoryOf, MiB } from './lib/proc.js';
import { replaceSection, table } from './lib/report.js';
import { Cleanup, log } from './lib/run.js';
import { fmt, nowMs, percentileSorted, sleep, sortedCopy } from './lib/stats.js';
import { throughput } from './lib/workloads.js';

// ------------------------------------------------------------------------------ settings

type ScenarioName = 'real' | 'hollow';

interface Args {
  append: boolean;
  scenarios: ScenarioName[];
  realPods: number;
  realRate: number;
  nodes: number;
  pods: number;
  rate: number;
  settleSeconds: number;
  /** Pods created (at the scenario's rate) and Running before the measured ones; not counted. */
  warmup: number;
  realWarmup: number;
  /** Longest wait for the rest of the machine to be quiet before measuring, s. */
  quietWaitSeconds: number;
  waitSeconds: number;
  joinConcurrency: number;
  profileDir?: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    append: true,
    scenarios: ['real', 'hollow'],
    realPods: 100,
    realRate: 10,
    nodes: 100,
    pods: 3000,
    rate: 100,
    settleSeconds: 10,
    warmup: 100,
    realWarmup: 5,
    quietWaitSeconds: 60,
    waitSeconds: 120,
    joinConcurrency: 16,
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
    else if (a === '--scenarios') {
      const list = value().split(',');
      for (const s of list)
        if (s !== 'real' && s !== 'hollow') throw new Error(`--scenarios takes real and/or hollow, not ${s}`);
      args.scenarios = list as ScenarioName[];
    } else if (a === '--real-pods') args.realPods = positive(value(), a);
    else if (a === '--real-rate') args.realRate = positive(value(), a, false);
    else if (a === '--nodes') args.nodes = positive(value(), a);
    else if (a === '--pods') args.pods = positive(value(), a);
    else if (a === '--rate') args.rate = positive(value(), a, false);
    else if (a === '--settle') args.settleSeconds = Number(value());
    else if (a === '--warmup') args.warmup = Number(value());
    else if (a === '--real-warmup') args.realWarmup = Number(value());
    else if (a === '--quiet-wait') args.quietWaitSeconds = Number(value());
    else if (a === '--wait') args.waitSeconds = positive(value(), a, false);
    else if (a === '--join-concurrency') args.joinConcurrency = positive(value(), a);
    else if (a === '--profile') args.profileDir = value();
    else throw new Error(`unknown option ${a}; see the comment at the top of test/bench/pods.bench.ts`);
  }
  if (!(args.settleSeconds >= 0)) throw new Error('--settle takes seconds (0 or more)');
  if (!(args.quietWaitSeconds >= 0)) throw new Error('--quiet-wait takes seconds (0 or more)');
  for (const [flag, v] of [
    ['--warmup', args.warmup],
    ['--real-warmup', args.realWarmup],
  ] as const)
    if (!(Number.isInteger(v) && v >= 0)) throw new Error(`${flag} takes a whole number (0 or more)`);
  if (args.realPods + args.realWarmup > MAX_PODS_PER_NODE)
    throw new Error(
      `--real-pods + --real-warmup: one agent takes ${MAX_PODS_PER_NODE} pods at most (its default --max-pods)`,
    );
  if (args.pods + args.warmup > args.nodes * MAX_PODS_PER_NODE)
    throw new Error(`${args.pods} pods do not fit on ${args.nodes} nodes of ${MAX_PODS_PER_NODE} pods each`);
  return args;
}

const NAMESPACE = 'pods-bench';
const REAL_NODE = 'pods-bench-real';
const HOLLOW_PREFIX = 'hollow';
/** Ends every real container's command line: processesWith(MARKER) finds what is left. */
const MARKER = `kubelab-bench-pods-${process.pid}`;
const POD_CPU = '10m';
const POD_MEMORY = '16Mi';
/** The agent's default --max-pods. */
const MAX_PODS_PER_NODE = 110;
const GOAL_P99_MS = 1000;
const SLO_P99_MS = 5000;
const WINDOW_MS = 5000;
/** Cores that processes this benchmark did not start may use while the machine counts as quiet. */
const QUIET_CORES = 0.3;
/** The tail whose time is split into its parts in the report. */
const TAIL_PERCENT = 5;

function benchPod(name: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { app: 'pods-bench' } },
    spec: {
      // No nodeName: the scheduler places it.
      containers: [
        {
          name: 'main',
          command: ['sh', '-c', `sleep 3600 # ${MARKER}-${name}`],
          resources: { requests: { cpu: POD_CPU, memory: POD_MEMORY } },
        },
      ],
    },
  };
}

// ------------------------------------------------------------------------------ processes

/** The process group of `pid` (field 5 of /proc/<pid>/stat), or undefined. */
function pgidOf(pid: number | 'self'): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

/**
 * SIGKILLs every process whose command line holds the marker, with its process group: each
 * container runs in a group of its own under the agent's wrapper, and a shell that exec'd its
 * command (`sleep`) no longer shows the marker, but stays in the group. Returns how many
 * processes had the marker.
 */
function killContainers(): number {
  const pids = processesWith(MARKER);
  const own = pgidOf('self');
  for (const pid of pids) {
    const pgid = pgidOf(pid);
    try {
      if (pgid && pgid > 1 && pgid !== own) process.kill(-pgid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return pids.length;
}

// ------------------------------------------------------------------------------ CPU

interface CpuMark {
  at: number;
  /** CLOCK_MONOTONIC, µs: the time base of --cpu-prof. */
  mono: number;
  cpu: Record<string, number>;
}

function cpuMark(pids: Record<string, number>): CpuMark {
  return {
    at: nowMs(),
    mono: monotonicUs(),
    cpu: {
      ...Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)])),
      machine: machineBusySeconds(),
    },
  };
}

/** Cores used by each process between two marks; `others`: processes this benchmark did not start. */
function coresBetween(a: CpuMark, b: CpuMark): Record<string, number> {
  const seconds = (b.at - a.at) / 1000;
  const out = Object.fromEntries(Object.keys(a.cpu).map((k) => [k, (b.cpu[k] - a.cpu[k]) / seconds]));
  let ours = 0;
  for (const [k, v] of Object.entries(out)) if (k !== 'machine' && Number.isFinite(v)) ours += v;
  out.others = Math.max(0, out.machine - ours);
  return out;
}

/** How long the bench waited for the rest of the machine to be quiet, and whether it was. */
interface QuietWait {
  seconds: number;
  quiet: boolean;
  /** Cores used by others in the last second of the wait. */
  othersCores: number;
}

/**
 * Waits until processes this benchmark did not start use < QUIET_CORES for 3 s in a row (the
 * machine is shared: other people's tests and benchmarks starve the server and the agents),
 * at most `maxSeconds`.
 */
async function waitForQuiet(
  label: string,
  pids: Record<string, number>,
  maxSeconds: number,
): Promise<QuietWait> {
  const t0 = nowMs();
  let calm = 0;
  let others = NaN;
  let prev = cpuMark(pids);
  let lastLog = nowMs();
  while (nowMs() - t0 < maxSeconds * 1000) {
    await sleep(1000);
    const now = cpuMark(pids);
    others = coresBetween(prev, now).others;
    prev = now;
    calm = others < QUIET_CORES ? calm + 1 : 0;
    if (calm >= 3) return { seconds: (nowMs() - t0) / 1000, quiet: true, othersCores: others };
    if (nowMs() - lastLog >= 10_000) {
      lastLog = nowMs();
      log(`${label}: waiting for the machine to be quiet: others use ${fmt(others, 2)} cores`);
    }
  }
  log(`${label}: the machine is still busy (others use ${fmt(others, 2)} cores); measuring anyway`);
  return { seconds: (nowMs() - t0) / 1000, quiet: false, othersCores: others };
}

// ------------------------------------------------------------------------------ /metrics

interface SchedulerFigures {
  scheduled: number;
  unschedulable: number;
  errors: number;
  /** Mean time in the algorithm (filters and scores) per scheduled pod, ms. */
  algorithmMeanMs: number;
}

function schedulerFigures(before: Scrape, after: Scrape): SchedulerFigures {
  const d = (k: string) => (after.get(k) ?? 0) - (before.get(k) ?? 0);
  const H = 'scheduler_scheduling_algorithm_duration_seconds';
  return {
    scheduled: d('scheduler_schedule_attempts_total{result="scheduled"}'),
    unschedulable: d('scheduler_schedule_attempts_total{result="unschedulable"}'),
    errors: d('scheduler_schedule_attempts_total{result="error"}'),
    algorithmMeanMs: (d(`${H}_sum{result="scheduled"}`) / d(`${H}_count{result="scheduled"}`)) * 1000,
  };
}

// ------------------------------------------------------------------------------ watching

/** When each pod of the namespace was first seen scheduled, Running, Failed and deleted. */
class PodWatch {
  readonly scheduled = new Map<string, { at: number; node: string }>();
  readonly running = new Map<string, number>();
  readonly failed = new Map<string, string>();
  readonly deleted = new Set<string>();
  events = 0;
  error?: Error;
  private readonly done: Promise<void>;

  private constructor(private readonly watch: Watch<Pod>) {
    this.done = (async () => {
      try {
        for await (const ev of watch) {
          const at = nowMs();
          this.events++;
          const name = ev.object.metadata?.name ?? '';
          if (ev.type === 'DELETED') this.deleted.add(name);
          else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') {
            const node = ev.object.spec?.nodeName;
            if (node && !this.scheduled.has(name)) this.scheduled.set(name, { at, node });
            const phase = ev.object.status?.phase;
            if (phase === 'Running' && !this.running.has(name)) this.running.set(name, at);
            if (phase === 'Failed' && !this.failed.has(name))
              this.failed.set(name, `${ev.object.status?.reason ?? ''} ${ev.object.status?.message ?? ''}`);
          }
        }
      } catch (err) {
        this.error = err as Error;
      }
      this.error ??= new Error('the pod watch ended');
    })();
  }

  static async start(client: Client): Promise<PodWatch> {
    const rv = (await client.list('Pod', { namespace: NAMESPACE, limit: 1 })).resourceVersion ?? '';
    return new PodWatch(await client.watch('Pod', { namespace: NAMESPACE, resourceVersion: rv }));
  }

  async stop(): Promise<void> {
    this.watch.stop();
    await this.done;
  }
}

// ------------------------------------------------------------------------------ measuring

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

interface WindowFigures {
  pods: number;
  toRunning: Dist;
  toScheduledP99: number;
  scheduledToRunningP99: number;
  createCallP99: number;
  /** Cores used over the same 5 s of wall time (undefined past the end of the phase). */
  cores?: Record<string, number>;
}

interface LatencyFigures {
  pods: number;
  asked: number;
  achieved: number;
  writeSeconds: number;
  /** The most the writer fell behind its schedule, ms. */
  writerLateMs: number;
  /** Create call made → Running seen: the figure of the goal. */
  toRunning: Dist;
  /** Create call made → spec.nodeName seen. */
  toScheduled: Dist;
  /** spec.nodeName seen → Running seen. */
  scheduledToRunning: Dist;
  /** The create call itself (made → returned). */
  createCall: Dist;
  createFailures: number;
  firstCreateError?: string;
  notScheduled: number;
  notRunning: number;
  failed: number;
  firstFailure?: string;
  /** First create → last Running seen, s. */
  spanSeconds: number;
  /** By creation time, in windows of WINDOW_MS: the parts' percentiles, and the cores used meanwhile. */
  windows: WindowFigures[];
  cores: Record<string, number>;
  rssMiB: Record<string, number>;
  watchEvents: number;
  scheduler: SchedulerFigures;
  nodesUsed: number;
  maxPerNode: number;
  /** The measured window, CLOCK_MONOTONIC µs (for the server's profile). */
  mono: [number, number];
  /** The slowest TAIL_PERCENT % of the pods by create → Running: their mean parts, ms. */
  tail: {
    pods: number;
    fromMs: number;
    createCall: number;
    callToScheduled: number;
    scheduledToRunning: number;
  };
  /** Store revisions written during the phase (every kind: pods, events, leases, nodes). */
  storeWrites: number;
  /** Other benchmarks seen running during the phase (command lines). */
  otherBenchmarks: string[];
}

/**
 * Creates `count` pods at `rate` per second (names `${prefix}-i`) and waits until every one is
 * Running (or `waitSeconds` after the last create), printing progress every 5 s.
 */
async function measure(
  label: string,
  cp: ChildControlPlane,
  metricsPort: number,
  watch: PodWatch,
  count: number,
  rate: number,
  waitSeconds: number,
  pids: () => Record<string, number>,
  procs: Proc[],
): Promise<LatencyFigures> {
  const admin = cp.client(true);
  const names = Array.from({ length: count }, (_, i) => `${label}-${i}`);
  const seen = (m: { has(name: string): boolean }) => names.reduce((n, x) => n + (m.has(x) ? 1 : 0), 0);
  const calledAt = new Float64Array(count);
  const returnedAt = new Float64Array(count);
  const failures: string[] = [];
  const inflight = new Set<Promise<void>>();
  const before = await scrape(metricsPort);
  const revision = async () => Number((await admin.list('Namespace', { limit: 1 })).resourceVersion);
  const revBefore = await revision();
  const progress = (what: string) =>
    log(
      `${label}: ${what}: created ${fmt(returnedAt.filter(Boolean).length, 0)}/${fmt(count, 0)}, ` +
        `scheduled ${fmt(seen(watch.scheduled), 0)}, Running ${fmt(seen(watch.running), 0)}` +
        (failures.length ? `, ${failures.length} creates failed` : '') +
        (seen(watch.failed) ? `, ${seen(watch.failed)} Failed` : ''),
    );
  log(`${label}: creating ${fmt(count, 0)} pods at ${fmt(rate, 0)}/s`);
  const start = cpuMark(pids());
  // CPU of every process and of the machine at each window's edge (windows by creation time).
  const marks: CpuMark[] = [start];
  const others = new Set(otherBenchmarks());
  const ticker = setInterval(() => {
    marks.push(cpuMark(pids()));
    for (const o of otherBenchmarks()) others.add(o);
  }, WINDOW_MS);
  let writerLate = 0;
  let lastLog = nowMs();
  const t0 = nowMs();
  for (let i = 0; i < count; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - nowMs();
    if (wait > 1) await sleep(wait);
    else writerLate = Math.max(writerLate, -wait);
    calledAt[i] = nowMs();
    const p: Promise<void> = admin.create(benchPod(names[i])).then(
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
    if (nowMs() - lastLog >= 5000) {
      lastLog = nowMs();
      checkAlive(procs);
      progress(`${fmt((nowMs() - t0) / 1000, 0)} s`);
    }
  }
  const writeSeconds = (nowMs() - t0) / 1000;
  await Promise.all(inflight);
  const expected = count - failures.length;
  const deadline = nowMs() + waitSeconds * 1000;
  while (seen(watch.running) + seen(watch.failed) < expected && nowMs() < deadline) {
    if (watch.error) throw watch.error;
    checkAlive(procs);
    // The watch's own loop takes the times; this one only needs to notice the end.
    await sleep(100);
    if (nowMs() - lastLog >= 5000) {
      lastLog = nowMs();
      progress(`${fmt((nowMs() - t0) / 1000, 0)} s, waiting`);
    }
  }
  clearInterval(ticker);
  const end = cpuMark(pids());
  const after = await scrape(metricsPort);
  const revAfter = await revision();
  progress('done');
  if (failures.length) log(`${label}: ${failures.length} creates failed, e.g. ${failures[0]}`);

  const toRunning: number[] = [];
  const toScheduled: number[] = [];
  const scheduledToRunning: number[] = [];
  const createCall: number[] = [];
  const byWindow: Array<{ run: number[]; sched: number[]; agent: number[]; call: number[] }> = [];
  const windowOf = (i: number) =>
    (byWindow[Math.floor((calledAt[i] - t0) / WINDOW_MS)] ??= { run: [], sched: [], agent: [], call: [] });
  let notScheduled = 0;
  let notRunning = 0;
  let lastRunning = 0;
  const whole: Array<{ run: number; sched: number; call: number }> = [];
  const perNode = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    if (!returnedAt[i]) continue;
    createCall.push(returnedAt[i] - calledAt[i]);
    windowOf(i).call.push(returnedAt[i] - calledAt[i]);
    const s = watch.scheduled.get(names[i]);
    const r = watch.running.get(names[i]);
    if (s) {
      toScheduled.push(s.at - calledAt[i]);
      windowOf(i).sched.push(s.at - calledAt[i]);
      perNode.set(s.node, (perNode.get(s.node) ?? 0) + 1);
    } else notScheduled++;
    if (r === undefined) {
      notRunning++;
      continue;
    }
    lastRunning = Math.max(lastRunning, r);
    toRunning.push(r - calledAt[i]);
    windowOf(i).run.push(r - calledAt[i]);
    if (s) {
      scheduledToRunning.push(r - s.at);
      windowOf(i).agent.push(r - s.at);
      whole.push({ run: r - calledAt[i], sched: s.at - calledAt[i], call: returnedAt[i] - calledAt[i] });
    }
  }
  const failed = names.filter((n) => watch.failed.has(n));
  whole.sort((a, b) => b.run - a.run);
  const tail = whole.slice(0, Math.max(1, Math.ceil((whole.length * TAIL_PERCENT) / 100)));
  const mean = (f: (x: (typeof whole)[number]) => number) => tail.reduce((a, x) => a + f(x), 0) / tail.length;
  const figures: LatencyFigures = {
    pods: count,
    asked: rate,
    achieved: count / writeSeconds,
    writeSeconds,
    writerLateMs: writerLate,
    toRunning: dist(toRunning),
    toScheduled: dist(toScheduled),
    scheduledToRunning: dist(scheduledToRunning),
    createCall: dist(createCall),
    createFailures: failures.length,
    firstCreateError: failures[0],
    notScheduled,
    notRunning,
    failed: failed.length,
    firstFailure: failed.length ? `${failed[0]}: ${watch.failed.get(failed[0])}` : undefined,
    spanSeconds: ((lastRunning || nowMs()) - t0) / 1000,
    windows: Array.from(byWindow, (w, k) => ({
      pods: w?.call.length ?? 0,
      toRunning: dist(w?.run ?? []),
      toScheduledP99: dist(w?.sched ?? []).p99,
      scheduledToRunningP99: dist(w?.agent ?? []).p99,
      createCallP99: dist(w?.call ?? []).p99,
      cores: marks[k + 1] ? coresBetween(marks[k], marks[k + 1]) : undefined,
    })),
    cores: coresBetween(start, end),
    rssMiB: Object.fromEntries(Object.entries(pids()).map(([k, pid]) => [k, memoryOf(pid).rss / MiB])),
    watchEvents: watch.events,
    scheduler: schedulerFigures(before, after),
    nodesUsed: perNode.size,
    maxPerNode: perNode.size ? Math.max(...perNode.values()) : 0,
    mono: [start.mono, end.mono],
    tail: {
      pods: tail.length,
      fromMs: tail.length ? tail[tail.length - 1].run : NaN,
      createCall: mean((x) => x.call),
      callToScheduled: mean((x) => x.sched - x.call),
      scheduledToRunning: mean((x) => x.run - x.sched),
    },
    storeWrites: revAfter - revBefore,
    otherBenchmarks: [...others],
  };
  const l = figures.toRunning;
  log(
    `${label}: create → Running p50 ${fmt(l.p50)} ms, p90 ${fmt(l.p90)} ms, p99 ${fmt(l.p99)} ms, max ${fmt(l.max)} ms ` +
      `(create → scheduled p99 ${fmt(figures.toScheduled.p99)} ms, scheduled → Running p99 ${fmt(figures.scheduledToRunning.p99)} ms); ` +
      `${notRunning} not Running`,
  );
  return figures;
}

// ------------------------------------------------------------------------------ scenarios

interface ScenarioResult {
  name: ScenarioName;
  nodes: number;
  latency?: LatencyFigures;
  /** Node Ready after the agent (or the fleet) was started, s. */
  readySeconds?: number;
  join?: { seconds: number; perSec: number };
  warmup?: LatencyFigures;
  quiet?: QuietWait;
  /** Real: every pod deleted → gone from the API. */
  deletion?: { seconds: number; gone: number; pods: number; leftovers: number };
  profile?: CpuProfileSummary;
  problems: Array<{ name: string; problems: Map<string, number> }>;
  error?: string;
}

async function startServer(
  args: Args,
  scenario: ScenarioName,
  cleanup: Cleanup,
): Promise<{ cp: ChildControlPlane; metricsPort: number; profileDir?: string }> {
  const metricsPort = await freePort();
  const profileDir = args.profileDir ? join(args.profileDir, `server-${scenario}`) : undefined;
  if (profileDir) {
    rmSync(profileDir, { recursive: true, force: true });
    mkdirSync(profileDir, { recursive: true });
  }
  log(`${scenario}: starting kubelab server (SQLite, in-process controllers with the scheduler)`);
  const cp = await startChildControlPlane({
    store: 'sqlite',
    // Given after child.ts's own --metrics-listen, so this one wins: the bench reads it.
    serverArgs: ['--metrics-listen', `127.0.0.1:${metricsPort}`],
    nodeArgs: profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
    startTimeoutMs: 60_000,
  });
  cleanup.add('kubelab server', () => cp.stop());
  return { cp, metricsPort, profileDir };
}

async function joinToken(cp: ChildControlPlane): Promise<string> {
  const tokens = new TokensClient({ server: `https://${cp.server}`, token: cp.token, caPem: cp.caPem });
  try {
    return (await tokens.create({ description: 'bench:pods' })).token!;
  } finally {
    tokens.close();
  }
}

function isSchedulable(n: Node | undefined): boolean {
  if (!n) return false;
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  return (
    ready && !n.spec?.unschedulable && !(n.spec?.taints ?? []).some((t) => t.effect !== 'PreferNoSchedule')
  );
}

/** Scenario 1: one real agent process, its pods real processes. */
async function runReal(args: Args, tmp: string, r: ScenarioResult, local: Cleanup): Promise<void> {
  const procs: Proc[] = [];
  let profileDir: string | undefined;
  let cp: ChildControlPlane | undefined;
  try {
    const started = await startServer(args, 'real', local);
    cp = started.cp;
    profileDir = started.profileDir;
    // Stopped after the agent (cleanups run in reverse): no agent left to start them again.
    local.add('containers', () => {
      const n = killContainers();
      if (n) log(`real: killed ${n} leftover container processes (marker ${MARKER})`);
    });
    const token = await joinToken(cp);
    const dataDir = join(tmp, 'real-agent');
    mkdirSync(dataDir, { recursive: true });
    log(`real: starting kubelab-agent (node ${REAL_NODE}) and waiting for the node to be Ready`);
    const t0 = nowMs();
    const agent = startProc(
      'agent',
      [
        AGENT_BIN,
        '--server',
        `https://${cp.server}`,
        '--token',
        token,
        '--data-dir',
        dataDir,
        '--node-name',
        REAL_NODE,
        '--log-level',
        'warn',
      ],
      /reporting to/,
    );
    procs.push(agent);
    local.add('agent', () => agent.stop());
    const admin = cp.client(true);
    for (;;) {
      checkAlive(procs);
      if (isSchedulable(await admin.get('Node', REAL_NODE).catch(() => undefined))) break;
      if (nowMs() - t0 > 60_000) throw new Error(`node ${REAL_NODE} was not Ready within 60 s`);
      await sleep(200);
    }
    r.readySeconds = (nowMs() - t0) / 1000;
    log(`real: node Ready in ${fmt(r.readySeconds, 1)} s; settling for ${args.settleSeconds} s`);
    await sleep(args.settleSeconds * 1000);
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    const watch = await PodWatch.start(cp.client(true));
    local.add('pod watch', () => watch.stop());
    const pids = () => ({ server: cp!.pid, agent: agent.pid, bench: process.pid });
    if (args.realWarmup)
      r.warmup = await measure(
        'real-warmup',
        cp,
        started.metricsPort,
        watch,
        args.realWarmup,
        args.realRate,
        args.waitSeconds,
        pids,
        procs,
      );
    r.quiet = await waitForQuiet('real', pids(), args.quietWaitSeconds);
    r.latency = await measure(
      'real',
      cp,
      started.metricsPort,
      watch,
      args.realPods,
      args.realRate,
      args.waitSeconds,
      pids,
      procs,
    );

    // ---- every pod deleted (default grace period: sleep ends on the TERM), then gone.
    const names = [
      ...Array.from({ length: args.realWarmup }, (_, i) => `real-warmup-${i}`),
      ...Array.from({ length: args.realPods }, (_, i) => `real-${i}`),
    ];
    log(`real: deleting the ${names.length} pods and waiting until they are gone`);
    const d0 = nowMs();
    await throughput(names.length, 16, (i) =>
      admin.delete('Pod', names[i], { namespace: NAMESPACE }).catch(() => undefined),
    );
    const gone = () => names.filter((n) => watch.deleted.has(n)).length;
    let lastLog = nowMs();
    while (gone() < names.length && nowMs() - d0 < 90_000) {
      if (watch.error) throw watch.error;
      checkAlive(procs);
      await sleep(100);
      if (nowMs() - lastLog >= 5000) {
        lastLog = nowMs();
        log(`real: ${gone()}/${names.length} pods gone`);
      }
    }
    const deletedIn = (nowMs() - d0) / 1000;
    // The wrapper and sleep of a pod end together; give the last ones a moment.
    let leftovers = processesWith(MARKER).length;
    for (let i = 0; i < 20 && leftovers; i++) {
      await sleep(100);
      leftovers = processesWith(MARKER).length;
    }
    r.deletion = { seconds: deletedIn, gone: gone(), pods: names.length, leftovers };
    log(
      `real: ${r.deletion.gone}/${names.length} pods gone in ${fmt(deletedIn, 1)} s; ` +
        `${leftovers} processes with the marker still running`,
    );
  } finally {
    r.problems = procs.map((p) => ({ name: p.name, problems: p.problems }));
    await local.runAll();
    if (profileDir && r.latency) r.profile = readServerProfile(profileDir, r.latency.mono);
  }
}

/** Scenario 2: a hollow fleet in a child process. */
async function runHollow(args: Args, tmp: string, r: ScenarioResult, local: Cleanup): Promise<void> {
  const procs: Proc[] = [];
  let profileDir: string | undefined;
  try {
    const started = await startServer(args, 'hollow', local);
    const cp = started.cp;
    profileDir = started.profileDir;
    const token = await joinToken(cp);
    const dataDir = join(tmp, 'hollow');
    mkdirSync(dataDir, { recursive: true });
    const server = `https://${cp.server}`;
    r.join = await joinAhead(
      server,
      token,
      Array.from({ length: args.nodes }, (_, i) => ({ dataDir, node: `${HOLLOW_PREFIX}-${i}` })),
      args.joinConcurrency,
    );

    const factory = new SharedInformerFactory(cp.client(true));
    const nodeInformer = factory.informerFor('Node');
    local.add('node informer', () => factory.shutdown());
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
    procs.push(fleet);
    local.add('hollow fleet', () => fleet.stop());
    log(`hollow: started kubelab-agent --hollow ${args.nodes}; waiting for every node to be Ready`);
    let lastLog = nowMs();
    for (;;) {
      checkAlive(procs);
      const ready = nodeInformer.list().filter(isSchedulable).length;
      if (ready >= args.nodes && fleet.upAt !== undefined) break;
      if (nowMs() - t0 > 120_000 + args.nodes * 100)
        throw new Error(
          `only ${ready}/${args.nodes} nodes were Ready after ${fmt((nowMs() - t0) / 1000, 0)} s`,
        );
      if (nowMs() - lastLog >= 5000) {
        lastLog = nowMs();
        log(`hollow: ${nodeInformer.list().length} nodes registered, ${ready} Ready`);
      }
      await sleep(250);
    }
    r.readySeconds = (nowMs() - t0) / 1000;
    await local.now('node informer');
    log(`hollow: every node Ready in ${fmt(r.readySeconds, 1)} s; settling for ${args.settleSeconds} s`);
    await sleep(args.settleSeconds * 1000);
    checkAlive(procs);

    const admin = cp.client(true);
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    const watch = await PodWatch.start(cp.client(true));
    local.add('pod watch', () => watch.stop());
    const pids = () => ({ server: cp.pid, hollow: fleet.pid, bench: process.pid });
    if (args.warmup)
      r.warmup = await measure(
        'hollow-warmup',
        cp,
        started.metricsPort,
        watch,
        args.warmup,
        args.rate,
        args.waitSeconds,
        pids,
        procs,
      );
    r.quiet = await waitForQuiet('hollow', pids(), args.quietWaitSeconds);
    r.latency = await measure(
      'hollow',
      cp,
      started.metricsPort,
      watch,
      args.pods,
      args.rate,
      args.waitSeconds,
      pids,
      procs,
    );
  } finally {
    r.problems = procs.map((p) => ({ name: p.name, problems: p.problems }));
    await local.runAll();
    if (profileDir && r.latency) r.profile = readServerProfile(profileDir, r.latency.mono);
  }
}

function readServerProfile(dir: string, [from, to]: [number, number]): CpuProfileSummary | undefined {
  try {
    return summarizeCpuProfile(dir, REPO_ROOT, from, to);
  } catch (err) {
    log(`could not read the server's profile in ${dir}: ${(err as Error).message}`);
    return undefined;
  }
}

// ------------------------------------------------------------------------------ the report

const cell = (v: number) => fmt(v, v >= 100 ? 0 : 1);

function distRow(what: string, d: Dist, bold = false): string[] {
  const b = (s: string) => (bold ? `**${s}**` : s);
  return [what, fmt(d.n, 0), b(cell(d.p50)), cell(d.p90), b(cell(d.p99)), cell(d.max)];
}

function verdict(l: LatencyFigures | undefined): string {
  if (!l) return 'n/a';
  if (l.notRunning || l.createFailures) return '**MISS** (pods missing)';
  return l.toRunning.p99 <= GOAL_P99_MS ? 'PASS' : '**MISS**';
}

function render(
  machine: MachineInfo,
  args: Args,
  results: ScenarioResult[],
  started: Date,
  seconds: number,
  load: number[],
): string {
  const out: string[] = [];
  const shared = Math.max(0, ...results.map((r) => r.latency?.cores.others ?? 0));
  out.push(`## ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — pods (\`npm run bench:pods\`)`);
  out.push('');
  out.push(
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${fmt(machine.ramGiB, 1)} GiB RAM, ${machine.os}; Node ${machine.node}. ` +
      `kubelab ${machine.commit}. Whole run: ${fmt(seconds / 60, 1)} min; 1-minute load average ${fmt(load[0], 1)} at the start, ` +
      `${fmt(load[1], 1)} at the end. Every process below (server, agents, the bench, the real pods) shares the ${machine.cores} cores` +
      (shared >= 0.1
        ? `; **the machine was shared: other people's work used up to ${fmt(shared, 2)} cores during a measured phase ` +
          '(the "others" CPU column), so the latencies are higher than on a quiet machine**.'
        : '.') +
      ` ${changedNote(machine)}`.trimEnd(),
  );
  out.push('');
  out.push(
    'Pod start latency: a Pod created without `spec.nodeName` (so the scheduler places it) until the API shows ' +
      '`status.phase: Running`. Per pod, from one gRPC watch of the namespace (a connection of its own): the create call made ' +
      "(this process's clock) → the pod first seen with `spec.nodeName` (**scheduled**: the scheduler's share, with the create " +
      "call and the watch's delivery) → first seen Running (**scheduled → Running**: the agent's share — its watch, admission, " +
      'starting the container, its status write — with a second watch delivery). Percentiles of the parts do not add up to the whole. ' +
      `Pods: one container \`sh -c 'sleep 3600 # <marker>'\`, requests cpu ${POD_CPU} and memory ${POD_MEMORY}, created at a steady rate ` +
      `in namespace ${NAMESPACE}, after a warm-up of a few pods at the same rate (not counted) and a wait (≤ ${args.quietWaitSeconds} s) ` +
      `for the processes this benchmark did not start to use < ${QUIET_CORES} cores. Server: a fresh \`kubelab server\` per scenario (SQLite, its in-process controllers with the scheduler) ` +
      'in a child process on 127.0.0.1; agents at their defaults (max-pods 110). ' +
      `Goal: p99 ≤ ${fmt(GOAL_P99_MS / 1000, 0)} s (Kubernetes' pod startup SLO: p99 ≤ ${fmt(SLO_P99_MS / 1000, 0)} s). ` +
      `Command: \`npm run bench:pods${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`.`,
  );
  out.push('');
  out.push(
    '- **real**: one `kubelab-agent` process (bin/kubelab-agent.mjs, joined with a token) runs every pod as a process on this ' +
      'machine, under its exit wrapper; afterwards every pod is deleted (default grace period) and the bench waits until they ' +
      'are gone, then kills whatever still carries the marker with its process group.',
  );
  out.push(
    `- **hollow**: ${fmt(args.nodes, 0)} hollow nodes in one \`kubelab-agent --hollow ${args.nodes}\` process (joined ahead, ` +
      `${args.joinConcurrency} at a time): the same agent code with the hollow runtime (containers start at once, no processes).`,
  );
  out.push('');

  for (const r of results) {
    const l = r.latency;
    const title =
      r.name === 'real'
        ? `### real: ${fmt(args.realPods, 0)} pods on one real agent, created at ${fmt(args.realRate, 0)}/s`
        : `### hollow: ${fmt(args.pods, 0)} pods on ${fmt(args.nodes, 0)} hollow nodes, created at ${fmt(args.rate, 0)}/s`;
    out.push(title);
    out.push('');
    if (!l) {
      out.push(`**failed: ${r.error ?? 'no figures'}**`);
      out.push('');
      continue;
    }
    out.push(
      table(
        ['latency, ms', 'pods', 'p50', 'p90', 'p99', 'max'],
        ['l', 'r', 'r', 'r', 'r', 'r'],
        [
          distRow('**create → Running** (seen in the watch)', l.toRunning, true),
          distRow('create → scheduled (spec.nodeName seen)', l.toScheduled),
          distRow('scheduled seen → Running seen', l.scheduledToRunning),
          distRow('the create call (made → returned)', l.createCall),
        ],
      ),
    );
    out.push('');
    const procs = Object.keys(l.cores).filter((k) => k !== 'machine' && k !== 'others');
    const bits = [
      `${fmt(l.pods, 0)} pods asked at ${fmt(l.asked, 0)}/s, created at ${fmt(l.achieved, 1)}/s over ${fmt(l.writeSeconds, 1)} s ` +
        `(the writer ≤ ${fmt(l.writerLateMs, 0)} ms behind schedule); the last Running ${fmt(l.spanSeconds, 1)} s after the first create`,
      `${l.notRunning} not Running within ${args.waitSeconds} s of the last create, ${l.notScheduled} not scheduled, ` +
        `${l.failed} Failed${l.firstFailure ? ` (${l.firstFailure.slice(0, 160)})` : ''}, ${l.createFailures} creates failed` +
        (l.firstCreateError ? ` (${l.firstCreateError.slice(0, 160)})` : ''),
      `placed on ${l.nodesUsed} node${l.nodesUsed === 1 ? '' : 's'}, ≤ ${l.maxPerNode} each`,
      `CPU, cores used from the first create to the last Running: ${procs.map((k) => `${k} ${fmt(l.cores[k], 2)}`).join(', ')}; ` +
        `machine ${fmt(l.cores.machine, 2)}, others ${fmt(l.cores.others, 2)}` +
        (r.name === 'real' ? ' (the pods themselves are in machine, not in agent)' : ''),
      `RSS at the end, MiB: ${procs.map((k) => `${k} ${fmt(l.rssMiB[k], 0)}`).join(', ')}`,
      `the server's scheduler: ${fmt(l.scheduler.scheduled, 0)} scheduled, ${l.scheduler.unschedulable} unschedulable, ` +
        `${l.scheduler.errors} errors; algorithm ${fmt(l.scheduler.algorithmMeanMs, 3)} ms per pod (filters and scores)`,
      `${fmt(l.watchEvents, 0)} watch events`,
    ];
    if (r.readySeconds !== undefined)
      bits.push(
        `${r.name === 'real' ? 'the node' : 'every node'} Ready ${fmt(r.readySeconds, 1)} s after the agent started` +
          (r.join ? ` (joined ahead in ${fmt(r.join.seconds, 1)} s, ${fmt(r.join.perSec, 0)}/s)` : '') +
          `, then ${args.settleSeconds} s to settle`,
      );
    if (r.warmup)
      bits.push(
        `before: a warm-up of ${fmt(r.warmup.pods, 0)} pods at the same rate, not counted ` +
          `(their create → Running p50 ${fmt(r.warmup.toRunning.p50, 0)} ms, max ${fmt(r.warmup.toRunning.max, 0)} ms)`,
      );
    if (r.quiet)
      bits.push(
        r.quiet.quiet
          ? `then ${fmt(r.quiet.seconds, 0)} s until the rest of the machine was quiet (others < ${QUIET_CORES} cores for 3 s)`
          : `**the rest of the machine did not get quiet within ${fmt(r.quiet.seconds, 0)} s (others used ${fmt(r.quiet.othersCores, 2)} cores): measured anyway**`,
      );
    if (r.deletion)
      bits.push(
        `deletion: ${r.deletion.gone}/${r.deletion.pods} pods gone from the API ${fmt(r.deletion.seconds, 1)} s after the deletes began; ` +
          `${r.deletion.leftovers} processes with the marker left after that (killed)`,
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
    if (l.otherBenchmarks.length)
      bits.push(
        `**other benchmarks ran on this machine during the measured phase: ${l.otherBenchmarks.map((o) => `\`${o.slice(0, 160)}\``).join(', ')}**`,
      );
    if (r.error) bits.push(`**failed: ${r.error}**`);
    out.push(bits.map((b) => `- ${b}.`).join('\n'));
    out.push('');
    out.push(
      `By creation time, ${WINDOW_MS / 1000}-s windows (latencies in ms; CPU: cores used over the same 5 s of wall time, ` +
        '"others" = processes this benchmark did not start):',
    );
    out.push('');
    const cpuCols = procs.filter((k) => k !== 'bench');
    out.push(
      table(
        [
          'created',
          'pods',
          'create → Running p50 / p99',
          'create → scheduled p99',
          'scheduled → Running p99',
          'create call p99',
          ...cpuCols.map((k) => `CPU ${k}`),
          'CPU bench',
          'CPU others',
        ],
        ['l', ...Array<'r'>(7 + cpuCols.length).fill('r')],
        l.windows.map((w, k) => [
          `${k * (WINDOW_MS / 1000)}–${(k + 1) * (WINDOW_MS / 1000)} s`,
          fmt(w.pods, 0),
          `${cell(w.toRunning.p50)} / ${cell(w.toRunning.p99)}`,
          cell(w.toScheduledP99),
          cell(w.scheduledToRunningP99),
          cell(w.createCallP99),
          ...[...cpuCols, 'bench', 'others'].map((c) => (w.cores ? fmt(w.cores[c], 2) : '–')),
        ]),
      ),
    );
    out.push('');
  }

  for (const r of results) {
    const p = r.profile;
    if (!p) continue;
    out.push(`### Where the server's time goes, ${r.name} (\`--cpu-prof\` of \`kubelab server\`)`);
    out.push('');
    const busy = (p.busySamples * (Number.isFinite(p.intervalMs) ? p.intervalMs : 1)) / 1000 / p.seconds;
    out.push(
      `Main thread, ${p.windowed ? `first create → last Running (${fmt(p.seconds, 1)} s)` : `whole life (${fmt(p.seconds, 1)} s)`}: ` +
        `${fmt(p.busySamples, 0)} busy samples (~${fmt(busy, 2)} of a core busy on this thread); self time in percent of them ` +
        `(idle left out). Profile: \`${p.path}\`.`,
    );
    out.push('');
    out.push(
      table(
        ['function (self time)', '% of busy samples'],
        ['l', 'r'],
        p.self.slice(0, 15).map((x) => [`\`${x.fn}\``, fmt(x.pct, 1)]),
      ),
    );
    out.push('');
    out.push("kubelab's own functions by total time (their own and their callees'):");
    out.push('');
    out.push(
      table(
        ['function (total time)', '% of busy samples'],
        ['l', 'r'],
        p.inclusive.slice(0, 15).map((x) => [`\`${x.fn}\``, fmt(x.pct, 1)]),
      ),
    );
    out.push('');
  }

  out.push('### Goal');
  out.push('');
  out.push(
    table(
      [
        'scenario',
        'create → Running p99',
        'goal',
        'result',
        `Kubernetes SLO (≤ ${fmt(SLO_P99_MS / 1000, 0)} s)`,
      ],
      ['l', 'r', 'l', 'l', 'l'],
      results.map((r) => {
        const l = r.latency;
        return [
          r.name === 'real'
            ? `real: ${fmt(args.realPods, 0)} pods, one agent`
            : `hollow: ${fmt(args.pods, 0)} pods, ${fmt(args.nodes, 0)} nodes`,
          l ? `${fmt(l.toRunning.p99, 0)} ms` : 'n/a',
          `≤ ${fmt(GOAL_P99_MS, 0)} ms`,
          verdict(l),
          l ? (l.toRunning.p99 <= SLO_P99_MS && !l.notRunning ? 'met' : '**missed**') : 'n/a',
        ];
      }),
    ),
  );
  out.push('');
  out.push(
    `Where the time goes, per scenario: the slowest ${TAIL_PERCENT}% of the pods by create → Running, their time split into ` +
      'its parts (means; unlike percentiles these add up), and what the server had to do meanwhile:',
  );
  out.push('');
  for (const r of results) {
    const l = r.latency;
    if (!l) continue;
    const t = l.tail;
    const total = t.createCall + t.callToScheduled + t.scheduledToRunning;
    const pct = (v: number) => `${fmt((100 * v) / total, 0)}%`;
    const seconds = l.spanSeconds;
    const busy = r.profile
      ? ` (its main thread ~${fmt((r.profile.busySamples * (Number.isFinite(r.profile.intervalMs) ? r.profile.intervalMs : 1)) / 1000 / r.profile.seconds, 2)} of a core busy in the profile)`
      : '';
    const bits = [
      `**${r.name}**: ${verdict(l)} (p99 ${fmt(l.toRunning.p99, 0)} ms). The slowest ${fmt(t.pods, 0)} pods (≥ ${fmt(t.fromMs, 0)} ms) spent ` +
        `${fmt(t.createCall, 0)} ms in the create call (${pct(t.createCall)}), ${fmt(t.callToScheduled, 0)} ms more until their binding was seen ` +
        `(${pct(t.callToScheduled)}: the scheduler's informer, queue, algorithm and Bind, through the server) and ` +
        `${fmt(t.scheduledToRunning, 0)} ms from scheduled to Running (${pct(t.scheduledToRunning)}: the agent's watch, start and status write, through the server)`,
      `the server used ${fmt(l.cores.server, 2)} cores${busy} for ${fmt(l.storeWrites, 0)} store writes ` +
        `(${fmt(l.storeWrites / seconds, 0)}/s, ${fmt(l.storeWrites / l.pods, 1)} per pod — a pod's create, binding and status write, the ` +
        `scheduler's Scheduled and the agent's Started events (queued, some written after the phase), and the fleet's leases and ` +
        `node status); the scheduling algorithm itself took ` +
        `${fmt(l.scheduler.algorithmMeanMs, 2)} ms per pod`,
      `the machine: ${fmt(l.cores.machine, 2)} of ${machine.cores} cores busy, ${fmt(l.cores.others, 2)} of them other people's work` +
        (l.cores.machine >= machine.cores * 0.9
          ? ': **saturated** — every process waited for a core, so each part includes run-queue waits; the same run on a quiet machine is faster'
          : ''),
    ];
    out.push(`- ${bits.join('; ')}.`);
  }
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
    // Ctrl-C reaches this process twice under `npm run`: only a third signal skips the cleanup.
    if (++signals > 2) process.exit(code);
    if (signals > 1) return;
    log(why);
    void cleanup.runAll().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => fail('interrupted; cleaning up', 130));
  process.on('SIGTERM', () => fail('terminated; cleaning up', 143));
  const budget = 10 * 60_000 + (args.pods / args.rate) * 1000 + (args.realPods / args.realRate) * 1000;
  const watchdog = setTimeout(
    () => fail(`the benchmark took more than ${fmt(budget / 60_000, 0)} minutes; giving up`, 1),
    budget,
  );

  const tmp = mkdtempSync(join(tmpdir(), 'kubelab-bench-pods-'));
  cleanup.add('temp folder', () => rmSync(tmp, { recursive: true, force: true }));
  // Whatever happens, no container of this run outlives it.
  cleanup.add('containers', () => killContainers());
  const machine = await machineInfo('', REPO_ROOT);
  const results: ScenarioResult[] = [];
  try {
    for (const name of args.scenarios) {
      const r: ScenarioResult = { name, nodes: name === 'real' ? 1 : args.nodes, problems: [] };
      results.push(r);
      // The scenario's own processes, stopped when it ends (or by Ctrl-C, through `cleanup`).
      const local = new Cleanup();
      cleanup.add(name, () => local.runAll());
      try {
        if (name === 'real') await runReal(args, tmp, r, local);
        else await runHollow(args, tmp, r, local);
      } catch (err) {
        r.error = (err as Error).message;
        log(`${name} failed: ${r.error}`);
      }
    }
  } finally {
    clearTimeout(watchdog);
    log('stopping everything');
    await cleanup.runAll();
  }

  const section = render(machine, args, results, started, (nowMs() - t0) / 1000, [loadStart, loadavg()[0]]);
  process.stdout.write('\n' + section);
  if (args.append && results.some((r) => r.latency)) {
    const path = join(REPO_ROOT, 'BENCHMARKS.md');
    const replaced = replaceSection(path, 'pods', section);
    log(`${replaced ? 'replaced the pods section of' : 'added a pods section to'} ${path}`);
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
