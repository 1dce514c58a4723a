/**
 * bench:scale — a control plane at fleet scale (tracker issue 23): N hollow nodes (default
 * 5,000 and 10,000) in two hollow processes, 10 pods each (10 DaemonSets), against a fresh
 * `kubelab server` child (SQLite, its in-process controllers, the GUI's WebSocket bridge on).
 *
 * For each size, in order:
 *   1. cold start: join every node ahead (as `kubelab-agent --hollow` joins), start the fleets,
 *      time until the server has every Node Ready; then create the DaemonSets and time until
 *      every pod is available;
 *   2. a steady window (default 10 min after a 30 s warm-up): the server's event-loop delay
 *      (monitorEventLoopDelay) and GC pauses (PerformanceObserver 'gc'), from a probe preloaded
 *      into it (lib/loop-probe.mjs); its heap and RSS; lease renew latency where the agents see
 *      it; a probe client's get / list / create latency and a bridge round trip (hello →
 *      answer) over the GUI's WebSocket, both from a process of their own (lib/probe-child.ts),
 *      as a user's client and the desktop window are; Nodes that ever left Ready (from the
 *      bench's Node informer);
 *   3. overload: a client offering creates at 10× the rate the server took them from 32 writers,
 *      without the client's retries, for --overload (default 30 s): what it gets back (created,
 *      TooManyRequests with a retry hint, anything else) and lease renew latency meanwhile;
 *   4. full-fleet restart: the server and both fleets stopped at once and started again at once:
 *      time until every node is Ready again, Nodes that left Ready, pods whose container started
 *      again (their running.startedAt or restartCount changed), connections the agents saw
 *      reset.
 * Targets (issue 23): loop delay p99 ≤ 50 ms and max ≤ 250 ms, lease renew p99 ≤ 1 s, 0 Nodes
 * NotReady, 0 pods restarted by the fleet restart, server RSS ≤ 1.5 GiB, bridge round trip p99
 * ≤ 100 ms, renew p99 ≤ 1 s under the flood with every refusal a 429 with a retry hint.
 *
 * Options: --nodes 5000,10000, --pods-per-node 10, --window 10m, --warmup 30s, --overload 30s
 * (0: skip), --no-restart, --fleets 2, --join 32 (joins in flight), --no-append (print only).
 * Environment: KUBELAB_BENCH_CPU_PROFILE=<folder> CPU-profiles the server's and the fleets'
 * rollout and windows (lib/loop-probe.mjs, lib/hollow-child.ts: window-<mark>.cpuprofile for the
 * server, <fleet prefix><n>.cpuprofile for the fleets, n counting the rollout and each window);
 * KUBELAB_BENCH_SERVER_V8="<flags>" adds V8 flags to the server (e.g. --max-semi-space-size=64),
 * KUBELAB_BENCH_HOLLOW_V8="<flags>" to the hollow fleets (e.g. --cpu-prof --cpu-prof-dir=<folder>);
 * KUBELAB_BENCH_GC_TRACE=1 runs the server with --trace-gc-nvp and reports where the window's
 * mark-compact pauses went, phase by phase (lib/gctrace.ts).
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs as parseCliArgs } from 'node:util';
import { ApiError } from '../../client/api/errors.js';
import type { DaemonSet, Node, Pod } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client } from '../../client/client.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { freePort } from '../support/etcd.js';
import { createJoinToken, REPO_ROOT, startChildControlPlane } from './lib/child.js';
import type {
  HollowChildConfig,
  HollowChildMessage,
  HollowProgress,
  HollowReport,
} from './lib/hollow-child.js';
import { isTopLevel, summarizeGcTrace, type GcPauseSummary } from './lib/gctrace.js';
import { changedNote, machineInfo } from './lib/machine.js';
import { MiB, ProcSampler, type ProcSummary } from './lib/proc.js';
import { replaceSection, table, upsertSummaryRow } from './lib/report.js';
import { Cleanup, log } from './lib/run.js';
import { scrape, scrapeDelta, type Scrape } from './lib/scrape.js';
import { fmt, nowMs, percentileSorted, sleep, sortedCopy } from './lib/stats.js';
import type { ProbeChildConfig, ProbeChildMessage } from './lib/probe-child.js';
import type { ApiLatencies, Latencies } from './lib/window-probes.js';

type ProbeReport = Extract<ProbeChildMessage, { type: 'report' }>;

const NAMESPACE = 'scale';
const PROBE = join(REPO_ROOT, 'test/bench/lib/loop-probe.mjs');
/** Connections the flood uses: more calls in flight than the server's seats and queue hold. */
const FLOOD_CONNECTIONS = 4;

interface Args {
  nodes: number[];
  podsPerNode: number;
  windowMs: number;
  warmupMs: number;
  overloadMs: number;
  restart: boolean;
  fleets: number;
  join: number;
  append: boolean;
}

function parseDuration(v: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(v);
  if (!m)
    throw new Error(`${flag} takes a duration such as 90s or 10m, not ${JSON.stringify(v.slice(0, 40))}`);
  return Number(m[1]) * (m[2] === 'm' ? 60_000 : m[2] === 'ms' ? 1 : 1000);
}

function parseArgs(argv: string[]): Args {
  const { values: v } = parseCliArgs({
    args: argv,
    strict: true,
    options: {
      nodes: { type: 'string', default: '5000,10000' },
      'pods-per-node': { type: 'string', default: '10' },
      window: { type: 'string', default: '10m' },
      warmup: { type: 'string', default: '30s' },
      overload: { type: 'string', default: '30s' },
      'no-restart': { type: 'boolean', default: false },
      fleets: { type: 'string', default: '2' },
      join: { type: 'string', default: '32' },
      'no-append': { type: 'boolean', default: false },
    },
  });
  const a: Args = {
    nodes: v.nodes.split(',').map(Number),
    podsPerNode: Number(v['pods-per-node']),
    windowMs: parseDuration(v.window, '--window'),
    warmupMs: parseDuration(v.warmup, '--warmup'),
    overloadMs: parseDuration(v.overload, '--overload'),
    restart: !v['no-restart'],
    fleets: Number(v.fleets),
    join: Number(v.join),
    append: !v['no-append'],
  };
  if (!Number.isInteger(a.fleets) || a.fleets < 1) throw new Error('--fleets takes a whole number ≥ 1');
  if (a.nodes.some((n) => !Number.isInteger(n) || n < a.fleets))
    throw new Error('--nodes takes whole numbers, at least one per fleet');
  if (!Number.isInteger(a.podsPerNode) || a.podsPerNode < 0)
    throw new Error('--pods-per-node takes a whole number');
  return a;
}

// ------------------------------------------------------------------------------ what a run gathers

interface LoopSnapshot {
  at: number;
  mark: number;
  windowMs: number;
  loop: { count: number; p50Ms: number; p99Ms: number; maxMs: number; meanMs: number };
  gc: {
    count: number;
    totalMs: number;
    maxMs: number;
    maxKind: string;
    byKind: Record<string, { count: number; totalMs: number; maxMs: number }>;
  };
  memory: {
    rss: number;
    heapUsed: number;
    heapTotal: number;
    external: number;
    peak: { rss: number; heapUsed: number; heapTotal: number };
  };
}

interface Renewals {
  renewals: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  gapsOverLease: number;
  /** The hollow processes' own event-loop delay (the worse fleet's): their share of a renewal's latency. */
  fleetLoopP99Ms: number;
  fleetLoopMaxMs: number;
  /** The server's share: node-high requests' wait for a seat and run once seated, p99 as bucket bounds. */
  server?: { requests: number; waitP99: string; runP99: string };
}

/** The upper bound of the histogram bucket that holds the 99th percentile of what it counted between two scrapes. */
function bucketP99(
  before: Scrape,
  after: Scrape,
  metric: string,
  level: string,
): { count: number; bound: string } {
  const re = new RegExp(`^${metric}_bucket\\{le="([^"]+)",priority_level="${level}"(?:,execute="true")?\\}$`);
  const buckets: Array<[number, string, number]> = [];
  for (const series of after.keys()) {
    const m = re.exec(series);
    if (m)
      buckets.push([m[1] === '+Inf' ? Infinity : Number(m[1]), m[1], scrapeDelta(before, after, series)]);
  }
  buckets.sort((a, b) => a[0] - b[0]);
  const count = buckets.length ? buckets[buckets.length - 1][2] : 0;
  const hit = buckets.find(([, , c]) => c >= 0.99 * count);
  return { count, bound: hit ? (hit[0] === Infinity ? '> 30 s' : `≤ ${fmt(hit[0] * 1000, 0)} ms`) : 'n/a' };
}

function nodeHighShare(before: Scrape, after: Scrape): Renewals['server'] {
  const wait = bucketP99(before, after, 'apiserver_flowcontrol_request_wait_duration_seconds', 'node-high');
  const run = bucketP99(before, after, 'apiserver_flowcontrol_request_execution_seconds', 'node-high');
  return { requests: run.count, waitP99: wait.bound, runP99: run.bound };
}

interface Overload {
  seconds: number;
  capacityPerSec: number;
  offeredPerSec: number;
  created: number;
  refused: number;
  refusedWithHint: number;
  other: Map<string, number>;
  /** How long the flood's answered calls (created or refused) took, p50 / p99 / max. */
  answeredP50Ms: number;
  answeredP99Ms: number;
  answeredMaxMs: number;
  renew: Renewals;
  loop: LoopSnapshot['loop'];
}

interface Restart {
  allReadyMs?: number;
  notReadyNodes: number;
  podsChecked: number;
  podsRestarted: number;
  resetLines: number;
  error?: string;
}

interface SizeResult {
  nodes: number;
  pods: number;
  joinSeconds: number;
  coldReadyMs?: number;
  podsAvailableMs?: number;
  podsAvailable: number;
  window?: {
    ms: number;
    probe: LoopSnapshot;
    server: ProcSummary | undefined;
    /** The hollow processes, each. */
    fleets: Array<ProcSummary | undefined>;
    renew: Renewals;
    api: ApiLatencies;
    bridge: Latencies;
    /** The probe process's own event-loop delay: whether the probe itself paused. */
    probeLoop: { p99Ms: number; maxMs: number };
    /** With KUBELAB_BENCH_GC_TRACE: where the window's mark-compact pauses went. */
    gcPauses?: GcPauseSummary;
    machineCores?: number;
  };
  notReadyNodes: number;
  overload?: Overload;
  restart?: Restart;
  problems: Map<string, number>;
  error?: string;
}

// ------------------------------------------------------------------------------ processes

interface Fleet {
  name: string;
  count: number;
  child: ChildProcess;
  exited: Promise<number | null>;
  last?: HollowProgress;
  joined: boolean;
  failure?: string;
  reports: Array<(r: HollowReport) => void>;
  problems: Map<string, number>;
  resets: number;
}

/** Connections the server reset or shut under load, as the agents report them. */
const RESET_PATTERN = /RST_STREAM|ENHANCE_YOUR_CALM|GOAWAY|INTERNAL_ERROR|rapid reset|Connection dropped/i;

function startFleet(name: string, config: HollowChildConfig, problems: Map<string, number>): Fleet {
  const child = spawn(
    process.execPath,
    [
      '--max-old-space-size=8192',
      ...(process.env.KUBELAB_BENCH_HOLLOW_V8?.split(' ').filter(Boolean) ?? []),
      '--import',
      'tsx',
      join(REPO_ROOT, 'test/bench/lib/hollow-child.ts'),
    ],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, KUBELAB_BENCH_HOLLOW_CHILD: JSON.stringify(config), KUBELAB_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    },
  );
  const fleet: Fleet = {
    name,
    count: config.count,
    child,
    exited: new Promise((r) => child.once('exit', (code) => r(code))),
    joined: config.preJoinConcurrency === 0,
    reports: [],
    problems,
    resets: 0,
  };
  let partial = '';
  child.stderr?.on('data', (d: Buffer) => {
    const text = partial + d.toString();
    const cut = text.lastIndexOf('\n');
    partial = text.slice(cut + 1);
    for (const line of text.slice(0, Math.max(0, cut)).split('\n')) {
      if (!line.trim()) continue;
      if (RESET_PATTERN.test(line)) fleet.resets++;
      let level = 50;
      let msg = line.slice(0, 120);
      try {
        const j = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
        level = j.level ?? 0;
        msg = `${j.msg ?? ''}${j.err?.message ? ` (${j.err.message.slice(0, 100)})` : ''}`;
      } catch {
        // not a log line: a crash or a warning from node
      }
      if (level >= 40) {
        const key = `${name}: ${level >= 50 ? 'error' : 'warn'}: ${msg.replace(/\d+/g, 'N')}`;
        problems.set(key, (problems.get(key) ?? 0) + 1);
      }
    }
  });
  child.on('message', (m: HollowChildMessage) => {
    if (m.type === 'joined') fleet.joined = true;
    else if (m.type === 'progress') fleet.last = m;
    else if (m.type === 'report') fleet.reports.shift()?.(m);
    else if (m.type === 'error') fleet.failure = m.message;
  });
  return fleet;
}

function checkFleet(f: Fleet): void {
  if (f.failure) throw new Error(`hollow process ${f.name} failed: ${f.failure.slice(0, 2000)}`);
  if (f.child.exitCode !== null) throw new Error(`hollow process ${f.name} exited with ${f.child.exitCode}`);
}

async function stopFleet(f: Fleet): Promise<void> {
  if (f.child.exitCode !== null) return;
  if (f.child.connected) f.child.send({ type: 'stop' });
  else f.child.kill('SIGTERM');
  const timer = setTimeout(() => f.child.kill('SIGKILL'), 60_000);
  await f.exited;
  clearTimeout(timer);
}

/** With KUBELAB_BENCH_CPU_PROFILE: the server's and the fleets' profiles start a new file. */
function cutProfiles(fleets: Fleet[], probePath: string): void {
  if (!process.env.KUBELAB_BENCH_CPU_PROFILE) return;
  for (const f of fleets) if (f.child.connected) f.child.send({ type: 'profile' });
  writeFileSync(`${probePath}.mark`, String(Date.now()));
}

function mark(fleets: Fleet[], probePath: string): void {
  for (const f of fleets) if (f.child.connected) f.child.send({ type: 'profile' });
  for (const f of fleets) if (f.child.connected) f.child.send({ type: 'mark' });
  // Writing it moves its mtime, which the probe watches.
  writeFileSync(`${probePath}.mark`, String(Date.now()));
}

async function renewals(fleets: Fleet[]): Promise<Renewals> {
  const reports = await Promise.all(
    fleets.map(
      (f) =>
        new Promise<HollowReport>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`${f.name} did not report within 60 s`)), 60_000);
          f.reports.push((r) => {
            clearTimeout(timer);
            resolve(r);
          });
          f.child.send({ type: 'report' });
        }),
    ),
  );
  // The children report percentiles, not samples: the fleets are the same size and code, so the
  // worse of the two is the honest figure for the whole.
  return {
    renewals: reports.reduce((s, r) => s + r.renewals, 0),
    p50Ms: Math.max(...reports.map((r) => r.p50Ms)),
    p99Ms: Math.max(...reports.map((r) => r.p99Ms)),
    maxMs: Math.max(...reports.map((r) => r.maxMs)),
    gapsOverLease: reports.reduce((s, r) => s + r.gapsOverLease, 0),
    fleetLoopP99Ms: Math.max(...reports.map((r) => r.eventLoopP99Ms)),
    fleetLoopMaxMs: Math.max(...reports.map((r) => r.eventLoopMaxMs)),
  };
}

function readProbe(path: string): LoopSnapshot {
  return JSON.parse(readFileSync(path, 'utf8')) as LoopSnapshot;
}

/** Waits for the probe to write a snapshot of the window marked at or after `since`. */
async function probeAfter(path: string, since: number): Promise<LoopSnapshot> {
  for (let i = 0; i < 100; i++) {
    try {
      const s = readProbe(path);
      if (s.at >= since + 1000 && s.mark >= since - 1000) return s;
    } catch {
      // not written yet
    }
    await sleep(200);
  }
  throw new Error('the server’s loop probe wrote nothing for 20 s');
}

const isReady = (n: Node) =>
  n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

function daemonSet(i: number): DaemonSet {
  const name = `scale-${i}`;
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'main', image: `bench/scale-${i}:1` }] },
      },
    },
  };
}

// ------------------------------------------------------------------------------ the window's probes

/** The window's probes, in a process of their own (lib/probe-child.ts). */
async function startProbes(config: ProbeChildConfig): Promise<{ stop(): Promise<ProbeReport> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'test/bench/lib/probe-child.ts')],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, KUBELAB_BENCH_PROBE_CHILD: JSON.stringify(config) },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    },
  );
  const next = () =>
    new Promise<ProbeChildMessage>((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`the probe process exited with ${code}`)));
    });
  const failed = (m: ProbeChildMessage): never => {
    throw new Error(`the probe process failed: ${m.type === 'error' ? m.message.slice(0, 2000) : m.type}`);
  };
  const started = await next();
  if (started.type !== 'started') failed(started);
  return {
    async stop() {
      const report = next();
      child.send({ type: 'stop' });
      const m = await report;
      if (m.type !== 'report') return failed(m);
      return m;
    },
  };
}

/** Creates as fast as `writers` callers can, for `ms`: the server's capacity for this client. */
async function capacity(client: Client, writers: number, ms: number): Promise<number> {
  let done = 0;
  let n = 0;
  const end = nowMs() + ms;
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (nowMs() < end) {
        await client
          .create({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `cap-${n++}`, namespace: NAMESPACE },
          })
          .then(() => done++)
          .catch(() => undefined);
      }
    }),
  );
  return done / (ms / 1000);
}

/**
 * Offers creates at `rate`/s (open loop) for `ms`, without retries, over `clients` connections
 * with at most 1,000 calls in flight on each (the server's stream limit per connection): one
 * connection alone could never fill the server's seats and queue.
 */
async function flood(clients: Client[], rate: number, ms: number) {
  const out = { created: 0, refused: 0, refusedWithHint: 0, other: new Map<string, number>(), offered: 0 };
  // How long each call took to be answered (created or refused): how long the server held it.
  const answeredMs: number[] = [];
  const inFlight = clients.map(() => 0);
  const t0 = nowMs();
  const calls = new Set<Promise<void>>();
  while (nowMs() - t0 < ms) {
    const due = Math.floor(((nowMs() - t0) / 1000) * rate);
    while (out.offered < due) {
      const c = inFlight.indexOf(Math.min(...inFlight));
      if (inFlight[c] >= 1000) break;
      const i = out.offered++;
      inFlight[c]++;
      const sent = nowMs();
      const call = clients[c]
        .create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `flood-${i}`, namespace: NAMESPACE },
        })
        .then(
          () => {
            out.created++;
            answeredMs.push(nowMs() - sent);
          },
          (err: unknown) => {
            if (err instanceof ApiError && err.reason === 'TooManyRequests') {
              out.refused++;
              answeredMs.push(nowMs() - sent);
              if ((err.details.retryAfterSeconds ?? 0) > 0) out.refusedWithHint++;
            } else {
              // The reason and the start of the message: "Unavailable" alone does not say what failed.
              const key =
                err instanceof ApiError
                  ? `${err.reason} (${err.message.slice(0, 120)})`
                  : (err as Error).message.slice(0, 120);
              out.other.set(key, (out.other.get(key) ?? 0) + 1);
            }
          },
        )
        .finally(() => {
          inFlight[c]--;
          calls.delete(call);
        });
      calls.add(call);
    }
    await sleep(5);
  }
  const seconds = (nowMs() - t0) / 1000;
  await Promise.all(calls);
  const answered = sortedCopy(answeredMs);
  return {
    ...out,
    offeredPerSec: out.offered / seconds,
    answeredP50Ms: percentileSorted(answered, 50),
    answeredP99Ms: percentileSorted(answered, 99),
    answeredMaxMs: percentileSorted(answered, 100),
  };
}

// ------------------------------------------------------------------------------ one size

async function runSize(n: number, args: Args, tmp: string): Promise<SizeResult> {
  const cleanup = new Cleanup();
  const result: SizeResult = {
    nodes: n,
    pods: n * args.podsPerNode,
    joinSeconds: NaN,
    podsAvailable: 0,
    notReadyNodes: 0,
    problems: new Map(),
  };
  const dir = join(tmp, `scale-${n}`);
  const serverDir = join(dir, 'server');
  mkdirSync(serverDir, { recursive: true });
  const probePath = join(dir, 'loop.json');
  const gcTracePath = process.env.KUBELAB_BENCH_GC_TRACE ? join(dir, 'gc-trace.log') : undefined;
  const uiPort = await freePort();
  const serverOptions = {
    store: 'sqlite' as const,
    dataDir: serverDir,
    port: await freePort(),
    metricsPort: await freePort(),
    // Room beyond V8's default heap limit, so that a heap too big for the target is measured, not a crash.
    nodeArgs: [
      '--max-old-space-size=8192',
      ...(process.env.KUBELAB_BENCH_SERVER_V8?.split(' ').filter(Boolean) ?? []),
      ...(gcTracePath ? ['--trace-gc-nvp'] : []),
      '--import',
      pathToFileURL(PROBE).href,
    ],
    serverArgs: ['--ui-listen', `127.0.0.1:${uiPort}`],
    env: { KUBELAB_BENCH_LOOP_PROBE: probePath },
    stdoutFile: gcTracePath,
    startTimeoutMs: 180_000,
  };
  let cp = await startChildControlPlane(serverOptions);
  cleanup.add('server', () => cp.stop());
  const sampler = new ProcSampler(new Map([['server', cp.pid]]), 2000);
  cleanup.add('sampler', () => sampler.stop());
  const admin = cp.client(true);
  const token = await createJoinToken(cp);
  const perFleet = Array.from(
    { length: args.fleets },
    (_, i) => Math.floor(n / args.fleets) + (i < n % args.fleets ? 1 : 0),
  );
  const fleetConfig = (i: number, preJoin: number): HollowChildConfig => ({
    count: perFleet[i],
    prefix: `scale${i}`,
    servers: [`https://${cp.server}`],
    dataDir: join(dir, `fleet-${i}`),
    token,
    preJoinConcurrency: preJoin,
    sequential: 0,
    sharedCredentials: false,
  });
  let fleets: Fleet[] = [];
  const stopFleets = () => Promise.all(fleets.map(stopFleet));
  cleanup.add('fleets', stopFleets);

  // Nodes that leave Ready once every node has been Ready.
  const factory = new SharedInformerFactory(cp.client(true));
  const nodes = factory.informerFor('Node');
  let watchNotReady = false;
  const leftReady = new Set<string>();
  nodes.addEventHandler({
    onUpdate: (_old, node) => {
      if (watchNotReady && !isReady(node)) leftReady.add(node.metadata!.name!);
    },
  });
  factory.start();
  cleanup.add('informer', () => factory.shutdown());
  const readyCount = () => nodes.list().filter(isReady).length;
  const waitAllReady = async (what: string, t0: number, timeoutMs: number) => {
    let lastLog = nowMs();
    for (;;) {
      fleets.forEach(checkFleet);
      const ready = readyCount();
      if (ready >= n && fleets.every((f) => f.last && f.last.ready >= f.count)) return nowMs() - t0;
      if (nowMs() - t0 > timeoutMs)
        throw new Error(
          `${what}: after ${fmt((nowMs() - t0) / 1000, 0)} s, ${ready} of ${n} nodes Ready on the server and ${fleets.reduce((t, f) => t + (f.last?.ready ?? 0), 0)} agents had reported their status`,
        );
      if (nowMs() - lastLog > 15_000) {
        lastLog = nowMs();
        const agents = fleets.reduce((s, f) => s + (f.last?.ready ?? 0), 0);
        log(
          `${fmt(n, 0)}: ${what}: ${fmt(ready, 0)} Ready on the server, ${fmt(agents, 0)} agents reported status`,
        );
      }
      await sleep(500);
    }
  };

  try {
    // 1. Cold start.
    log(
      `${fmt(n, 0)}: joining ${fmt(n, 0)} nodes ahead, ${args.join} at a time, in ${args.fleets} hollow processes`,
    );
    let t0 = nowMs();
    fleets = perFleet.map((_, i) =>
      startFleet(
        `hollow-${i}`,
        fleetConfig(i, Math.max(1, Math.floor(args.join / args.fleets))),
        result.problems,
      ),
    );
    fleets.forEach((f) => sampler.add(f.name, f.child.pid ?? 0));
    for (;;) {
      fleets.forEach(checkFleet);
      if (fleets.every((f) => f.joined)) break;
      await sleep(500);
    }
    result.joinSeconds = (nowMs() - t0) / 1000;
    log(`${fmt(n, 0)}: joined in ${fmt(result.joinSeconds, 0)} s; the fleets start`);
    t0 = nowMs();
    result.coldReadyMs = await waitAllReady('cold start', t0, 600_000 + n * 60);
    log(`${fmt(n, 0)}: every node Ready ${fmt(result.coldReadyMs / 1000, 1)} s after the fleets started`);
    watchNotReady = true;

    if (args.podsPerNode > 0) {
      await admin
        .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } })
        .catch(() => undefined);
      // The rollout gets a CPU profile of its own (written when the window starts).
      cutProfiles(fleets, probePath);
      t0 = nowMs();
      for (let i = 0; i < args.podsPerNode; i++) await admin.create(daemonSet(i));
      let lastLog = nowMs();
      for (;;) {
        const list = await admin.list('DaemonSet', { namespace: NAMESPACE });
        result.podsAvailable = list.items.reduce((s, d) => s + (d.status?.numberAvailable ?? 0), 0);
        if (result.podsAvailable >= result.pods) {
          result.podsAvailableMs = nowMs() - t0;
          break;
        }
        if (nowMs() - t0 > 1_200_000) {
          log(
            `${fmt(n, 0)}: only ${fmt(result.podsAvailable, 0)} of ${fmt(result.pods, 0)} pods available after 20 min; measuring anyway`,
          );
          break;
        }
        if (nowMs() - lastLog > 15_000) {
          lastLog = nowMs();
          log(`${fmt(n, 0)}: ${fmt(result.podsAvailable, 0)} of ${fmt(result.pods, 0)} pods available`);
        }
        fleets.forEach(checkFleet);
        await sleep(2000);
      }
      if (result.podsAvailableMs !== undefined)
        log(
          `${fmt(n, 0)}: all ${fmt(result.pods, 0)} pods available ${fmt(result.podsAvailableMs / 1000, 1)} s after the DaemonSets were created`,
        );
    }

    // 2. The steady window.
    log(
      `${fmt(n, 0)}: warm-up ${fmt(args.warmupMs / 1000, 0)} s, then a ${fmt(args.windowMs / 60_000, 1)} min window`,
    );
    await sleep(args.warmupMs);
    const markedAt = Date.now();
    mark(fleets, probePath);
    const gcTraceFrom = gcTracePath ? statSync(gcTracePath).size : 0;
    const metricsAtMark = await scrape(cp.metricsPort);
    sampler.sample();
    const from = sampler.elapsed();
    const probes = await startProbes({
      server: cp.server,
      token: cp.token,
      caPem: cp.caPem,
      uiPort,
      namespace: NAMESPACE,
      nodePrefix: 'scale0-',
      nodeCount: Math.floor(n / args.fleets),
    });
    const windowEnd = nowMs() + args.windowMs;
    while (nowMs() < windowEnd) {
      fleets.forEach(checkFleet);
      await sleep(Math.min(5000, Math.max(0, windowEnd - nowMs())));
    }
    const probed = await probes.stop();
    sampler.sample();
    const to = sampler.elapsed();
    const probe = await probeAfter(probePath, markedAt);
    // The probe writes a window's CPU profile when the next window starts; without an overload
    // phase or a restart there would be none.
    cutProfiles(fleets, probePath);
    result.window = {
      ms: args.windowMs,
      probe,
      server: sampler.summary('server', from, to),
      fleets: fleets.map((f) => sampler.summary(f.name, from, to)),
      renew: {
        ...(await renewals(fleets)),
        server: nodeHighShare(metricsAtMark, await scrape(cp.metricsPort)),
      },
      api: probed.api,
      bridge: probed.bridge,
      probeLoop: probed.loop,
      gcPauses: gcTracePath
        ? summarizeGcTrace(readFileSync(gcTracePath).subarray(gcTraceFrom).toString())
        : undefined,
      machineCores: sampler.machineLoad(from, to)?.busyCores,
    };
    const w = result.window;
    log(
      `${fmt(n, 0)}: loop delay p99 ${fmt(probe.loop.p99Ms)} ms, max ${fmt(probe.loop.maxMs)} ms; longest GC ${fmt(probe.gc.maxMs)} ms (${probe.gc.maxKind}); ` +
        `heap ${fmt(probe.memory.heapUsed / MiB, 0)} MiB, RSS max ${fmt((w.server?.rssMax ?? NaN) / MiB, 0)} MiB; renew p99 ${fmt(w.renew.p99Ms)} ms; ` +
        `API p99 get ${fmt(w.api.get.p99Ms)} / list ${fmt(w.api.list.p99Ms)} / create ${fmt(w.api.create.p99Ms)} ms; bridge p99 ${fmt(w.bridge.p99Ms)} ms; ` +
        `${leftReady.size} nodes left Ready`,
    );

    // 3. Overload.
    if (args.overloadMs > 0) {
      const flooders = Array.from({ length: FLOOD_CONNECTIONS }, () =>
        grpcClient({
          server: cp.server,
          token: cp.token,
          caPem: cp.caPem,
          retry: { attempts: 1 },
          channelOptions: { 'grpc.use_local_subchannel_pool': 1 },
        }),
      );
      const cap = await capacity(flooders[0], 32, 10_000);
      log(
        `${fmt(n, 0)}: the server took ${fmt(cap, 0)} creates/s from 32 writers; offering ${fmt(cap * 10, 0)}/s for ${fmt(args.overloadMs / 1000, 0)} s`,
      );
      const floodMarked = Date.now();
      mark(fleets, probePath);
      const metricsAtFlood = await scrape(cp.metricsPort);
      const f = await flood(flooders, cap * 10, args.overloadMs);
      for (const c of flooders) c.close();
      const floodProbe = await probeAfter(probePath, floodMarked);
      result.overload = {
        seconds: args.overloadMs / 1000,
        capacityPerSec: cap,
        offeredPerSec: f.offeredPerSec,
        created: f.created,
        refused: f.refused,
        refusedWithHint: f.refusedWithHint,
        other: f.other,
        answeredP50Ms: f.answeredP50Ms,
        answeredP99Ms: f.answeredP99Ms,
        answeredMaxMs: f.answeredMaxMs,
        renew: {
          ...(await renewals(fleets)),
          server: nodeHighShare(metricsAtFlood, await scrape(cp.metricsPort)),
        },
        loop: floodProbe.loop,
      };
      const o = result.overload;
      log(
        `${fmt(n, 0)}: overload: offered ${fmt(o.offeredPerSec, 0)}/s, created ${fmt(o.created, 0)}, refused ${fmt(o.refused, 0)} (${fmt(o.refusedWithHint, 0)} with a retry hint), ` +
          `other ${[...o.other].map(([k, v]) => `${v}× ${k}`).join(', ') || 'none'}; answered p99 ${fmt(o.answeredP99Ms, 0)} ms; renew p99 ${fmt(o.renew.p99Ms)} ms`,
      );
    }
    result.notReadyNodes = leftReady.size;

    // 4. Full-fleet restart.
    if (args.restart) {
      const restart: Restart = { notReadyNodes: 0, podsChecked: 0, podsRestarted: 0, resetLines: 0 };
      result.restart = restart;
      try {
        const started = new Map<string, string>();
        for (const p of (await admin.list('Pod', { namespace: NAMESPACE })).items as Pod[]) {
          const c = p.status?.containerStatuses?.[0];
          if (c?.state?.running?.startedAt)
            started.set(p.metadata!.uid!, `${c.state.running.startedAt}/${c.restartCount ?? 0}`);
        }
        restart.podsChecked = started.size;
        const resetsBefore = fleets.reduce((s, f) => s + f.resets, 0);
        leftReady.clear();
        log(`${fmt(n, 0)}: full-fleet restart: stopping the server and both fleets at once`);
        await Promise.all([cp.stop(), stopFleets()]);
        const tr = nowMs();
        const restarted = await Promise.all([
          startChildControlPlane(serverOptions),
          (async () => {
            fleets = perFleet.map((_, i) => startFleet(`hollow-${i}`, fleetConfig(i, 0), result.problems));
          })(),
        ]);
        cp = restarted[0];
        sampler.add('server', cp.pid);
        restart.allReadyMs = await waitAllReady('after the restart', tr, 300_000 + n * 20);
        log(
          `${fmt(n, 0)}: every node Ready again ${fmt(restart.allReadyMs / 1000, 1)} s after the restart; checking pods in 30 s`,
        );
        await sleep(30_000);
        const after = cp.client(true);
        for (const p of (await after.list('Pod', { namespace: NAMESPACE })).items as Pod[]) {
          const before = started.get(p.metadata!.uid!);
          const c = p.status?.containerStatuses?.[0];
          const now = c?.state?.running?.startedAt
            ? `${c.state.running.startedAt}/${c.restartCount ?? 0}`
            : 'not running';
          if (before && before !== now) restart.podsRestarted++;
        }
        restart.notReadyNodes = leftReady.size;
        restart.resetLines = fleets.reduce((s, f) => s + f.resets, 0) - resetsBefore;
        log(
          `${fmt(n, 0)}: restart: ${restart.podsRestarted} of ${restart.podsChecked} pods restarted, ${restart.notReadyNodes} nodes left Ready, ${restart.resetLines} reset lines`,
        );
      } catch (err) {
        restart.error = (err as Error).message;
        log(`${fmt(n, 0)}: restart: ${restart.error}`);
      }
    }
  } catch (err) {
    result.error = (err as Error).message;
    log(`${fmt(n, 0)}: ${result.error}`);
  } finally {
    log(`${fmt(n, 0)}: stopping`);
    await cleanup.runAll();
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

// ------------------------------------------------------------------------------ report

/** Figures from issue 23, measured at 5,000 nodes and 50,000 pods before this work. */
const BEFORE_5000 = {
  loop: 'stalls up to 3 s',
  gc: '470–770 ms (mark-compact)',
  renew: '2,738 ms (bench:agent 2026-12-02)',
  heap: '~550 MB',
  restart: 'collapsed: 50,000 pod restarts, nodes NotReady, connections closed by the rapid-reset guard',
};

const ms = (v: number | undefined) =>
  v === undefined || !Number.isFinite(v) ? 'n/a' : `${fmt(v, v < 10 ? 1 : 0)} ms`;
const s = (v: number | undefined) =>
  v === undefined || !Number.isFinite(v) ? 'n/a' : `${fmt(v / 1000, 1)} s`;
const mib = (v: number | undefined) =>
  v === undefined || !Number.isFinite(v) ? 'n/a' : `${fmt(v / MiB, 0)} MiB`;

interface Check {
  what: string;
  ok: boolean;
}

function checksOf(r: SizeResult): Check[] {
  const w = r.window;
  const c: Check[] = [];
  if (w) {
    c.push({ what: `loop delay p99 ${ms(w.probe.loop.p99Ms)} ≤ 50 ms`, ok: w.probe.loop.p99Ms <= 50 });
    c.push({ what: `loop delay max ${ms(w.probe.loop.maxMs)} ≤ 250 ms`, ok: w.probe.loop.maxMs <= 250 });
    c.push({ what: `lease renew p99 ${ms(w.renew.p99Ms)} ≤ 1 s`, ok: w.renew.p99Ms <= 1000 });
    c.push({
      what: `server RSS max ${mib(w.server?.rssMax)} ≤ 1.5 GiB`,
      ok: (w.server?.rssMax ?? Infinity) <= 1.5 * 1024 * MiB,
    });
    c.push({
      what: `bridge round trip p99 ${ms(w.bridge.p99Ms)} ≤ 100 ms`,
      ok: w.bridge.p99Ms <= 100 && w.bridge.errors === 0,
    });
  }
  c.push({ what: `${r.notReadyNodes} nodes left Ready = 0`, ok: r.notReadyNodes === 0 && !!w });
  if (r.overload) {
    const o = r.overload;
    c.push({ what: `renew p99 under the flood ${ms(o.renew.p99Ms)} ≤ 1 s`, ok: o.renew.p99Ms <= 1000 });
    c.push({
      what: `flood answered with 429s carrying a retry hint (${fmt(o.refusedWithHint, 0)} of ${fmt(o.refused, 0)}), nothing else failing`,
      ok: o.refused > 0 && o.refusedWithHint === o.refused && o.other.size === 0,
    });
  }
  if (r.restart) {
    const x = r.restart;
    c.push({
      what: `pods restarted by the fleet restart ${x.podsRestarted} = 0`,
      ok: !x.error && x.podsRestarted === 0 && x.podsChecked > 0,
    });
    c.push({
      what: `nodes that left Ready during the restart ${x.notReadyNodes} = 0`,
      ok: !x.error && x.notReadyNodes === 0,
    });
    c.push({ what: `connections reset ${x.resetLines} = 0`, ok: !x.error && x.resetLines === 0 });
  }
  if (r.error) c.push({ what: `the run finished (${r.error.slice(0, 200)})`, ok: false });
  return c;
}

/** With KUBELAB_BENCH_GC_TRACE: where the window's mark-compact pauses went, per size. */
function gcPauseTable(results: SizeResult[]): string[] {
  const traced = results.filter((r) => r.window?.gcPauses);
  if (traced.length === 0) return [];
  const pauses = (r: SizeResult) => r.window!.gcPauses!;
  const phases = pauses(traced[0]).phases;
  return [
    "Where the window's mark-compact pauses went (the server under `--trace-gc-nvp`; main-thread phases, mean per mark-compact, its share of their pause time, the largest):",
    '',
    table(
      [
        'phase',
        ...traced.map(
          (r) =>
            `${fmt(r.nodes, 0)} nodes: ${pauses(r).markCompacts} mark-compacts, pause p50 ${fmt(pauses(r).pauseP50Ms, 0)} / max ${fmt(pauses(r).pauseMaxMs, 0)} ms`,
        ),
      ],
      ['l', ...traced.map(() => 'r' as const)],
      phases.map((p, i) => [
        `${isTopLevel(p.phase) ? '' : '↳ '}${p.phase} (${p.what})`,
        ...traced.map((r) => {
          const x = pauses(r).phases[i];
          return `${fmt(x.meanMs, 1)} ms, ${fmt(x.sharePct, 0)} %, max ${fmt(x.maxMs, 0)} ms`;
        }),
      ]),
    ),
    '',
  ];
}

function report(
  results: SizeResult[],
  args: Args,
  machine: Awaited<ReturnType<typeof machineInfo>>,
  startedAt: Date,
  seconds: number,
): { section: string; row: Parameters<typeof upsertSummaryRow>[1] } {
  const when = startedAt.toISOString().slice(0, 16).replace('T', ' ');
  const col = (f: (r: SizeResult) => string) => results.map(f);
  const has5000 = results.some((r) => r.nodes === 5000);
  const header = [
    '',
    ...results.map((r) => `${fmt(r.nodes, 0)} nodes, ${fmt(r.pods, 0)} pods`),
    ...(has5000 ? ['5,000 nodes when issue 23 was filed'] : []),
  ];
  const row = (label: string, f: (r: SizeResult) => string, before?: string) => [
    label,
    ...col(f),
    ...(has5000 ? [before ?? ''] : []),
  ];
  const rows = [
    row('joined ahead (32 at a time)', (r) => `${fmt(r.joinSeconds, 0)} s`),
    row('cold start: fleets started → every Node Ready', (r) => s(r.coldReadyMs)),
    row('DaemonSets created → every pod available', (r) =>
      r.podsAvailableMs !== undefined ? s(r.podsAvailableMs) : `${fmt(r.podsAvailable, 0)} available`,
    ),
    row(
      'event-loop delay p50 / p99 / max',
      (r) =>
        r.window
          ? `${ms(r.window.probe.loop.p50Ms)} / ${ms(r.window.probe.loop.p99Ms)} / ${ms(r.window.probe.loop.maxMs)}`
          : 'n/a',
      BEFORE_5000.loop,
    ),
    row(
      'longest GC pause (kind); GC time share',
      (r) =>
        r.window
          ? `${ms(r.window.probe.gc.maxMs)} (${r.window.probe.gc.maxKind}); ${fmt((r.window.probe.gc.totalMs / r.window.probe.windowMs) * 100, 1)} %`
          : 'n/a',
      BEFORE_5000.gc,
    ),
    row('GC count by kind (window)', (r) =>
      r.window
        ? Object.entries(r.window.probe.gc.byKind)
            .map(([k, v]) => `${k} ${fmt(v.count, 0)} (max ${ms(v.maxMs)})`)
            .join(', ')
        : 'n/a',
    ),
    row(
      'heap used at the end / peak',
      (r) =>
        r.window
          ? `${mib(r.window.probe.memory.heapUsed)} / ${mib(r.window.probe.memory.peak.heapUsed)}`
          : 'n/a',
      BEFORE_5000.heap,
    ),
    row('server RSS median / max; CPU', (r) =>
      r.window
        ? `${mib(r.window.server?.rssMedian)} / ${mib(r.window.server?.rssMax)}; ${fmt(r.window.server?.cpuPct ?? NaN, 0)} % of a core`
        : 'n/a',
    ),
    row(
      'hollow processes: RSS max each; CPU each; RSS per node',
      (r) =>
        r.window
          ? `${r.window.fleets.map((f) => mib(f?.rssMax)).join(' + ')}; ${r.window.fleets.map((f) => `${fmt(f?.cpuPct ?? NaN, 0)} %`).join(' + ')}; ` +
            `${fmt(r.window.fleets.reduce((t, f) => t + (f?.rssMax ?? NaN), 0) / r.nodes / 1024, 0)} KiB`
          : 'n/a',
      '~0.7 MB per node (2.1 GiB for 5,000; bench:agent)',
    ),
    row(
      'lease renew p50 / p99 / max (renewals)',
      (r) =>
        r.window
          ? `${ms(r.window.renew.p50Ms)} / ${ms(r.window.renew.p99Ms)} / ${ms(r.window.renew.maxMs)} (${fmt(r.window.renew.renewals, 0)})`
          : 'n/a',
      BEFORE_5000.renew,
    ),
    row(
      "renewals: where the time goes (hollow processes' loop delay p99 / max; server node-high wait p99, run p99)",
      (r) =>
        r.window
          ? `${ms(r.window.renew.fleetLoopP99Ms)} / ${ms(r.window.renew.fleetLoopMaxMs)}; ` +
            (r.window.renew.server
              ? `${r.window.renew.server.waitP99}, ${r.window.renew.server.runP99} (${fmt(r.window.renew.server.requests, 0)} Node and Lease writes)`
              : 'n/a')
          : 'n/a',
    ),
    row('API probe p99: get / list 500 pods / create', (r) =>
      r.window
        ? `${ms(r.window.api.get.p99Ms)} / ${ms(r.window.api.list.p99Ms)} / ${ms(r.window.api.create.p99Ms)} (${r.window.api.get.errors + r.window.api.list.errors + r.window.api.create.errors} errors)`
        : 'n/a',
    ),
    row('bridge round trip p50 / p99 / max', (r) =>
      r.window
        ? `${ms(r.window.bridge.p50Ms)} / ${ms(r.window.bridge.p99Ms)} / ${ms(r.window.bridge.maxMs)} (${r.window.bridge.errors} unanswered)`
        : 'n/a',
    ),
    row(
      "the probes' own process: loop delay p99 / max (a pause of its own would count as the server's)",
      (r) => (r.window ? `${ms(r.window.probeLoop.p99Ms)} / ${ms(r.window.probeLoop.maxMs)}` : 'n/a'),
    ),
    row('Nodes that left Ready (cold start to restart)', (r) => String(r.notReadyNodes)),
    row('overload: capacity → offered', (r) =>
      r.overload
        ? `${fmt(r.overload.capacityPerSec, 0)}/s → ${fmt(r.overload.offeredPerSec, 0)}/s for ${fmt(r.overload.seconds, 0)} s`
        : 'n/a',
    ),
    row('overload: created / 429 (with retry hint) / other', (r) =>
      r.overload
        ? `${fmt(r.overload.created, 0)} / ${fmt(r.overload.refused, 0)} (${fmt(r.overload.refusedWithHint, 0)}) / ${[...r.overload.other].map(([k, v]) => `${fmt(v, 0)} ${k}`).join(', ') || '0'}`
        : 'n/a',
    ),
    row('overload: a flood call answered (created or 429) after p50 / p99 / max', (r) =>
      r.overload
        ? `${ms(r.overload.answeredP50Ms)} / ${ms(r.overload.answeredP99Ms)} / ${ms(r.overload.answeredMaxMs)}`
        : 'n/a',
    ),
    row('overload: server node-high wait p99, run p99', (r) =>
      r.overload?.renew.server
        ? `${r.overload.renew.server.waitP99}, ${r.overload.renew.server.runP99} (${fmt(r.overload.renew.server.requests, 0)} Node and Lease writes)`
        : 'n/a',
    ),
    row("overload: lease renew p99; loop delay p99 / max; the hollow processes' loop delay p99 / max", (r) =>
      r.overload
        ? `${ms(r.overload.renew.p99Ms)}; ${ms(r.overload.loop.p99Ms)} / ${ms(r.overload.loop.maxMs)}; ${ms(r.overload.renew.fleetLoopP99Ms)} / ${ms(r.overload.renew.fleetLoopMaxMs)}`
        : 'n/a',
    ),
    row(
      'full-fleet restart → every Node Ready',
      (r) =>
        r.restart ? (r.restart.error ? r.restart.error.slice(0, 160) : s(r.restart.allReadyMs)) : 'n/a',
      BEFORE_5000.restart,
    ),
    row('restart: pods restarted / checked; Nodes that left Ready; resets', (r) =>
      r.restart
        ? `${fmt(r.restart.podsRestarted, 0)} / ${fmt(r.restart.podsChecked, 0)}; ${r.restart.notReadyNodes}; ${r.restart.resetLines}`
        : 'n/a',
    ),
  ];
  const checks = results.map((r) => ({ r, c: checksOf(r) }));
  const problems = results.flatMap((r) =>
    [...r.problems]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([k, v]) => `${fmt(r.nodes, 0)} nodes: ${v}× ${k.slice(0, 200)}`),
  );
  const section = [
    `## ${when} UTC — scale (\`npm run bench:scale\`)`,
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${fmt(machine.ramGiB, 1)} GiB RAM, ${machine.os}; Node ${machine.node}. kubelab ${machine.commit}. ${changedNote(machine)} Whole run: ${fmt(seconds / 60, 1)} min.`,
    '',
    `Each size against a fresh \`kubelab server\` (SQLite, in-process controllers, \`--ui-listen\` for the GUI bridge) with the hollow fleets in ${args.fleets} processes (\`kubelab-agent --hollow\`'s code and defaults), ` +
      `${args.podsPerNode} DaemonSets (one pod per node each), a ${fmt(args.warmupMs / 1000, 0)} s warm-up, then a ${fmt(args.windowMs / 60_000, 1)} min window in which a probe client does get / list / create every 250 ms and the bridge is asked hello every 100 ms, both from a process of their own (since 2026-12-07 05:00; before, from the benchmark process, whose own pauses counted). ` +
      "The server's event loop and GC are measured inside it by a preloaded probe (monitorEventLoopDelay at 10 ms resolution, PerformanceObserver 'gc'). " +
      `Overload: the rate 32 writers got for 10 s, times 10, offered open-loop without client retries for ${fmt(args.overloadMs / 1000, 0)} s. Restart: SIGTERM to the server and the fleets at once, all started again at once; pods compared by their container's running.startedAt and restartCount.`,
    '',
    table(
      header,
      header.map((_, i) => (i === 0 ? 'l' : 'r')),
      rows,
    ),
    '',
    ...gcPauseTable(results),
    '### Targets',
    '',
    ...checks.flatMap(({ r, c }) =>
      c.map((x) => `- ${fmt(r.nodes, 0)} nodes: ${x.ok ? 'PASS' : 'MISS'} — ${x.what}`),
    ),
    '',
    problems.length
      ? `Agent log lines at warn or above (most frequent): ${problems.join('; ')}.`
      : 'The agents logged nothing at warn or above.',
  ].join('\n');
  const passed = checks.reduce((n, x) => n + x.c.filter((c) => c.ok).length, 0);
  const total = checks.reduce((n, x) => n + x.c.length, 0);
  const headline = results
    .map((r) => {
      const w = r.window;
      return (
        `${fmt(r.nodes, 0)} nodes / ${fmt(r.pods, 0)} pods: cold start ${s(r.coldReadyMs)}` +
        (w
          ? `, loop p99 ${ms(w.probe.loop.p99Ms)} max ${ms(w.probe.loop.maxMs)}, GC max ${ms(w.probe.gc.maxMs)}, RSS max ${mib(w.server?.rssMax)}, renew p99 ${ms(w.renew.p99Ms)}, bridge p99 ${ms(w.bridge.p99Ms)}`
          : '') +
        `, ${r.notReadyNodes} NotReady` +
        (r.overload ? `, under a 10× flood renew p99 ${ms(r.overload.renew.p99Ms)}` : '') +
        (r.restart
          ? `, restart → Ready ${s(r.restart.allReadyMs)} with ${r.restart.podsRestarted} pods restarted`
          : '') +
        (r.error ? ` (stopped: ${r.error.slice(0, 80)})` : '')
      );
    })
    .join('; ');
  const misses = checks.flatMap(({ r, c }) =>
    c.filter((x) => !x.ok).map((x) => `${fmt(r.nodes, 0)}: ${x.what}`),
  );
  return {
    section,
    row: {
      bench: '`bench:scale`',
      date: when,
      machine: `${machine.cpu}, ${machine.cores} cores, ${fmt(machine.ramGiB, 1)} GiB`,
      figures: headline,
      result: `${passed} of ${total} targets met${misses.length ? `; misses: ${misses.join('; ')}` : ''}`,
    },
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const startedAt = new Date();
  const t0 = nowMs();
  const machine = await machineInfo('', REPO_ROOT);
  const tmp = join(tmpdir(), `kubelab-bench-scale-${process.pid}`);
  mkdirSync(tmp, { recursive: true });
  const results: SizeResult[] = [];
  try {
    for (const n of args.nodes) results.push(await runSize(n, args, tmp));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const { section, row } = report(results, args, machine, startedAt, (nowMs() - t0) / 1000);
  console.log(`\n${section}\n`);
  if (args.append) {
    const path = join(REPO_ROOT, 'BENCHMARKS.md');
    replaceSection(path, 'scale', section);
    upsertSummaryRow(path, row);
    log('wrote BENCHMARKS.md');
  }
  process.exit(0);
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
