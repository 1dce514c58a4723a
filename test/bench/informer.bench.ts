/**
 * `npm run bench:informer`: what a SharedIndexInformer on Pods sustains, in one run, and
 * appends the figures, the machine and the date to BENCHMARKS.md.
 *
 *   1. Events/s delivered to 3 event handlers (two synchronous, one async; controller-like
 *      work) and the lag write → all three handlers done, for two setups side by side:
 *      (a) the informer inside a ControlPlane on the in-process client (cp.client()), and
 *      (b) the informer in this process over gRPC (TLS + token) against `kubelab server` in a
 *      child process. Three cases, interleaved over rounds: a steady stream of updates, as
 *      many updates as 32 writers can make, and a backlog (the informer's watch is held while
 *      32 writers make the updates, then let go: the informer's own maximum, writers out of
 *      the way).
 *   2. Memory per cached object with 100,000 Pods (~1 KiB of JSON each): heap after GC before
 *      and after an informer lists and syncs them, over gRPC in a separate process (the
 *      informer's own copies) and in-process (objects shared with the watch cache); and the
 *      list+sync time.
 *
 * Control planes run without their in-process controllers, so that only the measured
 * informer watches Pods.
 *
 * Options: --no-append (print only), --phases events,memory, --rounds N (default 3),
 * --objects N (memory phase, default 100000), --profile DIR (CPU profiles of this process for
 * each case of the first round, and of the server child with --cpu-prof).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Registry } from 'prom-client';
import type { Pod } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { HandlerRegistration, SharedIndexInformer } from '../../client/cache/informer.js';
import { prometheusReflectorMetrics } from '../../client/cache/metrics.js';
import type { Client } from '../../client/client.js';
import { ControlPlane } from '../../main/controlplane.js';
import { silentLogger } from '../../main/logging.js';
import { REPO_ROOT, startChildControlPlane, type ChildControlPlane } from './lib/child.js';
import { cpuMeter, type CpuShare } from './lib/cpu.js';
import { settledHeap } from './lib/heap.js';
import type { MemoryChildConfig, MemoryChildResult } from './lib/informer-memory-child.js';
import {
  controllerLikeHandlers,
  DeliveryTracker,
  informerPod,
  reflectorFigures,
  WatchGate,
  withSeq,
  type DeliveryWindow,
  type ReflectorFigures,
  ReplayClient,
} from './lib/informers.js';
import { machineInfo, type MachineInfo } from './lib/machine.js';
import { appendSection, table } from './lib/report.js';
import { Cleanup, log, profileThisProcess } from './lib/run.js';
import { fmt, median, nowMs, sleep } from './lib/stats.js';
import { ensureNamespace, padBytes, setPadBytes } from './lib/systems.js';
import { fill, throughput } from './lib/workloads.js';

// ------------------------------------------------------------------------------ settings

interface Args {
  append: boolean;
  phases: Set<string>;
  rounds: number;
  objects: number;
  profileDir?: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { append: true, phases: new Set(['events', 'memory']), rounds: 3, objects: 100_000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--no-append') args.append = false;
    else if (a === '--phases') args.phases = new Set(value().split(','));
    else if (a === '--rounds') args.rounds = Math.max(1, Number(value()));
    else if (a === '--objects') args.objects = Math.max(1000, Number(value()));
    else if (a === '--profile') args.profileDir = resolve(value());
    else throw new Error(`unknown option ${a}; see the comment at the top of test/bench/informer.bench.ts`);
  }
  return args;
}

/** A stored Pod's JSON is sized to this. */
const OBJECT_BYTES = 1024;
const HANDLERS = 3;
/** Pods the event cases update, round-robin. */
const PODS = 2000;
const WRITERS = 32;
const STEADY_RATE = 500;
const STEADY_WRITES = 2000;
const MAX_WRITES = 6000;
const BACKLOG_WRITES = 10_000;
const WARMUP_WRITES = 3000;
/** Events put at once in the watch of the informer alone (no server): as many as the backlog, and more. */
const ALONE_SIZES = [BACKLOG_WRITES, 50_000];
const aloneName = (n: number) => `informer alone, ${fmt(n, 0)} events`;
/** Writers filling the memory phase's control plane. */
const FILL_WRITERS = 64;
/** Interleaved repetitions of the memory measurement (gRPC, in-process). */
const MEMORY_REPS = 3;
const NS = 'bench-informer';
const MEMORY_NS = 'bench-memory';

type Mode = 'steady' | 'max' | 'backlog';
const MODES: Mode[] = ['steady', 'max', 'backlog'];
const MODE_TEXT: Record<Mode, string> = {
  steady: `steady ${fmt(STEADY_RATE, 0)} updates/s (${fmt(STEADY_WRITES, 0)} updates)`,
  max: `${WRITERS} writers, unthrottled (${fmt(MAX_WRITES, 0)} updates)`,
  backlog: `backlog of ${fmt(BACKLOG_WRITES, 0)} updates, watch held then released`,
};

// ------------------------------------------------------------------------------ the setups

interface PodSlot {
  obj: Pod;
  busy: Promise<unknown>;
}

interface Setup {
  name: string;
  how: string;
  writer: Client;
  gate: WatchGate;
  factory: SharedInformerFactory;
  informer: SharedIndexInformer<'Pod'>;
  registrations: HandlerRegistration[];
  tracker: DeliveryTracker;
  registry: Registry;
  pods: PodSlot[];
  /** The process that serves the API (this one for in-process). */
  serverPid: number;
  initialSyncMs: number;
}

interface CaseResult {
  setup: string;
  mode: Mode;
  round: number;
  delivery: DeliveryWindow;
  /** Writes/s the writers achieved (max and backlog), or the rate asked for (steady). */
  writesPerSec: number;
  /** How far behind schedule the steady writer fell at worst. */
  writerLagMs: number;
  /** Most notifications waiting in one handler's buffer, sampled every 10 ms. */
  maxPending: number;
  cpu: CpuShare;
}

async function makeSetup(
  name: string,
  how: string,
  writer: Client,
  informerClient: Client,
  serverPid: number,
): Promise<Setup> {
  await ensureNamespace(writer, NS);
  const pods: PodSlot[] = new Array(PODS);
  await fill(PODS, WRITERS, async (i) => {
    const obj = await writer.create(informerPod(`pod-${i}`, NS, i));
    pods[i] = { obj, busy: Promise.resolve() };
  });
  const registry = new Registry();
  const gate = new WatchGate(informerClient);
  const factory = new SharedInformerFactory(gate.client, { metrics: prometheusReflectorMetrics(registry) });
  const informer = factory.informerFor('Pod');
  const tracker = new DeliveryTracker(
    WARMUP_WRITES + 1000 + 100 * (STEADY_WRITES + MAX_WRITES + BACKLOG_WRITES),
    HANDLERS,
  );
  const registrations = controllerLikeHandlers((pod) => tracker.handled(pod)).map((h) =>
    informer.addEventHandler(h),
  );
  const t0 = nowMs();
  factory.start();
  if (!(await factory.waitForCacheSync(60_000)))
    throw new Error(`${name}: the informer did not sync in 60 s`);
  const initialSyncMs = nowMs() - t0;
  log(`${name}: informer synced with ${informer.list().length} Pods in ${fmt(initialSyncMs)} ms`);
  return {
    name,
    how,
    writer,
    gate,
    factory,
    informer,
    registrations,
    tracker,
    registry,
    pods,
    serverPid,
    initialSyncMs,
  };
}

/** Updates Pod `i` (after its previous update, whose resourceVersion it carries). */
function updatePod(s: Setup, i: number): Promise<unknown> {
  const slot = s.pods[i % PODS];
  const next = slot.busy.then(async () => {
    const seq = s.tracker.take();
    const pod = withSeq(slot.obj, seq);
    s.tracker.sent(seq);
    slot.obj = await s.writer.update(pod);
    s.tracker.acked(seq);
  });
  slot.busy = next;
  return next;
}

let podCursor = 0;

async function writeSteadily(s: Setup, count: number, ratePerSec: number): Promise<number> {
  const interval = 1000 / ratePerSec;
  const inflight = new Set<Promise<unknown>>();
  let failure: unknown;
  let lag = 0;
  const t0 = nowMs();
  for (let k = 0; k < count; k++) {
    const due = t0 + k * interval;
    const wait = due - nowMs();
    if (wait >= 1) await sleep(wait);
    lag = Math.max(lag, nowMs() - due);
    const p: Promise<unknown> = updatePod(s, podCursor++).then(
      () => inflight.delete(p),
      (err) => {
        failure ??= err;
        inflight.delete(p);
      },
    );
    inflight.add(p);
    if (failure) throw failure;
  }
  await Promise.all(inflight);
  if (failure) throw failure;
  return lag;
}

async function runCase(s: Setup, mode: Mode, round: number, profileDir?: string): Promise<CaseResult> {
  const from = s.tracker.issued;
  let maxPending = 0;
  const sampler = setInterval(() => {
    for (const r of s.registrations) maxPending = Math.max(maxPending, r.pending());
  }, 10);
  // Profile and CPU cover the whole case, except for backlog: only its delivery.
  let stopProfile: Awaited<ReturnType<typeof profileThisProcess>> | undefined;
  let stopCpu: (() => CpuShare) | undefined;
  const measure = async () => {
    if (profileDir)
      stopProfile = await profileThisProcess(
        join(profileDir, `informer-${mode}-${s.name.replace(/\W+/g, '-')}.cpuprofile`),
      );
    stopCpu = cpuMeter({ bench: process.pid, server: s.serverPid });
  };
  let writesPerSec = STEADY_RATE;
  let writerLagMs = 0;
  let startMs: number | undefined;
  try {
    if (mode !== 'backlog') await measure();
    if (mode === 'steady') {
      writerLagMs = await writeSteadily(s, STEADY_WRITES, STEADY_RATE);
    } else {
      if (mode === 'backlog') await s.gate.hold();
      const base = podCursor;
      podCursor += mode === 'max' ? MAX_WRITES : BACKLOG_WRITES;
      const w = await throughput(mode === 'max' ? MAX_WRITES : BACKLOG_WRITES, WRITERS, (k) =>
        updatePod(s, base + k),
      );
      writesPerSec = w.perSec;
      if (mode === 'backlog') {
        await measure();
        s.gate.release();
        startMs = s.gate.releasedAt;
      }
    }
    const to = s.tracker.issued;
    if (!(await s.tracker.waitAll(to, 120_000)))
      log(`${s.name} ${mode}: not every event reached the handlers within 120 s`);
    const cpu = stopCpu!();
    const delivery = s.tracker.window(from, to, startMs);
    return { setup: s.name, mode, round, delivery, writesPerSec, writerLagMs, maxPending, cpu };
  } finally {
    clearInterval(sampler);
    s.gate.release();
    if (stopProfile)
      logProfile(`${s.name} ${mode}${mode === 'backlog' ? ' (delivery only)' : ''}`, await stopProfile());
  }
}

/**
 * The informer alone: a fresh informer on a client with no server (ReplayClient) lists the
 * PODS Pods, then `n` prepared MODIFIED events are put in its watch at once.
 */
async function aloneCase(base: Pod[], n: number, round: number, profileDir?: string): Promise<CaseResult> {
  let rv = Number(base.reduce((m, p) => Math.max(m, Number(p.metadata?.resourceVersion)), 0));
  const tracker = new DeliveryTracker(n, HANDLERS);
  const events: Pod[] = [];
  for (let k = 0; k < n; k++) {
    const pod = withSeq(base[k % base.length], tracker.take());
    events.push({ ...pod, metadata: { ...pod.metadata, resourceVersion: String(++rv) } });
  }
  const replay = new ReplayClient(base, String(rv - n));
  const factory = new SharedInformerFactory(replay.client, {
    metrics: prometheusReflectorMetrics(new Registry()),
  });
  const informer = factory.informerFor('Pod');
  const registrations = controllerLikeHandlers((pod) => tracker.handled(pod)).map((h) =>
    informer.addEventHandler(h),
  );
  try {
    factory.start();
    if (!(await factory.waitForCacheSync(30_000))) throw new Error('the informer alone did not sync');
    await replay.watching();
    let maxPending = 0;
    const sampler = setInterval(() => {
      for (const r of registrations) maxPending = Math.max(maxPending, r.pending());
    }, 10);
    const stopProfile = profileDir
      ? await profileThisProcess(join(profileDir, `informer-backlog-alone-${n}.cpuprofile`))
      : undefined;
    const stopCpu = cpuMeter({ bench: process.pid });
    const t0 = nowMs();
    for (let seq = 0; seq < n; seq++) tracker.sent(seq, t0);
    replay.push(events);
    if (!(await tracker.waitAll(n, 60_000))) log('informer alone: not every event was handled in 60 s');
    const cpu = stopCpu();
    clearInterval(sampler);
    if (stopProfile) logProfile(aloneName(n), await stopProfile());
    const delivery = tracker.window(0, n, t0);
    return {
      setup: aloneName(n),
      mode: 'backlog',
      round,
      delivery,
      writesPerSec: NaN,
      writerLagMs: 0,
      maxPending,
      cpu,
    };
  } finally {
    factory.shutdown();
  }
}

function logProfile(what: string, top: Array<{ fn: string; selfPct: number }>): void {
  log(
    `profile of ${what}, self time:\n` +
      top.map((t) => `    ${fmt(t.selfPct, 1).padStart(5)}%  ${t.fn}`).join('\n'),
  );
}

interface EventResults {
  cases: CaseResult[];
  setups: Array<{ name: string; how: string; initialSyncMs: number; metrics: ReflectorFigures }>;
}

async function eventsPhase(args: Args, cleanup: Cleanup, nodeArgs: string[]): Promise<EventResults> {
  log('starting an in-process control plane and `kubelab server` in a child process');
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-bench-informer-'));
  cleanup.add('in-process data dir', () => rmSync(dir, { recursive: true, force: true }));
  const [cp, child] = await Promise.all([
    ControlPlane.start({
      dataDir: dir,
      listen: '127.0.0.1:0',
      logger: silentLogger(),
      controllers: false,
    }).then((c) => (cleanup.add('in-process control plane', () => c.stop()), c)),
    startChildControlPlane({ store: 'sqlite', nodeArgs, serverArgs: ['--no-controller-manager'] }).then(
      (c: ChildControlPlane) => (cleanup.add('server child', () => c.stop()), c),
    ),
  ]);

  const setups = [
    await makeSetup(
      'in-process',
      'informer in the ControlPlane, in-process client (cp.client()); writers in-process too',
      cp.client(),
      cp.client(),
      process.pid,
    ),
    await makeSetup(
      'gRPC',
      '`kubelab server` child; informer and writers in the bench process over gRPC (TLS + token), own connections',
      child.client(true),
      child.client(true),
      child.pid,
    ),
  ];
  cleanup.add('informers', () => setups.forEach((s) => s.factory.shutdown()));

  for (const s of setups) {
    log(`${s.name}: warm-up, ${WARMUP_WRITES} updates`);
    const from = s.tracker.issued;
    await throughput(WARMUP_WRITES, WRITERS, (k) => updatePod(s, podCursor + k));
    podCursor += WARMUP_WRITES;
    await s.tracker.waitAll(s.tracker.issued, 60_000);
    const w = s.tracker.window(from, s.tracker.issued);
    log(`${s.name}: warm-up delivered ${w.events} events, ${fmt(w.perSec, 0)}/s`);
  }

  const cases: CaseResult[] = [];
  for (let round = 1; round <= args.rounds; round++) {
    for (const mode of MODES) {
      // Alternate which setup goes first, so that neither always runs on a warmer machine.
      const order = round % 2 ? setups : [...setups].reverse();
      for (const s of order) {
        await sleep(300);
        const r = await runCase(s, mode, round, round === 1 ? args.profileDir : undefined);
        cases.push(r);
        const d = r.delivery;
        log(
          `round ${round} ${s.name} ${mode}: ${fmt(d.perSec, 0)} events/s handled by all ${HANDLERS} ` +
            `(${d.events} events, ${d.missing} missing, ${fmt(d.seconds)} s, first after ${fmt(d.firstMs)} ms); lag p50 ${fmt(d.p50Ms)} ms, ` +
            `p99 ${fmt(d.p99Ms)} ms; writes ${fmt(r.writesPerSec, 0)}/s, p50 ${fmt(d.writeP50Ms)} ms, ` +
            `p99 ${fmt(d.writeP99Ms)} ms; max handler backlog ${r.maxPending}; ` +
            `CPU bench/server ${fmtCpu(r.cpu)}`,
        );
      }
    }
    for (const n of ALONE_SIZES) {
      await sleep(300);
      const alone = await aloneCase(
        setups[0].pods.map((p) => p.obj),
        n,
        round,
        round === 1 ? args.profileDir : undefined,
      );
      cases.push(alone);
      log(
        `round ${round} ${aloneName(n)}: ${fmt(alone.delivery.perSec, 0)} events/s handled by all ${HANDLERS} ` +
          `(${alone.delivery.events} events in ${fmt(alone.delivery.seconds)} s; CPU ${fmtCpu(alone.cpu)})`,
      );
    }
  }

  const out: EventResults = { cases, setups: [] };
  for (const s of setups) {
    out.setups.push({
      name: s.name,
      how: s.how,
      initialSyncMs: s.initialSyncMs,
      metrics: await reflectorFigures(s.registry),
    });
  }
  await cleanup.now('informers');
  await cleanup.now('server child');
  await cleanup.now('in-process control plane');
  await cleanup.now('in-process data dir');
  return out;
}

// ------------------------------------------------------------------------------ memory

interface MemoryRow {
  how: string;
  runs: MemoryChildResult[];
}

function perObject(r: MemoryChildResult): number {
  return (r.after.heapUsed - r.before.heapUsed) / r.objects;
}

function logMemory(what: string, r: MemoryChildResult): void {
  log(
    `memory: ${what}: ${fmt(r.objects, 0)} objects, list+sync ${fmt(r.listSyncMs, 0)} ms ` +
      `(list ${fmt(r.listMs, 0)} ms); heap ${fmt(r.before.heapUsed / 2 ** 20, 1)} → ` +
      `${fmt(r.after.heapUsed / 2 ** 20, 1)} MiB, ${fmt(perObject(r), 0)} bytes/object`,
  );
}

interface MemoryResults {
  objects: number;
  fillSeconds: number;
  rows: MemoryRow[];
}

function runMemoryChild(config: MemoryChildConfig): Promise<MemoryChildResult> {
  const script = join(REPO_ROOT, 'test/bench/lib/informer-memory-child.ts');
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KUBELAB_BENCH_INFORMER_CHILD: JSON.stringify(config) },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8000)));
  return new Promise((resolveRun, rejectRun) => {
    child.once('error', rejectRun);
    child.once('exit', (code) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{'))
        return rejectRun(new Error(`the memory child failed (exit ${code}): ${stderr}`));
      resolveRun(JSON.parse(line) as MemoryChildResult);
    });
  });
}

async function memoryPhase(args: Args, cleanup: Cleanup): Promise<MemoryResults> {
  const n = args.objects;
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-bench-informer-memory-'));
  cleanup.add('memory data dir', () => rmSync(dir, { recursive: true, force: true }));
  const cp = await ControlPlane.start({
    dataDir: dir,
    listen: '127.0.0.1:0',
    logger: silentLogger(),
    controllers: false,
  });
  cleanup.add('memory control plane', () => cp.stop());
  const client = cp.client();
  await ensureNamespace(client, MEMORY_NS);
  log(`memory: creating ${fmt(n, 0)} Pods through the in-process client with ${FILL_WRITERS} writers`);
  const t0 = nowMs();
  let done = 0;
  await fill(n, FILL_WRITERS, async (i) => {
    await client.create(informerPod(`pod-${i}`, MEMORY_NS, i));
    if (++done % 20_000 === 0)
      log(`memory: ${fmt(done, 0)} Pods created (${fmt(done / ((nowMs() - t0) / 1000), 0)}/s)`);
  });
  const fillSeconds = (nowMs() - t0) / 1000;
  log(`memory: ${fmt(n, 0)} Pods in ${fmt(fillSeconds)} s`);

  const grpcRow: MemoryRow = {
    how: 'gRPC (TLS + token), informer in its own process: objects decoded into its own copies',
    runs: [],
  };
  const inprocRow: MemoryRow = {
    how: 'in-process client (cp.client()): objects shared with the apiserver watch cache',
    runs: [],
  };
  for (let rep = 1; rep <= MEMORY_REPS; rep++) {
    // gRPC: the informer in its own process, so its heap holds the client's copies only.
    const r = await runMemoryChild({
      server: `127.0.0.1:${cp.port}`,
      token: cp.adminToken,
      caPem: cp.pki!.caPem,
      syncTimeoutMs: 240_000,
    });
    grpcRow.runs.push(r);
    logMemory(`gRPC, child process (${rep}/${MEMORY_REPS})`, r);

    // In-process: the same ControlPlane; the cache holds the watch cache's frozen objects.
    const registry = new Registry();
    const factory = new SharedInformerFactory(client, { metrics: prometheusReflectorMetrics(registry) });
    cleanup.add('memory informer', () => factory.shutdown());
    const informer = factory.informerFor('Pod');
    await client.list('Pod', { limit: 100 });
    const before = await settledHeap();
    const t1 = nowMs();
    factory.start();
    if (!(await factory.waitForCacheSync(240_000))) throw new Error('the in-process informer did not sync');
    const listSyncMs = nowMs() - t1;
    const after = await settledHeap();
    const run: MemoryChildResult = {
      objects: informer.list().length,
      listSyncMs,
      listMs: (await reflectorFigures(registry)).lastListSeconds * 1000,
      before,
      after,
    };
    inprocRow.runs.push(run);
    logMemory(`in-process (${rep}/${MEMORY_REPS})`, run);
    await cleanup.now('memory informer');
  }
  await cleanup.now('memory control plane');
  await cleanup.now('memory data dir');
  const rows = [grpcRow, inprocRow];
  return { objects: n, fillSeconds, rows };
}

// ------------------------------------------------------------------------------ the report

function fmtCpu(cpu: CpuShare): string {
  return ['bench', 'server'].map((k) => (Number.isFinite(cpu[k]) ? fmt(cpu[k], 2) : '–')).join(' / ');
}

function mib(bytes: number): string {
  return fmt(bytes / 1024 / 1024, 1);
}

function render(
  args: Args,
  machine: MachineInfo,
  objectBytes: number,
  events: EventResults | undefined,
  memory: MemoryResults | undefined,
  started: Date,
  seconds: number,
  load: [number, number],
): string {
  const out: string[] = [];
  out.push(
    `## ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — informer (\`npm run bench:informer\`)`,
  );
  out.push('');
  out.push(
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${fmt(machine.ramGiB, 1)} GiB RAM, ${machine.os}; ` +
      `Node ${machine.node}. kubelab ${machine.commit}. Pods of ${objectBytes} bytes of JSON as stored ` +
      (padBytes() > 0
        ? `(labels, a controller owner reference, a node name and a ${padBytes()}-byte padding annotation). `
        : "(labels, a controller owner reference, a node name and the server's defaults; no padding needed). ") +
      'Control planes on SQLite without their in-process controllers (only the measured informer watches). ' +
      `Whole run: ${fmt(seconds, 0)} s${args.profileDir ? ' (with CPU profiling in round 1)' : ''}; ` +
      `1-minute load average ${fmt(load[0], 1)} at the start, ${fmt(load[1], 1)} at the end` +
      (Math.max(...load) > machine.cores
        ? ' (above the core count: other work shared the machine; read the figures with care).'
        : '.'),
  );
  out.push('');
  if (events) {
    out.push(
      `### Events/s through a SharedIndexInformer with ${HANDLERS} handlers (median of ${args.rounds} interleaved rounds, every round in brackets)`,
    );
    out.push('');
    out.push(
      [
        `- One Pod informer (cluster-wide, from \`SharedInformerFactory\`) with ${HANDLERS} handlers: an index of ` +
          'Pods by owner (reads owner references), counts per app label and node plus the last resourceVersion ' +
          'per Pod (reads labels and spec), and an async one that awaits before putting the owner key in a ' +
          'deduplicating queue. An event counts as handled when all three have returned for it.',
        `- ${fmt(PODS, 0)} Pods exist; each write is an Update (with the resourceVersion) of one of them, ` +
          'round-robin, carrying its sequence number. Lag = handled by all three − the write call, so it ' +
          'includes the write itself: compare it with the write call latency next to it.',
        `- **steady**: one writer issues ${fmt(STEADY_RATE, 0)} updates/s. **max**: ${WRITERS} writers update as ` +
          'fast as the apiserver takes them; the informer keeps up when handled/s = writes/s, the handlers never ' +
          'have a backlog and the lag stays at the write latency — the writes are then the limit, not the informer.',
        `- **backlog**: the informer's own maximum, with no writer competing: its watch is held (ended from this ` +
          `side, the reflector's next watch kept waiting) while ${WRITERS} writers make ` +
          `${fmt(BACKLOG_WRITES, 0)} updates, then let go; the reflector watches from its last resourceVersion, ` +
          'the watch cache replays them all at once; handled/s = updates ÷ (last handled − release). In-process ' +
          'this is the watch-cache replay, the watch queue, reflector, DeltaFIFO, indexer and the three handlers; ' +
          "over gRPC also the server's stream, TLS, HTTP/2 and protobuf decoding in the bench process.",
        '- **informer alone**: the same informer and handlers on a client with no server (test/bench/lib/' +
          'informers.ts `ReplayClient`): prepared MODIFIED events (the in-process Pods, new resourceVersion and ' +
          `sequence number) are put in its watch queue at once, ${ALONE_SIZES.map((n) => fmt(n, 0)).join(' and ')}.`,
        '- CPU: cores used during the case (for backlog: during the delivery) by the bench process (writers and ' +
          'informer, and the server too for in-process) and by the server child, in the median round.',
      ].join('\n'),
    );
    out.push('');
    const rows: string[][] = [];
    const setupNames = [...events.setups.map((s) => s.name), ...ALONE_SIZES.map(aloneName)];
    for (const mode of MODES) {
      for (const name of setupNames) {
        const rs = events.cases.filter((c) => c.mode === mode && c.setup === name);
        if (!rs.length) continue;
        const med = (f: (c: CaseResult) => number) => median(rs.map(f));
        const all = (f: (c: CaseResult) => number, d = 0) => `[${rs.map((c) => fmt(f(c), d)).join(', ')}]`;
        const medianCpu = [...rs].sort((a, b) => a.delivery.perSec - b.delivery.perSec)[(rs.length - 1) >> 1]
          .cpu;
        const isAlone = !events.setups.some((s) => s.name === name);
        const perSec = med((c) => c.delivery.perSec);
        const lagP50 = `${fmt(med((c) => c.delivery.p50Ms))} ${all((c) => c.delivery.p50Ms, 1)}`;
        const lagP99 = `${fmt(med((c) => c.delivery.p99Ms))} ${all((c) => c.delivery.p99Ms, 1)}`;
        const drain = `${fmt(
          med((c) => c.delivery.seconds * 1000),
          0,
        )} ms to drain`;
        const writeLatency = `${fmt(med((c) => c.delivery.writeP50Ms))} / ${fmt(med((c) => c.delivery.writeP99Ms))}`;
        const steadyLate = fmt(Math.max(...rs.map((c) => c.writerLagMs)), 0);
        const writes = isAlone
          ? '– (prepared events)'
          : mode === 'steady'
            ? `${fmt(STEADY_RATE, 0)} asked (writer ≤ ${steadyLate} ms late); ${writeLatency}`
            : `${fmt(
                med((c) => c.writesPerSec),
                0,
              )}; ${writeLatency}`;
        rows.push([
          isAlone ? 'backlog: prepared events put in the watch at once, no server' : MODE_TEXT[mode],
          name,
          `**${fmt(perSec, 0)}** ${all((c) => c.delivery.perSec)}`,
          mode === 'backlog' ? drain : lagP50,
          mode === 'backlog' ? '–' : lagP99,
          writes,
          fmt(
            med((c) => c.maxPending),
            0,
          ),
          String(rs.reduce((n, c) => n + c.delivery.missing, 0)),
          fmtCpu(medianCpu),
        ]);
      }
    }
    out.push(
      table(
        [
          'case',
          'setup',
          'handled events/s',
          'lag p50 ms',
          'lag p99 ms',
          'writes/s; write call p50 / p99 ms',
          'max handler backlog',
          'missing',
          'CPU bench / server',
        ],
        ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        rows,
      ),
    );
    out.push('');
    const aloneRate = (n: number) =>
      median(events.cases.filter((c) => c.setup === aloneName(n)).map((c) => c.delivery.perSec));
    const [small, large] = [ALONE_SIZES[0], ALONE_SIZES[ALONE_SIZES.length - 1]];
    const slowdown = aloneRate(small) / aloneRate(large);
    if (slowdown > 1.5) {
      out.push(
        `With ${fmt(large, 0)} events queued at once the informer alone is ${fmt(slowdown, 1)}× slower per event ` +
          `than with ${fmt(small, 0)}: the watch queue (\`WatchQueue\` in client/client.ts) takes each event ` +
          'with `Array.prototype.shift()`, which copies the whole array once it is too large for V8 to trim in ' +
          'place (~16,000 entries), so draining a large backlog costs O(n²).',
      );
      out.push('');
    }
    out.push(
      'Reflector metrics (`informer_*` from client/cache/metrics.ts) at the end of the phase, per setup:',
    );
    out.push('');
    out.push(
      table(
        ['setup', 'how', 'first list+sync', 'lists', 'watches', 'relists', 'failures', 'watch events'],
        ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
        events.setups.map((s) => [
          s.name,
          s.how,
          `${fmt(s.metrics.listItems, 0)} Pods in ${fmt(s.initialSyncMs, 0)} ms`,
          fmt(s.metrics.lists, 0),
          fmt(s.metrics.watches, 0),
          fmt(s.metrics.relists, 0),
          fmt(s.metrics.failures, 0),
          fmt(s.metrics.events, 0),
        ]),
      ),
    );
    out.push('');
    out.push(
      `Watches = 1 + one per backlog case (the held watch is ended from this side and resumed from the last resourceVersion).`,
    );
    out.push('');
  }
  if (memory) {
    out.push(`### Memory per cached object at ${fmt(memory.objects, 0)} Pods, and the first list+sync`);
    out.push('');
    out.push(
      `${fmt(memory.objects, 0)} Pods created through the in-process client with ${FILL_WRITERS} writers in ` +
        `${fmt(memory.fillSeconds, 0)} s (${fmt(memory.objects / memory.fillSeconds, 0)}/s), in one namespace. ` +
        `Then, ${MEMORY_REPS} times each, interleaved (median first, every repetition in brackets), a cluster-wide ` +
        'Pod informer with no handlers lists them through the API and syncs; heap used is read after full GCs ' +
        '(`--expose-gc`) before the informer starts and after it has synced (code paths and the connection warmed ' +
        'by a small list first). gRPC: the informer runs in a process of its own against the in-process control ' +
        "plane's gRPC port, so its heap holds only the client. In-process: the informer runs inside the control " +
        "plane's process; the apiserver hands it the watch cache's frozen objects, so only the informer's own " +
        'structures are new. list+sync = `factory.start()` → `waitForCacheSync()`; the List call is the ' +
        "reflector's (from `informer_list_duration_seconds`): request, server, transfer and decoding.",
    );
    out.push('');
    out.push(
      table(
        [
          'informer',
          'objects',
          'list+sync ms',
          'of which the List call, ms',
          'heap before → after, MiB (median run)',
          'heap bytes per object',
          'rss Δ MiB',
          '× JSON size',
        ],
        ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        memory.rows.map((row) => {
          const runs = row.runs;
          const med = (f: (r: MemoryChildResult) => number) => median(runs.map(f));
          const all = (f: (r: MemoryChildResult) => number) =>
            `[${runs.map((r) => fmt(f(r), 0)).join(', ')}]`;
          // The run with the median heap growth, for the before → after column.
          const mid = [...runs].sort((a, b) => perObject(a) - perObject(b))[
            Math.floor((runs.length - 1) / 2)
          ];
          return [
            row.how,
            fmt(
              med((r) => r.objects),
              0,
            ),
            `${fmt(
              med((r) => r.listSyncMs),
              0,
            )} ${all((r) => r.listSyncMs)}`,
            `${fmt(
              med((r) => r.listMs),
              0,
            )} ${all((r) => r.listMs)}`,
            `${mib(mid.before.heapUsed)} → ${mib(mid.after.heapUsed)}`,
            `**${fmt(med(perObject), 0)}** ${all(perObject)}`,
            fmt(
              med((r) => (r.after.rss - r.before.rss) / 2 ** 20),
              0,
            ),
            `${fmt(med(perObject) / objectBytes, 2)}×`,
          ];
        }),
      ),
    );
    out.push('');
  }
  return out.join('\n') + '\n';
}

// ------------------------------------------------------------------------------ main

/** Sizes the padding so that a Pod, as stored (with the server's defaults), is ~1 KiB of JSON. */
async function sizePods(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-bench-informer-sizing-'));
  const cp = await ControlPlane.start({
    dataDir: dir,
    listen: '127.0.0.1:0',
    logger: silentLogger(),
    controllers: false,
  });
  try {
    const client = cp.client();
    await ensureNamespace(client, 'bench-sample');
    const stored = async (name: string) => {
      const created = await client.create(informerPod(name, 'bench-sample', 1));
      const { resourceVersion: _rv, ...meta } = created.metadata ?? {};
      return JSON.stringify({ ...created, metadata: meta }).length;
    };
    setPadBytes(0);
    setPadBytes(OBJECT_BYTES - (await stored('bare')));
    return await stored('sample');
  } finally {
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = new Date();
  const t0 = nowMs();
  const loadAtStart = loadavg()[0];
  const cleanup = new Cleanup();
  const fail = (why: string, code: number) => {
    log(why);
    void cleanup.runAll().finally(() => process.exit(code));
  };
  process.once('SIGINT', () => fail('interrupted; cleaning up', 130));
  process.once('SIGTERM', () => fail('terminated; cleaning up', 143));
  const watchdog = setTimeout(
    () => fail('the benchmark took more than 12 minutes; giving up', 1),
    12 * 60_000,
  );

  let events: EventResults | undefined;
  let memory: MemoryResults | undefined;
  let machine: MachineInfo;
  let objectBytes: number;
  try {
    const nodeArgs: string[] = [];
    if (args.profileDir) {
      mkdirSync(args.profileDir, { recursive: true });
      nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${args.profileDir}`);
    }
    // No etcd in this benchmark: the machine's etcd version reads "unknown" and is not printed.
    machine = await machineInfo('http://127.0.0.1:9', REPO_ROOT);
    objectBytes = await sizePods();
    log(`a Pod is ${objectBytes} bytes of JSON as stored (padding annotation of ${padBytes()} bytes)`);
    if (args.phases.has('events')) events = await eventsPhase(args, cleanup, nodeArgs);
    if (args.phases.has('memory')) memory = await memoryPhase(args, cleanup);
  } finally {
    clearTimeout(watchdog);
    log('stopping everything');
    await cleanup.runAll();
  }

  const section = render(args, machine, objectBytes, events, memory, started, (nowMs() - t0) / 1000, [
    loadAtStart,
    loadavg()[0],
  ]);
  process.stdout.write('\n' + section);
  if (args.append) {
    const path = join(REPO_ROOT, 'BENCHMARKS.md');
    appendSection(path, section);
    log(`appended to ${path}`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
