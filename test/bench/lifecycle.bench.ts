/**
 * `npm run bench:lifecycle`: the node lifecycle controller at fleet scale, in one run; the
 * figures, the machine and the date go to BENCHMARKS.md, in the section of this benchmark
 * (replaced on every run). No reference system runs beside it: the yardsticks are the
 * controller's own promises (nothing marked while it heartbeats; a silent node Unknown within
 * the grace period + one monitor period; taints at the eviction rate).
 *
 *   1. `kubelab server` (SQLite, its in-process controllers but the node lifecycle controller)
 *      in a child process on 127.0.0.1; the node lifecycle controller in a process of its own
 *      (`kubelab controller-manager --controllers nodelifecycle --no-leader-elect`, at its
 *      defaults: node-monitor-period 5 s, node-monitor-grace-period 50 s,
 *      node-startup-grace-period 60 s, eviction rate 0.1 nodes/s per zone), so that its CPU and
 *      memory are its own; 1,000 hollow nodes joined ahead (16 at a time), then run by
 *      `kubelab-agent --hollow` child processes at the agent's defaults (lease renewed every
 *      10 s with a 40 s duration, status computed every 10 s and written on change or every
 *      5 min): two "steady" processes (steady-a, steady-b) and one "victim" process of 20.
 *   2. Healthy phase: once every node is Ready, 5 minutes of normal heartbeating, watched
 *      through a Node and a Lease informer in this process (gRPC, a connection of its own).
 *      Every node whose Ready condition leaves True and every NoExecute taint is a false
 *      positive: there must be none. The controller's, the server's and the agents' CPU and RSS
 *      are sampled from /proc, the controller's check durations read from its /metrics.
 *   3. Detection: the victim process is SIGKILLed. Per victim: kill → Ready=Unknown seen
 *      through the watch, last heartbeat (its Lease's last renewTime, or its Ready condition's
 *      heartbeat if later) → Ready=Unknown seen, and kill → the NoExecute
 *      `node.kubernetes.io/unreachable` taint seen; p50/max against the grace period (50 s) and
 *      grace + one monitor period (55 s), the bound the controller promises. Taints go out at
 *      0.1 nodes/s per zone by design, so the third figure spreads over ~victims × 10 s: the
 *      phase waits for them (grace + period + victims ÷ rate + 60 s, or --taint-wait). The
 *      steady nodes are still watched for false positives throughout.
 *
 * 5 minutes and 20 victims (not 10 minutes and 50) keep a run under 15 minutes; `--duration 10m
 * --victims 50` is the long run (~25 minutes).
 *
 * The bench also watches the rest of the machine (busy CPU, load, other benchmarks running):
 * on a 2-core machine another benchmark's load starves the server and the agents, and then
 * heartbeats do arrive late. A run during which other benchmarks ran says so in bold and is
 * not written unless --append-anyway is given.
 *
 * Options: --no-append (print only), --append-anyway, --nodes 1000, --victims 20, --duration
 * 5m (the healthy phase), --taint-wait 10m (cap on the detection phase; default as above),
 * --steady-processes 2, --interval 5s (/proc sampling), --join-concurrency 16. A quick run:
 * `npm run bench:lifecycle -- --no-append --duration 1m --nodes 200 --victims 10`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { TAINT_UNREACHABLE } from '../../client/api/taints.js';
import type { Lease, Node, NodeCondition } from '../../client/api/types.js';
import { NODE_LEASE_NAMESPACE } from '../../client/api/wellknown.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import { prometheusReflectorMetrics } from '../../client/cache/metrics.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { defaultConfig } from '../../agent/config.js';
import { DEFAULT_NODE_LIFECYCLE } from '../../main/controllers/nodelifecycle/config.js';
import { freePort } from '../support/etcd.js';
import { REPO_ROOT, startChildControlPlane, type ChildControlPlane } from './lib/child.js';
import { checkAlive, startProc, type Proc } from './lib/childproc.js';
import { joinAhead } from './lib/fleet.js';
import { reflectorFigures, type ReflectorFigures } from './lib/informers.js';
import { changedNote, machineInfo, type MachineInfo } from './lib/machine.js';
import { MiB, ProcSampler, type ProcSummary } from './lib/proc.js';
import { replaceSection, table } from './lib/report.js';
import { Cleanup, log } from './lib/run.js';
import { fmt, nowMs, percentileSorted, sleep, sortedCopy } from './lib/stats.js';

// ------------------------------------------------------------------------------ settings

interface Args {
  append: boolean;
  /** Append even if other benchmarks ran meanwhile (their load skews every figure). */
  appendAnyway: boolean;
  nodes: number;
  victims: number;
  durationMs: number;
  /** Cap on the detection phase, from the kill; undefined: long enough for every taint. */
  taintWaitMs?: number;
  steadyProcesses: number;
  intervalMs: number;
  joinConcurrency: number;
}

/** "10m", "90s", "500ms", "1h" or plain seconds. */
function parseDuration(v: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v.trim());
  if (!m) throw new Error(`${flag} "${v}" is not a duration like 10m, 90s or 600`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * unit;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    append: true,
    appendAnyway: false,
    nodes: 1000,
    victims: DEFAULT_VICTIMS,
    durationMs: DEFAULT_DURATION_MS,
    steadyProcesses: 2,
    intervalMs: 5_000,
    joinConcurrency: 16,
  };
  const whole = (v: string, flag: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${flag} takes a whole number above 0`);
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
    else if (a === '--append-anyway') args.appendAnyway = true;
    else if (a === '--nodes') args.nodes = whole(value(), a);
    else if (a === '--victims') args.victims = whole(value(), a);
    else if (a === '--duration') args.durationMs = parseDuration(value(), a);
    else if (a === '--taint-wait') args.taintWaitMs = parseDuration(value(), a);
    else if (a === '--steady-processes') args.steadyProcesses = whole(value(), a);
    else if (a === '--interval') args.intervalMs = parseDuration(value(), a);
    else if (a === '--join-concurrency') args.joinConcurrency = whole(value(), a);
    else throw new Error(`unknown option ${a}; see the comment at the top of test/bench/lifecycle.bench.ts`);
  }
  if (args.victims >= args.nodes) throw new Error('--victims must be fewer than --nodes');
  if (args.nodes - args.victims < args.steadyProcesses)
    throw new Error('every steady process needs at least one node');
  if (args.durationMs < 2 * args.intervalMs) throw new Error('--duration must cover two samples at least');
  return args;
}

/**
 * Shortened to keep a run under 15 minutes (start-up ~1.5 min, healthy phase, then ~55 s to
 * detect and victims × 10 s to taint them all at 0.1 nodes/s): 5 minutes healthy and 20 victims
 * instead of 10 minutes and 50; pass --duration 10m --victims 50 for the long run (~25 min).
 */
const DEFAULT_DURATION_MS = 5 * 60_000;
const DEFAULT_VICTIMS = 20;

/** What the controller runs with: it is started without controller flags. */
const LIFECYCLE = DEFAULT_NODE_LIFECYCLE;
const GRACE_MS = LIFECYCLE.monitorGracePeriodMs;
const PERIOD_MS = LIFECYCLE.monitorPeriodMs;
const BOUND_MS = GRACE_MS + PERIOD_MS;
const AGENT = defaultConfig('bench');
const VICTIM_PREFIX = 'victim';
const STOP_GRACE_MS = 10_000;
/** Incidents and log lines kept for the report (the counts are exact). */
const KEEP = 200;

type Phase = 'start-up' | 'healthy' | 'detection';
type Group = 'steady' | 'victim';

/** The detection phase's default length, from the kill: every victim Unknown, then tainted one by one. */
function fullTaintWaitMs(victims: number): number {
  return BOUND_MS + (victims / LIFECYCLE.evictionRate) * 1000 + 60_000;
}

// ------------------------------------------------------------------------------ hollow processes

interface LogLine {
  at: number;
  phase: Phase;
  level: number;
  msg: string;
  node?: string;
  err?: string;
}

interface HollowProc {
  name: string;
  prefix: string;
  group: Group;
  count: number;
  dataDir: string;
  child: ChildProcess;
  pid: number;
  /** fleet.start() resolved (every node joined and started): the CLI printed "running". */
  runningAt?: number;
  exit?: { code: number | null; signal: NodeJS.Signals | null; at: number };
  exited: Promise<void>;
  /** Lines at warn or above, by message; the first KEEP kept whole. */
  problems: Map<string, number>;
  lines: LogLine[];
  tail: string;
  /** Set when the bench killed it on purpose. */
  killedAt?: number;
  stop(): Promise<void>;
}

function startHollow(
  name: string,
  prefix: string,
  group: Group,
  count: number,
  cp: ChildControlPlane,
  dataDir: string,
  phase: () => Phase,
): HollowProc {
  mkdirSync(dataDir, { recursive: true });
  const args = [
    join(REPO_ROOT, 'bin/kubelab-agent.mjs'),
    '--hollow',
    String(count),
    '--hollow-prefix',
    prefix,
    '--server',
    `https://${cp.server}`,
    '--data-dir',
    dataDir,
    '--log-level',
    'warn',
  ];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: HollowProc = {
    name,
    prefix,
    group,
    count,
    dataDir,
    child,
    pid: child.pid ?? 0,
    exited: Promise.resolve(),
    problems: new Map(),
    lines: [],
    tail: '',
    async stop() {
      if (proc.exit) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await proc.exited;
      clearTimeout(timer);
    },
  };
  proc.exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      proc.exit = { code, signal, at: Date.now() };
      resolve();
    });
    child.once('error', (err) => {
      proc.tail += `\n${err.message}`;
      proc.exit ??= { code: null, signal: null, at: Date.now() };
      resolve();
    });
  });
  child.stdout?.on('data', (d: Buffer) => {
    const text = d.toString();
    proc.tail = (proc.tail + text).slice(-4000);
    if (proc.runningAt === undefined && text.includes('running')) proc.runningAt = Date.now();
  });
  let partial = '';
  child.stderr?.on('data', (d: Buffer) => {
    const text = partial + d.toString();
    const cut = text.lastIndexOf('\n');
    partial = text.slice(cut + 1);
    if (cut < 0) return;
    const complete = text.slice(0, cut);
    proc.tail = (proc.tail + complete + '\n').slice(-4000);
    for (const line of complete.split('\n')) {
      if (!line.trim()) continue;
      let entry: LogLine;
      try {
        const j = JSON.parse(line) as { level?: number; msg?: string; node?: string; err?: string };
        entry = {
          at: Date.now(),
          phase: phase(),
          level: j.level ?? 0,
          msg: j.msg ?? '',
          node: j.node,
          err: j.err,
        };
      } catch {
        // Not a log line (a crash, a warning from node): count it as an error.
        entry = { at: Date.now(), phase: phase(), level: 50, msg: line.slice(0, 160) };
      }
      if (entry.level < 40) continue;
      const key = `${entry.level >= 50 ? 'error' : 'warn'}: ${entry.msg}`;
      proc.problems.set(key, (proc.problems.get(key) ?? 0) + 1);
      if (proc.lines.length < KEEP) proc.lines.push(entry);
    }
  });
  return proc;
}

// ------------------------------------------------------------------------------ watching the fleet

/** A Ready condition that left True, or a NoExecute taint, as seen through the watch. */
interface Incident {
  node: string;
  group: Group;
  phase: Phase;
  /** Seen at (this process's clock, ms). */
  at: number;
  what: string;
  /** The Ready condition as the event carried it. */
  ready?: NodeCondition;
  /** The node's last lease renewTime seen before, and when this process saw it. */
  leaseRenew?: string;
  leaseSeenAt?: number;
}

interface NodeTrack {
  name: string;
  group: Group;
  firstSeenAt: number;
  firstReadyAt?: number;
  readyStatus?: string;
  /** The Ready condition last seen while it was True. */
  lastTrueReady?: NodeCondition;
  /** First time Ready was seen other than True after the node had been Ready. */
  notReadyAt?: number;
  notReadyCondition?: NodeCondition;
  /** NoExecute taint keys present now, and when each was first seen. */
  noExecute: Set<string>;
  unreachableAt?: number;
  unreachableTimeAdded?: string;
  leaseRenew?: string;
  leaseRenewMs?: number;
  leaseSeenAt?: number;
  renewalsByPhase: Record<Phase, number>;
  /** Longest time between two consecutive renewTimes, in the healthy and detection phases. */
  maxRenewGapMs: number;
  maxRenewGapAt?: number;
  /** Longest time between two lease events seen here (arrival), same phases. */
  maxSeenGapMs: number;
}

function readyOf(n: Node | undefined): NodeCondition | undefined {
  return n?.status?.conditions?.find((c) => c.type === 'Ready');
}

class FleetWatch {
  readonly tracks = new Map<string, NodeTrack>();
  readonly incidents: Incident[] = [];
  /** Count by phase and group (exact even beyond KEEP incidents kept). */
  readonly incidentCounts = new Map<string, number>();
  /** Distinct nodes with an incident, by phase and group. */
  readonly incidentNodes = new Map<string, Set<string>>();
  phase: Phase = 'start-up';
  readonly registry = new Registry();
  /** Lease event seen here − its renewTime (the agent's clock when it sent the renewal), ms, by phase. */
  readonly leaseDelays: Record<Phase, number[]> = { 'start-up': [], healthy: [], detection: [] };
  private readonly factory: SharedInformerFactory;

  constructor(
    cp: ChildControlPlane,
    private readonly victimPrefix: string,
  ) {
    this.factory = new SharedInformerFactory(cp.client(true), {
      metrics: prometheusReflectorMetrics(this.registry),
    });
    const nodes = this.factory.informerFor('Node');
    const leases = this.factory.informerFor('Lease', { namespace: NODE_LEASE_NAMESPACE });
    nodes.addEventHandler({
      onAdd: (n) => this.onNode(n),
      onUpdate: (_o, n) => this.onNode(n),
      onDelete: (n) => this.incident(this.track(n.metadata!.name!), 'Node deleted'),
    });
    leases.addEventHandler({
      onAdd: (l) => this.onLease(l),
      onUpdate: (_o, l) => this.onLease(l),
    });
  }

  start(): Promise<boolean> {
    this.factory.start();
    return this.factory.waitForCacheSync(60_000);
  }

  stop(): void {
    this.factory.shutdown();
  }

  reflector(): Promise<ReflectorFigures> {
    return reflectorFigures(this.registry);
  }

  /** Distinct nodes with an incident in a phase. */
  count(phase: Phase, group: Group): number {
    return this.incidentNodes.get(`${phase}/${group}`)?.size ?? 0;
  }

  private track(name: string): NodeTrack {
    let t = this.tracks.get(name);
    if (!t) {
      t = {
        name,
        group: name.startsWith(`${this.victimPrefix}-`) ? 'victim' : 'steady',
        firstSeenAt: Date.now(),
        noExecute: new Set(),
        renewalsByPhase: { 'start-up': 0, healthy: 0, detection: 0 },
        maxRenewGapMs: 0,
        maxSeenGapMs: 0,
      };
      this.tracks.set(name, t);
    }
    return t;
  }

  private incident(t: NodeTrack, what: string, ready?: NodeCondition): void {
    const key = `${this.phase}/${t.group}`;
    this.incidentCounts.set(key, (this.incidentCounts.get(key) ?? 0) + 1);
    const nodes = this.incidentNodes.get(key) ?? new Set<string>();
    nodes.add(t.name);
    this.incidentNodes.set(key, nodes);
    if (this.phase !== 'start-up' || what.startsWith('taint'))
      log(
        `${this.phase}: ${t.name} (${t.group}): ${what}; Ready heartbeat ${ready?.lastHeartbeatTime ?? '–'}, ` +
          `transition ${ready?.lastTransitionTime ?? '–'}; last lease renewTime ${t.leaseRenew ?? '–'} ` +
          `(seen ${t.leaseSeenAt ? `${fmt((Date.now() - t.leaseSeenAt) / 1000, 1)} s ago` : 'never'})`,
      );
    if (this.incidents.length >= KEEP) return;
    this.incidents.push({
      node: t.name,
      group: t.group,
      phase: this.phase,
      at: Date.now(),
      what,
      ready,
      leaseRenew: t.leaseRenew,
      leaseSeenAt: t.leaseSeenAt,
    });
  }

  private onNode(n: Node): void {
    const at = Date.now();
    const t = this.track(n.metadata!.name!);
    const ready = readyOf(n);
    const status = ready?.status;
    const expected = t.group === 'victim' && this.phase === 'detection';
    if (status === 'True') {
      t.firstReadyAt ??= at;
      t.lastTrueReady = ready;
    } else if (ready && status !== t.readyStatus) {
      // Ready left True (or a node never Ready was given a verdict by the controller).
      if (t.firstReadyAt !== undefined && t.notReadyAt === undefined) {
        t.notReadyAt = at;
        t.notReadyCondition = ready;
      }
      if (!expected) this.incident(t, `Ready=${status} (${ready.reason ?? 'no reason'})`, ready);
    }
    t.readyStatus = status;
    const noExecute = new Set<string>();
    for (const taint of n.spec?.taints ?? []) {
      if (taint.effect !== 'NoExecute') continue;
      const key = taint.key ?? '';
      noExecute.add(key);
      if (t.noExecute.has(key)) continue;
      if (key === TAINT_UNREACHABLE && t.unreachableAt === undefined) {
        t.unreachableAt = at;
        t.unreachableTimeAdded = taint.timeAdded;
      }
      if (!expected) this.incident(t, `taint ${key}:NoExecute`, ready);
    }
    t.noExecute = noExecute;
  }

  private onLease(l: Lease): void {
    const at = Date.now();
    const t = this.track(l.metadata!.name!);
    const renew = l.spec?.renewTime;
    if (!renew || renew === t.leaseRenew) return;
    const renewMs = Date.parse(renew);
    if (this.phase !== 'start-up' && t.leaseRenewMs !== undefined && t.leaseSeenAt !== undefined) {
      if (renewMs - t.leaseRenewMs > t.maxRenewGapMs) {
        t.maxRenewGapMs = renewMs - t.leaseRenewMs;
        t.maxRenewGapAt = at;
      }
      t.maxSeenGapMs = Math.max(t.maxSeenGapMs, at - t.leaseSeenAt);
    }
    t.renewalsByPhase[this.phase]++;
    this.leaseDelays[this.phase].push(at - renewMs);
    t.leaseRenew = renew;
    t.leaseRenewMs = renewMs;
    t.leaseSeenAt = at;
  }

  /** From now on victims going silent is what is measured: forget anything seen of them before. */
  beginDetection(): void {
    this.phase = 'detection';
    for (const t of this.of('victim')) {
      if (t.readyStatus !== 'True') continue;
      t.notReadyAt = undefined;
      t.notReadyCondition = undefined;
      if (t.noExecute.size === 0) t.unreachableAt = undefined;
    }
  }

  of(group: Group): NodeTrack[] {
    return [...this.tracks.values()].filter((t) => t.group === group);
  }

  readyCount(prefix?: string): number {
    let n = 0;
    for (const t of this.tracks.values())
      if (t.readyStatus === 'True' && (!prefix || t.name.startsWith(`${prefix}-`))) n++;
    return n;
  }
}

// ------------------------------------------------------------------------------ the rest of the machine

/** CPU seconds the whole machine was busy (user, nice, system, irq, softirq, steal), from /proc/stat. */
function machineBusySeconds(): number {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = f;
    return (user + nice + system + irq + softirq + (steal ?? 0)) / 100;
  } catch {
    return NaN;
  }
}

/** Other benchmarks (any `*.bench.ts` or a hollow child but this one), by command line. */
function otherBenchmarks(): string[] {
  const out: string[] = [];
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      try {
        const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
        if (!/\.bench\.ts|hollow-child\.ts/.test(cmd) || cmd.includes('lifecycle.bench.ts')) continue;
        // The innermost node process only (not npm, sh or the tsx wrapper).
        if (
          !cmd.startsWith(process.execPath) ||
          (!cmd.includes('loader.mjs') && !cmd.includes('hollow-child'))
        )
          continue;
        out.push(cmd.replace(/^.*?(test\/bench\/)/, '$1'));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return out;
}

interface MachineSample {
  at: number;
  busy: number;
  load1: number;
  others: string[];
}

/** The machine around the measured processes: every 10 s, its busy CPU, load and other benchmarks. */
class MachineWatch {
  readonly samples: MachineSample[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.sample();
    this.timer = setInterval(() => this.sample(), 10_000);
  }

  sample(): void {
    let load1 = NaN;
    try {
      load1 = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
    } catch {
      // not Linux
    }
    this.samples.push({ at: Date.now(), busy: machineBusySeconds(), load1, others: otherBenchmarks() });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Over [from, to] (ms, Date.now()): busy cores in percent of one core, the highest load, other benchmarks seen. */
  over(from: number, to: number): { busyPct: number; loadMax: number; others: string[] } {
    const s = this.samples.filter((x) => x.at >= from - 5_000 && x.at <= to + 5_000);
    if (s.length < 2) return { busyPct: NaN, loadMax: NaN, others: [] };
    const first = s[0];
    const last = s[s.length - 1];
    return {
      busyPct: ((last.busy - first.busy) / ((last.at - first.at) / 1000)) * 100,
      loadMax: Math.max(...s.map((x) => x.load1)),
      others: [...new Set(s.flatMap((x) => x.others))],
    };
  }
}

// ------------------------------------------------------------------------------ the server's /metrics

type Scrape = Map<string, number>;

async function scrape(port: number): Promise<Scrape> {
  const out: Scrape = new Map();
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    for (const line of (await res.text()).split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const cut = line.lastIndexOf(' ');
      out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
    }
  } catch (err) {
    log(`could not read the server's /metrics: ${(err as Error).message}`);
  }
  return out;
}

const CHECK = 'node_collector_update_all_nodes_health_duration_seconds';

/**
 * The server's /metrics every 10 s: prom-client resets its event-loop delay histogram at each
 * scrape, so each sample is the lag of the 10 s before it — a stalled server shows here.
 */
class ServerMetrics {
  readonly lag: Array<{ at: number; maxMs: number; p99Ms: number }> = [];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly port: number) {
    this.timer = setInterval(() => void this.take(), 10_000);
  }

  async take(): Promise<Scrape> {
    const s = await scrape(this.port);
    const maxMs = (s.get('nodejs_eventloop_lag_max_seconds') ?? NaN) * 1000;
    if (Number.isFinite(maxMs))
      this.lag.push({
        at: Date.now(),
        maxMs,
        p99Ms: (s.get('nodejs_eventloop_lag_p99_seconds') ?? NaN) * 1000,
      });
    return s;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The 10-s windows ending in (from, to]: the worst max and p99, and how many had a max over 1 s. */
  over(
    from: number,
    to: number,
  ): { maxMs: number; worstP99Ms: number; windowsOver1s: number; windows: number } {
    const w = this.lag.filter((x) => x.at > from && x.at <= to);
    return {
      maxMs: w.length ? Math.max(...w.map((x) => x.maxMs)) : NaN,
      worstP99Ms: w.length ? Math.max(...w.map((x) => x.p99Ms)) : NaN,
      windowsOver1s: w.filter((x) => x.maxMs > 1000).length,
      windows: w.length,
    };
  }
}

interface ControllerFigures {
  checks: number;
  meanMs: number;
  /** Checks that took more than 1 s / 5 s (histogram buckets). */
  over1s: number;
  over5s: number;
  evictions: number;
}

/** The controller's figures between two scrapes. */
function controllerFigures(before: Scrape, after: Scrape): ControllerFigures {
  const d = (k: string) => (after.get(k) ?? NaN) - (before.get(k) ?? 0);
  const sumOf = (prefix: string) => {
    let s = 0;
    for (const [k, v] of after) if (k === prefix || k.startsWith(`${prefix}{`)) s += v;
    let b = 0;
    for (const [k, v] of before) if (k === prefix || k.startsWith(`${prefix}{`)) b += v;
    return s - b;
  };
  const checks = d(`${CHECK}_count`);
  return {
    checks,
    meanMs: (d(`${CHECK}_sum`) / checks) * 1000,
    over1s: checks - d(`${CHECK}_bucket{le="1"}`),
    over5s: checks - d(`${CHECK}_bucket{le="5"}`),
    evictions: sumOf('node_collector_evictions_total'),
  };
}

// ------------------------------------------------------------------------------ the run

interface VictimResult {
  name: string;
  killToUnknownMs?: number;
  heartbeatToUnknownMs?: number;
  /** Last heartbeat → the condition's lastTransitionTime (server clock, whole seconds). */
  heartbeatToTransitionMs?: number;
  killToTaintMs?: number;
  unknownToTaintMs?: number;
  lastHeartbeat?: string;
  /** 'lease' or 'status': which of the two was the later heartbeat. */
  heartbeatFrom?: string;
}

/** What happened around the measured processes in a phase. */
interface Around {
  leaseDelay: { n: number; p50: number; p99: number; max: number; over10s: number };
  lag: ReturnType<ServerMetrics['over']>;
  controllerLag: ReturnType<ServerMetrics['over']>;
  machine: ReturnType<MachineWatch['over']>;
  /** CPU of the measured processes (server, agents, bench), percent of one core. */
  oursPct: number;
}

interface Results {
  nodes: number;
  victims: number;
  procs: Array<{ name: string; prefix: string; count: number; group: Group }>;
  /** Joining every node ahead (before the agents start). */
  joinSeconds?: number;
  startupMs?: number;
  /** Per process: spawn → the CLI said every node is started. */
  runningMs: Record<string, number>;
  healthyMs: number;
  healthy: {
    serverReadyAtEnd: number;
    renewals: number;
    expectedRenewals: number;
    maxRenewGapMs: number;
    maxRenewGapNode?: string;
    maxSeenGapMs: number;
    gapsOverLease: number;
    controller?: ControllerFigures;
    around?: Around;
  };
  detection?: {
    killAt: number;
    waitMs: number;
    capped: boolean;
    endedMs: number;
    victims: VictimResult[];
    tainted: number;
    unknown: number;
    firstTaintMs?: number;
    lastTaintMs?: number;
    controller?: ControllerFigures;
    steadyReadyAtEnd: number;
    around?: Around;
  };
  /** Other benchmarks seen at any time during the run. */
  othersSeen: string[];
  /** Other benchmarks seen during start-up. */
  startupOthers?: string[];
  cpu: Record<string, { healthy?: ProcSummary; detection?: ProcSummary }>;
  reflector?: ReflectorFigures;
  notReadyEvents?: { steady: number; victim: number };
  logs: Array<{ name: string; problems: Map<string, number>; byPhase: Record<Phase, number> }>;
  incidents: Incident[];
  incidentCounts: Record<Phase, Record<Group, number>>;
  error?: string;
}

/** What the run started, for the report and the cleanup. */
interface Refs {
  watch?: FleetWatch;
  procs: HollowProc[];
  machine?: MachineWatch;
  controller?: Proc;
}

function check(procs: HollowProc[], controller?: Proc): void {
  if (controller) checkAlive([controller]);
  for (const p of procs) {
    if (p.exit && p.killedAt === undefined)
      throw new Error(
        `${p.name} (kubelab-agent --hollow ${p.count}) exited (code ${p.exit.code}, signal ${p.exit.signal}): ${p.tail.slice(-1500)}`,
      );
  }
}

async function runBench(
  args: Args,
  cleanup: Cleanup,
  tmp: string,
  results: Results,
  ref: Refs,
): Promise<void> {
  const metricsPort = await freePort();
  log(
    'starting kubelab server (SQLite, its in-process controllers at their defaults but the node lifecycle controller)',
  );
  const cp = await startChildControlPlane({
    store: 'sqlite',
    serverArgs: ['--metrics-listen', `127.0.0.1:${metricsPort}`, '--controllers', '*,-nodelifecycle'],
    startTimeoutMs: 120_000,
  });
  cleanup.add('kubelab server', () => cp.stop());
  const serverMetrics = new ServerMetrics(metricsPort);
  cleanup.add('server metrics', () => serverMetrics.stop());

  // The node lifecycle controller in a process of its own, so that its CPU and memory are its own.
  const cmPort = await freePort();
  log(
    'starting the node lifecycle controller: kubelab controller-manager --controllers nodelifecycle --no-leader-elect',
  );
  const controller = startProc(
    'controller',
    [
      join(REPO_ROOT, 'bin/kubelab.mjs'),
      'controller-manager',
      '--server',
      `https://${cp.server}`,
      '--token-file',
      join(cp.dataDir, 'admin.token'),
      '--ca-file',
      join(cp.dataDir, 'pki', 'ca.crt'),
      '--controllers',
      'nodelifecycle',
      '--no-leader-elect',
      '--metrics-listen',
      `127.0.0.1:${cmPort}`,
      '--log-level',
      'warn',
    ],
    /kubelab controller-manager .*against/,
  );
  ref.controller = controller;
  cleanup.add('node lifecycle controller', () => controller.stop());
  for (let waited = 0; controller.upAt === undefined; waited += 250) {
    checkAlive([controller]);
    if (waited > 60_000) throw new Error('the controller-manager did not start within 60 s');
    await sleep(250);
  }
  const controllerMetrics = new ServerMetrics(cmPort);
  cleanup.add('controller metrics', () => controllerMetrics.stop());
  const machineWatch = new MachineWatch();
  ref.machine = machineWatch;
  cleanup.add('machine watch', () => machineWatch.stop());

  const tokens = new TokensClient({ server: `https://${cp.server}`, token: cp.token, caPem: cp.caPem });
  const joinToken = (await tokens.create({ description: 'bench:lifecycle' })).token!;
  tokens.close();

  const watch = new FleetWatch(cp, VICTIM_PREFIX);
  ref.watch = watch;
  cleanup.add('informers', () => watch.stop());
  if (!(await watch.start())) throw new Error('the Node and Lease informers did not sync within 60 s');

  const sampler = new ProcSampler(
    new Map([
      ['server', cp.pid],
      ['controller', controller.pid],
    ]),
    args.intervalMs,
  );
  cleanup.add('sampler', () => sampler.stop());
  sampler.add('bench', process.pid);

  // The steady fleet split over a few processes, and the victims in one of their own, joined
  // ahead so that the agents start from stored credentials at once.
  const steady = args.nodes - args.victims;
  const groups = [
    ...Array.from({ length: args.steadyProcesses }, (_, i) => ({
      prefix: `steady-${String.fromCharCode(97 + i)}`,
      group: 'steady' as Group,
      count: Math.floor(steady / args.steadyProcesses) + (i < steady % args.steadyProcesses ? 1 : 0),
    })),
    { prefix: VICTIM_PREFIX, group: 'victim' as Group, count: args.victims },
  ];
  const j = await joinAhead(
    `https://${cp.server}`,
    joinToken,
    groups.flatMap((g) =>
      Array.from({ length: g.count }, (_, i) => ({ dataDir: join(tmp, g.prefix), node: `${g.prefix}-${i}` })),
    ),
    args.joinConcurrency,
  );
  results.joinSeconds = j.seconds;
  const procs = ref.procs;
  const t0 = Date.now();
  for (const g of groups)
    procs.push(startHollow(g.prefix, g.prefix, g.group, g.count, cp, join(tmp, g.prefix), () => watch.phase));
  const victim = procs.find((p) => p.group === 'victim')!;
  for (const p of procs) {
    cleanup.add(p.name, () => p.stop());
    sampler.add(p.name, p.pid);
    results.procs.push({ name: p.name, prefix: p.prefix, count: p.count, group: p.group });
  }
  log(
    `started ${procs.map((p) => `${p.name} (${p.count})`).join(', ')}: ${fmt(args.nodes, 0)} hollow nodes; waiting for every node to be Ready`,
  );

  // ---- start-up: every node Ready.
  // Each process joins its nodes one at a time (~0.3–0.6 s each here): allow for it.
  const startupTimeout = 5 * 60_000 + args.nodes * 600;
  let lastLog = 0;
  for (;;) {
    check(procs, controller);
    const ready = watch.readyCount();
    const now = Date.now();
    if (ready >= args.nodes && procs.every((p) => p.runningAt !== undefined)) break;
    if (now - t0 > startupTimeout)
      throw new Error(
        `only ${ready} of ${args.nodes} nodes were Ready after ${fmt(startupTimeout / 1000, 0)} s`,
      );
    if (now - lastLog >= 10_000) {
      lastLog = now;
      log(
        `start-up: ${fmt((now - t0) / 1000, 0)} s: Ready ${ready}/${args.nodes} (` +
          procs
            .map(
              (p) =>
                `${p.name} ${watch.readyCount(p.prefix)}/${p.count}${p.runningAt !== undefined ? ' all started' : ''}`,
            )
            .join(', ') +
          `); ${watch.tracks.size} nodes registered; server CPU ${fmt(sampler.summary('server', sampler.elapsed() - 10_000)?.cpuPct ?? NaN, 0)} %`,
      );
    }
    await sleep(500);
  }
  results.startupMs = Date.now() - t0;
  results.startupOthers = machineWatch.over(t0, Date.now()).others;
  for (const p of procs) results.runningMs[p.name] = (p.runningAt ?? NaN) - t0;
  log(
    `every node Ready ${fmt(results.startupMs / 1000, 1)} s after the agents started; healthy phase of ${fmt(args.durationMs / 60_000, 1)} min`,
  );

  // ---- healthy phase.
  watch.phase = 'healthy';
  const healthyStart = Date.now();
  sampler.sample();
  const healthyFrom = sampler.elapsed();
  const scrape0 = await controllerMetrics.take();
  const around = (phase: Phase, from: number, to: number, sFrom: number, sTo: number): Around => {
    machineWatch.sample();
    const delays = sortedCopy(watch.leaseDelays[phase]);
    let ours = 0;
    for (const name of sampler.samples.keys()) ours += sampler.summary(name, sFrom, sTo)?.cpuPct ?? 0;
    return {
      leaseDelay: {
        n: delays.length,
        p50: percentileSorted(delays, 50),
        p99: percentileSorted(delays, 99),
        max: delays.length ? delays[delays.length - 1] : NaN,
        over10s: delays.filter((x) => x > 10_000).length,
      },
      lag: serverMetrics.over(from, to),
      controllerLag: controllerMetrics.over(from, to),
      machine: machineWatch.over(from, to),
      oursPct: ours,
    };
  };
  const healthyRenewals = () => {
    let n = 0;
    for (const t of watch.tracks.values()) n += t.renewalsByPhase.healthy;
    return n;
  };
  lastLog = Date.now();
  while (Date.now() - healthyStart < args.durationMs) {
    check(procs, controller);
    await sleep(Math.min(1000, Math.max(0, args.durationMs - (Date.now() - healthyStart))));
    if (Date.now() - lastLog >= 60_000) {
      lastLog = Date.now();
      const cpu = sampler.summary('server', sampler.elapsed() - 60_000);
      const m = machineWatch.over(Date.now() - 60_000, Date.now());
      const others = m.others.length ? `; OTHER BENCHMARKS RUNNING: ${m.others.join(' | ')}` : '';
      log(
        `healthy: ${fmt((Date.now() - healthyStart) / 60_000, 1)} min: Ready ${watch.readyCount()}/${args.nodes}; ` +
          `false positives ${watch.count('healthy', 'steady') + watch.count('healthy', 'victim')}; ` +
          `lease renewals ${healthyRenewals()}; server CPU ${fmt(cpu?.cpuPct ?? NaN, 0)} %, RSS ${fmt((cpu?.rssMax ?? NaN) / MiB, 0)} MiB, ` +
          `loop lag max ${fmt(serverMetrics.over(Date.now() - 60_000, Date.now()).maxMs, 0)} ms; machine busy ${fmt(m.busyPct, 0)} %, load ${fmt(m.loadMax, 1)}${others}`,
      );
    }
  }
  sampler.sample();
  const healthyTo = sampler.elapsed();
  const scrape1 = await controllerMetrics.take();
  results.healthyMs = Date.now() - healthyStart;
  {
    let renewals = 0;
    let maxRenewGapMs = 0;
    let maxRenewGapNode: string | undefined;
    let maxSeenGapMs = 0;
    let gapsOverLease = 0;
    for (const t of watch.tracks.values()) {
      renewals += t.renewalsByPhase.healthy;
      if (t.maxRenewGapMs > maxRenewGapMs) {
        maxRenewGapMs = t.maxRenewGapMs;
        maxRenewGapNode = t.name;
      }
      maxSeenGapMs = Math.max(maxSeenGapMs, t.maxSeenGapMs);
      if (t.maxRenewGapMs > AGENT.leaseDurationSeconds * 1000) gapsOverLease++;
    }
    results.healthy = {
      serverReadyAtEnd: watch.readyCount(),
      renewals,
      expectedRenewals: (args.nodes * results.healthyMs) / AGENT.leaseRenewMs,
      maxRenewGapMs,
      maxRenewGapNode,
      maxSeenGapMs,
      gapsOverLease,
      controller: controllerFigures(scrape0, scrape1),
      around: around('healthy', healthyStart, Date.now(), healthyFrom, healthyTo),
    };
  }
  for (const p of procs) results.cpu[p.name] = { healthy: sampler.summary(p.name, healthyFrom, healthyTo) };
  for (const name of ['controller', 'server', 'bench'])
    results.cpu[name] = { healthy: sampler.summary(name, healthyFrom, healthyTo) };
  log(
    `healthy phase over: false positives ${watch.count('healthy', 'steady') + watch.count('healthy', 'victim')}, ` +
      `longest lease renewal gap ${fmt(results.healthy.maxRenewGapMs / 1000, 1)} s; killing ${victim.name} (${victim.count} nodes)`,
  );

  // ---- detection: SIGKILL the victims.
  watch.beginDetection();
  const victims = watch.of('victim');
  const killAt = Date.now();
  victim.killedAt = killAt;
  victim.child.kill('SIGKILL');
  await victim.exited;
  const detectFrom = sampler.elapsed();
  // Nothing can renew now: the server's leases hold each victim's last heartbeat.
  await sleep(2000);
  const admin = cp.client();
  const leases = new Map(
    (await admin.list('Lease', { namespace: NODE_LEASE_NAMESPACE })).items.map((l) => [
      l.metadata!.name!,
      l.spec?.renewTime,
    ]),
  );
  const waitMs = Math.min(args.taintWaitMs ?? Infinity, fullTaintWaitMs(victims.length));
  const capped = args.taintWaitMs !== undefined && args.taintWaitMs < fullTaintWaitMs(victims.length);
  log(
    `killed at ${new Date(killAt).toISOString()}; waiting up to ${fmt(waitMs / 1000, 0)} s for every victim to be Unknown and tainted` +
      (capped
        ? ` (capped by --taint-wait; ${fmt(fullTaintWaitMs(victims.length) / 1000, 0)} s would let every taint out)`
        : ''),
  );
  lastLog = Date.now();
  for (;;) {
    check(procs, controller);
    const unknown = victims.filter((t) => t.notReadyAt !== undefined).length;
    const tainted = victims.filter((t) => t.unreachableAt !== undefined).length;
    if (tainted === victims.length && unknown === victims.length) break;
    if (Date.now() - killAt >= waitMs) break;
    if (Date.now() - lastLog >= 30_000) {
      lastLog = Date.now();
      log(
        `detection: ${fmt((Date.now() - killAt) / 1000, 0)} s after the kill: ${unknown}/${victims.length} victims Unknown, ` +
          `${tainted} tainted unreachable:NoExecute; steady Ready ${watch.readyCount() - victims.filter((t) => t.readyStatus === 'True').length}/${args.nodes - args.victims}; ` +
          `false positives ${watch.count('detection', 'steady')}`,
      );
    }
    await sleep(250);
  }
  sampler.sample();
  const detectTo = sampler.elapsed();
  const scrape2 = await controllerMetrics.take();
  const nodesNow = new Map((await admin.list('Node')).items.map((n) => [n.metadata!.name!, n]));

  const victimResults: VictimResult[] = victims.map((t) => {
    const r: VictimResult = { name: t.name };
    const leaseMs = Date.parse(leases.get(t.name) ?? t.leaseRenew ?? '');
    // Unknown keeps the heartbeat the node last posted.
    const statusBeat = t.notReadyCondition?.lastHeartbeatTime ?? t.lastTrueReady?.lastHeartbeatTime;
    const statusMs = Date.parse(statusBeat ?? '');
    const beatMs = Math.max(
      Number.isFinite(leaseMs) ? leaseMs : -Infinity,
      Number.isFinite(statusMs) ? statusMs : -Infinity,
    );
    if (Number.isFinite(beatMs)) {
      r.lastHeartbeat = new Date(beatMs).toISOString();
      r.heartbeatFrom = beatMs === leaseMs ? 'lease' : 'status';
    }
    if (t.notReadyAt !== undefined) {
      r.killToUnknownMs = t.notReadyAt - killAt;
      if (Number.isFinite(beatMs)) {
        r.heartbeatToUnknownMs = t.notReadyAt - beatMs;
        const transition = Date.parse(t.notReadyCondition?.lastTransitionTime ?? '');
        if (Number.isFinite(transition)) r.heartbeatToTransitionMs = transition - beatMs;
      }
    }
    if (t.unreachableAt !== undefined) {
      r.killToTaintMs = t.unreachableAt - killAt;
      if (t.notReadyAt !== undefined) r.unknownToTaintMs = t.unreachableAt - t.notReadyAt;
    }
    return r;
  });
  const taintTimes = victims
    .map((t) => t.unreachableAt)
    .filter((x): x is number => x !== undefined)
    .sort((a, b) => a - b);
  results.detection = {
    killAt,
    waitMs,
    capped,
    endedMs: Date.now() - killAt,
    victims: victimResults,
    unknown: victims.filter((t) => t.notReadyAt !== undefined).length,
    tainted: taintTimes.length,
    firstTaintMs: taintTimes.length ? taintTimes[0] - killAt : undefined,
    lastTaintMs: taintTimes.length ? taintTimes[taintTimes.length - 1] - killAt : undefined,
    controller: controllerFigures(scrape1, scrape2),
    around: around('detection', killAt, Date.now(), detectFrom, detectTo),
    steadyReadyAtEnd: [...nodesNow.values()].filter(
      (n) => !n.metadata!.name!.startsWith(`${VICTIM_PREFIX}-`) && readyOf(n)?.status === 'True',
    ).length,
  };
  for (const name of [
    ...procs.filter((p) => p !== victim).map((p) => p.name),
    'controller',
    'server',
    'bench',
  ])
    (results.cpu[name] ??= {}).detection = sampler.summary(name, detectFrom, detectTo);

  // The controller's NodeNotReady events: a second witness beside the watch.
  try {
    const counts = { steady: 0, victim: 0 };
    for (const e of (await admin.list('Event')).items) {
      if (e.reason !== 'NodeNotReady') continue;
      const group = e.involvedObject?.name?.startsWith(`${VICTIM_PREFIX}-`) ? 'victim' : 'steady';
      counts[group] += e.count ?? 1;
    }
    results.notReadyEvents = counts;
  } catch (err) {
    log(`could not list events: ${(err as Error).message}`);
  }
  results.reflector = await watch.reflector();
  const d = results.detection;
  log(
    `detection over: ${d.unknown}/${victims.length} Unknown, ${d.tainted}/${victims.length} tainted in ${fmt(d.endedMs / 1000, 0)} s; ` +
      `false positives during detection ${watch.count('detection', 'steady')}`,
  );
}

// ------------------------------------------------------------------------------ the report

function stats(values: Array<number | undefined>): { n: number; p50: number; max: number; min: number } {
  const v = sortedCopy(values.filter((x): x is number => x !== undefined && Number.isFinite(x)));
  return {
    n: v.length,
    p50: percentileSorted(v, 50),
    max: v.length ? v[v.length - 1] : NaN,
    min: v.length ? v[0] : NaN,
  };
}

const s1 = (ms: number | undefined) => (ms === undefined ? 'n/a' : `${fmt(ms / 1000, 1)} s`);
/** Milliseconds under a second, seconds above. */
const dur = (ms: number) => (Math.abs(ms) < 1000 ? `${fmt(ms, 0)} ms` : s1(ms));
const pct = (p: number | undefined) => (p === undefined ? 'n/a' : `${fmt(p, Math.abs(p) < 1 ? 2 : 1)} %`);
const mib = (b: number | undefined) => (b === undefined ? 'n/a' : `${fmt(b / MiB, 0)} MiB`);

function goalRow(what: string, value: string, goal: string, pass: boolean | undefined): string[] {
  return [what, value, goal, pass === undefined ? 'n/a' : pass ? 'PASS' : '**MISS**'];
}

/** Lease delivery, server stalls and the rest of the machine in a phase, as table rows. */
function aroundRows(a: Around | undefined): string[][] {
  if (!a) return [];
  const others = a.machine.others;
  return [
    [
      'lease events: seen by the bench − renewTime (the renewal written, stored and delivered), p50 / p99 / max; over 10 s',
      `${dur(a.leaseDelay.p50)} / ${dur(a.leaseDelay.p99)} / ${dur(a.leaseDelay.max)}; ${fmt(a.leaseDelay.over10s, 0)} of ${fmt(a.leaseDelay.n, 0)}`,
    ],
    [
      "server event-loop delay in 10 s windows (prom-client's): worst max / worst p99; windows with a stall over 1 s",
      `${fmt(a.lag.maxMs, 0)} ms / ${fmt(a.lag.worstP99Ms, 0)} ms; ${a.lag.windowsOver1s} of ${a.lag.windows}`,
    ],
    [
      "the controller's event-loop delay in 10 s windows: worst max / worst p99; windows with a stall over 1 s",
      `${fmt(a.controllerLag.maxMs, 0)} ms / ${fmt(a.controllerLag.worstP99Ms, 0)} ms; ${a.controllerLag.windowsOver1s} of ${a.controllerLag.windows}`,
    ],
    [
      'machine CPU busy (/proc/stat) / used by the measured processes / by everything else; highest 1-min load',
      `${pct(a.machine.busyPct)} / ${pct(a.oursPct)} / ${pct(a.machine.busyPct - a.oursPct)}; ${fmt(a.machine.loadMax, 1)}`,
    ],
    ['other benchmarks running', others.length ? `**${others.map((o) => `\`${o}\``).join(', ')}**` : 'none'],
  ];
}

function render(machine: MachineInfo, args: Args, r: Results, started: Date, seconds: number): string {
  const out: string[] = [];
  const others = (a: Around | undefined) => (a ? a.machine.busyPct - a.oursPct : 0);
  const othersPct = Math.max(0, others(r.healthy.around), others(r.detection?.around));
  const fp = (phase: Phase, group?: Group) =>
    group ? r.incidentCounts[phase][group] : r.incidentCounts[phase].steady + r.incidentCounts[phase].victim;
  out.push(
    `## ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — node lifecycle (\`npm run bench:lifecycle\`)`,
  );
  out.push('');
  out.push(
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${fmt(machine.ramGiB, 1)} GiB RAM, ${machine.os}; Node ${machine.node}. ` +
      `kubelab ${machine.commit}. Whole run: ${fmt(seconds / 60, 1)} min. CPU in percent of one core; MiB = 2^20 bytes. ` +
      (othersPct >= 10
        ? `**The machine was shared: processes this benchmark did not start used up to ${fmt(othersPct, 0)} % of a core on average ` +
          'over a phase (the "everything else" rows), so heartbeats and checks competed with them for the cores.** '
        : '') +
      (args.durationMs === DEFAULT_DURATION_MS && args.victims === DEFAULT_VICTIMS
        ? 'Shortened to fit 15 minutes: a 5-minute healthy phase and 20 victims (`--duration 10m --victims 50` for the long run, ~25 min). '
        : '') +
      changedNote(machine),
  );
  out.push('');
  if (r.othersSeen.length) {
    out.push(
      `**Other benchmarks ran on this machine during the run, so every figure below is skewed by their load: ${r.othersSeen
        .map((o) => `\`${o}\``)
        .join(', ')}.**`,
    );
    out.push('');
  }
  out.push(
    "Settings: `kubelab server` (SQLite, its in-process controllers but the node lifecycle controller: `--controllers '*,-nodelifecycle'`) " +
      'in a child process on 127.0.0.1, and the node lifecycle controller in a process of its own, `kubelab controller-manager ' +
      `--controllers nodelifecycle --no-leader-elect\` (gRPC, TLS, admin token) with no controller flags: --node-monitor-period ${PERIOD_MS / 1000}s ` +
      `--node-monitor-grace-period ${GRACE_MS / 1000}s --node-startup-grace-period ${LIFECYCLE.startupGracePeriodMs / 1000}s ` +
      `--node-eviction-rate ${LIFECYCLE.evictionRate} — so that its CPU and memory are its own (in \`kubelab server\`, the default, it shares ` +
      "the server's process and reads the watch cache's objects without decoding them). " +
      `${fmt(r.nodes, 0)} hollow nodes in ` +
      `${r.procs.length} \`kubelab-agent --hollow N\` child processes (${r.procs.map((p) => `\`--hollow-prefix ${p.prefix}\` ${fmt(p.count, 0)}`).join(', ')}) ` +
      `at the agent's defaults (lease renewed every ${AGENT.leaseRenewMs / 1000} s, ${AGENT.leaseDurationSeconds} s duration; ` +
      `status computed every ${AGENT.statusUpdateMs / 1000} s, written on change or every ${AGENT.statusReportMs / 60_000} min), ` +
      `one join token from the Tokens service, every node joined ahead (${args.joinConcurrency} at a time${r.joinSeconds !== undefined ? `, ${s1(r.joinSeconds * 1000)}` : ''}) so that the agents start ` +
      'from stored credentials; one zone (no topology labels). The bench watches Nodes and Leases through a Node and a ' +
      'Lease informer over gRPC (a connection of its own); times are when its handlers saw the change. ' +
      `Command: \`npm run bench:lifecycle${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`.`,
  );
  out.push('');
  if (r.startupMs !== undefined)
    out.push(
      `Start-up: every node Ready ${s1(r.startupMs)} after the agents were spawned (each process starts its nodes over 10 s; ` +
        `all started: ${Object.entries(r.runningMs)
          .map(([k, v]) => `${k} ${s1(v)}`)
          .join(', ')}). Incidents during start-up (not counted below): ${fp('start-up')}.` +
        (r.startupOthers?.length
          ? ` **Other benchmarks were running during start-up: ${r.startupOthers.map((o) => `\`${o}\``).join(', ')}.**`
          : ''),
    );
  out.push('');

  // ---- healthy phase
  const h = r.healthy;
  out.push(`### Healthy phase (${fmt(r.healthyMs / 60_000, 1)} min, every node heartbeating)`);
  out.push('');
  const c = h.controller;
  const rows: string[][] = [
    ['nodes whose Ready left True (false positives)', `**${fmt(fp('healthy'), 0)}**`],
    [
      'NoExecute taints seen (false positives; included above)',
      fmt(r.incidents.filter((i) => i.phase === 'healthy' && i.what.startsWith('taint')).length, 0),
    ],
    ['nodes Ready at the end (watch)', `${fmt(h.serverReadyAtEnd, 0)} / ${fmt(r.nodes, 0)}`],
    [
      'lease renewals seen / expected (N × window ÷ 10 s)',
      `${fmt(h.renewals, 0)} / ${fmt(h.expectedRenewals, 0)} (${fmt((100 * h.renewals) / h.expectedRenewals, 1)} %)`,
    ],
    [
      'longest gap between two renewTimes of one node',
      `${s1(h.maxRenewGapMs)} (${h.maxRenewGapNode ?? '–'}); over the ${AGENT.leaseDurationSeconds} s lease: ${h.gapsOverLease} nodes; grace ${GRACE_MS / 1000} s`,
    ],
    ['longest gap between two lease events seen by the bench', s1(h.maxSeenGapMs)],
    [
      'node lifecycle checks (every node, every 5 s): count, mean duration, over 1 s / 5 s',
      c ? `${fmt(c.checks, 0)}, ${fmt(c.meanMs, 1)} ms, ${c.over1s} / ${c.over5s}` : 'n/a',
    ],
    ...aroundRows(h.around),
  ];
  out.push(table(['figure', 'value'], ['l', 'r'], rows));
  out.push('');
  out.push(`Processes over the healthy phase (/proc every ${fmt(args.intervalMs / 1000, 0)} s):`);
  out.push('');
  const procRows = Object.entries(r.cpu).map(([name, v]) => [
    name === 'bench'
      ? 'bench (informers)'
      : name === 'server'
        ? 'kubelab server (apiserver, store, the other controllers)'
        : name === 'controller'
          ? '**node lifecycle controller** (`kubelab controller-manager --controllers nodelifecycle`)'
          : `${name} (${r.procs.find((p) => p.name === name)?.count ?? '?'} nodes)`,
    pct(v.healthy?.cpuPct),
    mib(v.healthy?.rssMedian),
    mib(v.healthy?.rssMax),
    pct(v.detection?.cpuPct),
  ]);
  out.push(
    table(
      ['process', 'CPU', 'RSS median', 'RSS max', 'CPU during detection'],
      ['l', 'r', 'r', 'r', 'r'],
      procRows,
    ),
  );
  out.push('');

  // ---- detection
  const d = r.detection;
  if (d) {
    const n = d.victims.length;
    out.push(`### Detection: the victim process (${n} nodes) SIGKILLed`);
    out.push('');
    out.push(
      `After the kill the phase lasted ${s1(d.endedMs)} (limit ${s1(d.waitMs)}${d.capped ? ', capped by --taint-wait' : `: grace + period + victims ÷ ${LIFECYCLE.evictionRate}/s + 60 s`}). ` +
        `Last heartbeat = the victim's Lease renewTime as the server kept it after the kill (set by the agent when it sends the renewal), or its Ready ` +
        `condition's heartbeat if later. Seen = when the bench's informer delivered the change. The Unknown transition time is the ` +
        `controller's own stamp on the condition (whole seconds, rounded down). The later heartbeat was the lease's for ` +
        `${d.victims.filter((v) => v.heartbeatFrom === 'lease').length} of ${n} victims; kill − last heartbeat: ` +
        `${s1(stats(d.victims.map((v) => (v.lastHeartbeat ? d.killAt - Date.parse(v.lastHeartbeat) : undefined))).min)} to ` +
        `${s1(stats(d.victims.map((v) => (v.lastHeartbeat ? d.killAt - Date.parse(v.lastHeartbeat) : undefined))).max)}.`,
    );
    out.push('');
    const a = stats(d.victims.map((v) => v.killToUnknownMs));
    const b = stats(d.victims.map((v) => v.heartbeatToUnknownMs));
    const bt = stats(d.victims.map((v) => v.heartbeatToTransitionMs));
    const t = stats(d.victims.map((v) => v.killToTaintMs));
    const ut = stats(d.victims.map((v) => v.unknownToTaintMs));
    const row = (what: string, s: ReturnType<typeof stats>, vs: boolean) => [
      what,
      `${s.n} / ${n}`,
      s1(s.min),
      `**${s1(s.p50)}**`,
      `**${s1(s.max)}**`,
      vs ? `${fmt(s.p50 / 1000 - GRACE_MS / 1000, 1)} / ${fmt(s.max / 1000 - GRACE_MS / 1000, 1)} s` : '–',
      vs ? (s.n ? (s.max <= BOUND_MS ? 'yes' : 'no') : 'n/a') : '–',
    ];
    out.push(
      table(
        [
          'measure',
          'victims',
          'min',
          'p50',
          'max',
          'p50 / max − grace',
          `max ≤ grace + period (${BOUND_MS / 1000} s)`,
        ],
        ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
        [
          row('(a) kill → Ready=Unknown seen', a, true),
          row('(b) last heartbeat → Ready=Unknown seen', b, true),
          row("(b') last heartbeat → the condition's lastTransitionTime (server)", bt, true),
          row(`(c) kill → ${TAINT_UNREACHABLE}:NoExecute seen (rate-limited)`, t, false),
          row('Ready=Unknown seen → taint seen', ut, false),
        ],
      ),
    );
    out.push('');
    const spread =
      d.firstTaintMs !== undefined && d.lastTaintMs !== undefined ? d.lastTaintMs - d.firstTaintMs : NaN;
    out.push(
      `Taints: ${d.tainted} of ${n} victims tainted within the phase, the first ${s1(d.firstTaintMs)} and the last ${s1(d.lastTaintMs)} after the kill ` +
        (d.tainted > 1
          ? `(${fmt((d.tainted - 1) / (spread / 1000), 3)} nodes/s between them; the zone's rate is ${LIFECYCLE.evictionRate}/s with a burst of 1, ` +
            `so ${n} victims take ~${fmt((n - 1) / LIFECYCLE.evictionRate, 0)} s after the first). `
          : '. ') +
        `Controller: ${d.controller ? `${fmt(d.controller.evictions, 0)} NoExecute taints counted, checks ${fmt(d.controller.meanMs, 1)} ms on average (${d.controller.over1s} over 1 s)` : 'n/a'}. ` +
        `Steady nodes during detection: ${fmt(fp('detection', 'steady'), 0)} false positives; ${fmt(d.steadyReadyAtEnd, 0)} / ${fmt(r.nodes - r.victims, 0)} Ready at the end (server).`,
    );
    out.push('');
    if (d.around) {
      out.push(table(['during detection', 'value'], ['l', 'r'], aroundRows(d.around)));
      out.push('');
    }
  }

  // ---- the rest
  const notes: string[] = [];
  if (r.notReadyEvents)
    notes.push(
      `NodeNotReady events from the controller over the run: ${r.notReadyEvents.steady} for steady nodes, ${r.notReadyEvents.victim} for victims.`,
    );
  if (r.reflector)
    notes.push(
      `Bench informers: ${r.reflector.lists} lists, ${r.reflector.relists} relists, ${r.reflector.watches} watches, ` +
        `${r.reflector.failures} watch failures, ${fmt(r.reflector.events, 0)} events (a relist could hide a short-lived change; 0 means none was missed).`,
    );
  for (const l of r.logs) {
    const total = [...l.problems.values()].reduce((x, y) => x + y, 0);
    if (!total) continue;
    notes.push(
      `${l.name} logged ${total} lines at warn or above (start-up ${l.byPhase['start-up']}, healthy ${l.byPhase.healthy}, detection ${l.byPhase.detection}): ` +
        [...l.problems.entries()]
          .sort((x, y) => y[1] - x[1])
          .slice(0, 4)
          .map(([k, v]) => `${v}× ${k}`)
          .join('; ') +
        '.',
    );
  }
  if (!notes.some((x) => x.includes('logged'))) notes.push('The agents logged nothing at warn or above.');
  out.push(notes.join(' '));
  out.push('');

  const fps = r.incidents.filter((i) => i.phase !== 'start-up');
  if (fps.length) {
    out.push(`False positives (first ${Math.min(fps.length, 20)}):`);
    out.push('');
    out.push(
      table(
        ['node', 'phase', 'seen', 'what', 'Ready heartbeat / transition', 'last lease renewTime (seen at)'],
        ['l', 'l', 'l', 'l', 'l', 'l'],
        fps
          .slice(0, 20)
          .map((i) => [
            i.node,
            i.phase,
            new Date(i.at).toISOString().slice(11, 23),
            i.what,
            `${i.ready?.lastHeartbeatTime ?? '–'} / ${i.ready?.lastTransitionTime ?? '–'}`,
            `${i.leaseRenew ?? '–'} (${i.leaseSeenAt ? new Date(i.leaseSeenAt).toISOString().slice(11, 23) : '–'})`,
          ]),
      ),
    );
    out.push('');
  }
  if (r.error) {
    out.push(`**The run failed: ${r.error}**`);
    out.push('');
  }

  // ---- targets
  out.push('### Targets');
  out.push('');
  const goals: string[][] = [];
  const allFp = fp('healthy') + fp('detection', 'steady');
  goals.push(
    goalRow(
      `false positives: nodes marked NotReady/Unknown or tainted NoExecute while heartbeating (healthy phase, and steady nodes during detection)`,
      fmt(allFp, 0),
      '= 0',
      r.healthyMs > 0 ? allFp === 0 : undefined,
    ),
  );
  const cc = r.cpu.controller;
  goals.push([
    `node lifecycle controller CPU with ${fmt(r.nodes, 0)} nodes (own process): healthy phase / detection; RSS max`,
    `${pct(cc?.healthy?.cpuPct)} / ${pct(cc?.detection?.cpuPct)} of a core; ${mib(cc?.healthy?.rssMax)}`,
    '– (no goal set)',
    '–',
  ]);
  if (d) {
    const a = stats(d.victims.map((v) => v.killToUnknownMs));
    const b = stats(d.victims.map((v) => v.heartbeatToUnknownMs));
    const n = d.victims.length;
    const all = a.n === n;
    goals.push(goalRow('victims detected (Ready=Unknown)', `${a.n} / ${n}`, `= ${n}`, all));
    goals.push(
      goalRow('(a) kill → Unknown seen, p50', s1(a.p50), `≤ ${BOUND_MS / 1000} s`, all && a.p50 <= BOUND_MS),
    );
    goals.push(
      goalRow('(a) kill → Unknown seen, max', s1(a.max), `≤ ${BOUND_MS / 1000} s`, all && a.max <= BOUND_MS),
    );
    goals.push(
      goalRow(
        '(b) last heartbeat → Unknown seen, p50',
        s1(b.p50),
        `≤ ${BOUND_MS / 1000} s`,
        all && b.p50 <= BOUND_MS,
      ),
    );
    goals.push(
      goalRow(
        '(b) last heartbeat → Unknown seen, max',
        s1(b.max),
        `≤ ${BOUND_MS / 1000} s`,
        all && b.max <= BOUND_MS,
      ),
    );
    goals.push(
      goalRow(
        '(b) never before the grace period (no victim marked early)',
        s1(b.min),
        `≥ ${GRACE_MS / 1000} s`,
        b.n ? b.min >= GRACE_MS : undefined,
      ),
    );
    goals.push(
      goalRow(
        `(c) every victim tainted ${TAINT_UNREACHABLE}:NoExecute (at ${LIFECYCLE.evictionRate}/s)`,
        `${d.tainted} / ${n}${d.capped ? ' (phase capped)' : ''}`,
        `= ${n}`,
        d.capped && d.tainted < n ? undefined : d.tainted === n,
      ),
    );
    if (d.tainted > 1 && d.firstTaintMs !== undefined && d.lastTaintMs !== undefined) {
      const rate = (d.tainted - 1) / ((d.lastTaintMs - d.firstTaintMs) / 1000);
      goals.push(
        goalRow(
          '(c) eviction (taint) rate between the first and the last victim tainted',
          `${fmt(rate, 3)} nodes/s`,
          `${LIFECYCLE.evictionRate}/s ± 20 % (the zone's rate)`,
          Math.abs(rate - LIFECYCLE.evictionRate) <= 0.2 * LIFECYCLE.evictionRate,
        ),
      );
    }
  }
  out.push(table(['target', 'value', 'goal', 'result'], ['l', 'r', 'l', 'l'], goals));
  return out.join('\n') + '\n';
}

// ------------------------------------------------------------------------------ main

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = new Date();
  const t0 = nowMs();
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
  const budget =
    10 * 60_000 +
    args.nodes * 600 +
    args.durationMs +
    Math.min(args.taintWaitMs ?? Infinity, fullTaintWaitMs(args.victims));
  const watchdog = setTimeout(
    () => fail(`the benchmark took more than ${fmt(budget / 60_000, 0)} minutes; giving up`, 1),
    budget,
  );
  if (args.victims / args.nodes >= LIFECYCLE.unhealthyZoneThreshold)
    log(
      `note: ${args.victims} of ${args.nodes} nodes down makes the zone partially disrupted: tainting slows down or stops`,
    );

  const tmp = mkdtempSync(join(tmpdir(), 'kubelab-bench-lifecycle-'));
  cleanup.add('temp folder', () => rmSync(tmp, { recursive: true, force: true }));
  const machine = await machineInfo('', REPO_ROOT);
  const results: Results = {
    nodes: args.nodes,
    victims: args.victims,
    procs: [],
    runningMs: {},
    healthyMs: 0,
    healthy: {
      serverReadyAtEnd: 0,
      renewals: 0,
      expectedRenewals: NaN,
      maxRenewGapMs: NaN,
      maxSeenGapMs: NaN,
      gapsOverLease: 0,
    },
    cpu: {},
    othersSeen: [],
    logs: [],
    incidents: [],
    incidentCounts: {
      'start-up': { steady: 0, victim: 0 },
      healthy: { steady: 0, victim: 0 },
      detection: { steady: 0, victim: 0 },
    },
  };
  const ref: Refs = { procs: [] };
  try {
    await runBench(args, cleanup, tmp, results, ref);
  } catch (err) {
    results.error = (err as Error).message;
    log(`failed: ${results.error}`);
  } finally {
    clearTimeout(watchdog);
    const w = ref.watch;
    if (w) {
      results.incidents = w.incidents;
      for (const phase of ['start-up', 'healthy', 'detection'] as Phase[])
        for (const group of ['steady', 'victim'] as Group[])
          results.incidentCounts[phase][group] = w.count(phase, group);
    }
    log('stopping everything');
    await cleanup.runAll();
    results.othersSeen = ref.machine?.over(started.getTime(), Date.now()).others ?? [];
  }
  results.logs = ref.procs.map((p) => {
    const byPhase: Record<Phase, number> = { 'start-up': 0, healthy: 0, detection: 0 };
    for (const l of p.lines) byPhase[l.phase]++;
    return { name: p.name, problems: p.problems, byPhase };
  });

  const section = render(machine, args, results, started, (nowMs() - t0) / 1000);
  process.stdout.write('\n' + section);
  if (args.append && results.error) log('not written to BENCHMARKS.md: the run failed');
  else if (args.append && results.othersSeen.length && !args.appendAnyway)
    log(
      `not written to BENCHMARKS.md: other benchmarks ran meanwhile (${results.othersSeen.join(' | ')}); ` +
        'run again on a quiet machine, or pass --append-anyway',
    );
  else if (args.append) {
    const path = join(REPO_ROOT, 'BENCHMARKS.md');
    const replaced = replaceSection(path, 'lifecycle', section);
    log(`${replaced ? 'replaced the lifecycle section of' : 'added a lifecycle section to'} ${path}`);
  }
  process.exitCode = results.error ? 1 : 0;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
