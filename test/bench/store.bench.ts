/**
 * `npm run bench:store`: the store through the apiserver, on both backends, side by side with
 * raw etcd, in one run; appends the figures, the machine and the date to BENCHMARKS.md.
 *
 *   1. durable creates/s with 1 and 32 writers: kubelab/sqlite and kubelab/etcd over gRPC (TLS +
 *      token, control plane in a child process) and over REST (HTTPS/1.1, JSON, the same token),
 *      the same through the in-process client, and raw etcd puts (etcd3) as the reference;
 *   2. watch delivery latency p50/p99/max with 100 watchers (gRPC, REST, etcd), 2,000 Pods
 *      written at 200/s;
 *   3. contention: the watch case again while CPU burners (default 1, --burners N) share the
 *      machine, for kubelab and etcd alike (issue 23: kubelab's watch p99 no worse than etcd's);
 *   4. List of 10,000 Pods through gRPC and REST from the watch cache vs etcd's own range;
 *   5. fan-out: the server's CPU per delivered event with 1,000 REST watchers vs 1,000 gRPC
 *      watchers on one control plane (the issue's goal: REST costs no more than gRPC).
 *
 * The control planes run without their in-process controllers: the benchmark measures the
 * apiserver and the store. With controllers, every Pod created here (there are no nodes) also
 * gets the scheduler's PodScheduled=False status update and a FailedScheduling Event, so each
 * create costs the server three writes, and watchers see a MODIFIED event per Pod besides its
 * ADDED one. `--controllers` runs them anyway.
 *
 * Options: --no-append (print only), --phases writes,watch,contention,list,fanout, --rounds N (write,
 * contention and fan-out rounds, default 2), --scale F (multiplies the object counts), --fanout-watchers N
 * (default 1,000), --profile DIR (run the control-plane children with --cpu-prof into DIR),
 * --controllers (control planes with their in-process controllers, as `kubelab server` runs by
 * default). A run of every phase also keeps the `bench:store` row of the summary table at the
 * top of BENCHMARKS.md current.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Etcd3 } from 'etcd3';
import type { Client } from '../../client/client.js';
import type { Pod } from '../../client/api/types.js';
import { fromApiObject } from '../../client/api/kinds.js';
import { ControlPlane } from '../../main/controlplane.js';
import { silentLogger } from '../../main/logging.js';
import { ListResponse } from '../../proto/gen/kubelab/v1/api.js';
import { startEtcd } from '../support/etcd.js';
import { REPO_ROOT, startChildControlPlane, type ChildControlPlane } from './lib/child.js';
import { cpuMeter, cpuSeconds, findPid, type CpuShare } from './lib/cpu.js';
import { changedNote, machineInfo, type MachineInfo } from './lib/machine.js';
import { appendSection, table } from './lib/report.js';
import { startBurners } from './lib/burner.js';
import { podsPath, RestClient, restWatchHarness } from './lib/rest.js';
import { fmt, median, min, nowMs } from './lib/stats.js';
import {
  benchPod,
  ensureNamespace,
  etcdWatchHarness,
  kubelabWatchHarness,
  padBytes,
  RawListCaller,
  rawGrpcWatchHarness,
  rawValueFactory,
  setPadBytes,
} from './lib/systems.js';
import {
  fill,
  throughput,
  watchLatency,
  type ThroughputResult,
  type WatchHarness,
  type WatchLatencyResult,
} from './lib/workloads.js';
import { upsertSummaryRow } from './lib/report.js';

// ------------------------------------------------------------------------------ settings

interface Args {
  append: boolean;
  phases: Set<string>;
  rounds: number;
  scale: number;
  profileDir?: string;
  /** Run the control planes with their in-process controllers (default: without). */
  controllers: boolean;
  /** Watchers of each kind in the fan-out phase. */
  fanoutWatchers: number;
  /** CPU burners sharing the machine in the contention phase. */
  burners: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    append: true,
    phases: new Set(ALL_PHASES),
    rounds: 2,
    scale: 1,
    controllers: false,
    fanoutWatchers: 1000,
    burners: 1,
  };
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
    else if (a === '--scale') args.scale = Number(value());
    else if (a === '--profile') args.profileDir = resolve(value());
    else if (a === '--controllers') args.controllers = true;
    else if (a === '--no-controllers') args.controllers = false;
    else if (a === '--fanout-watchers') args.fanoutWatchers = Math.max(1, Number(value()));
    else if (a === '--burners') args.burners = Math.max(1, Number(value()));
    else throw new Error(`unknown option ${a}; see the comment at the top of test/bench/store.bench.ts`);
  }
  return args;
}

const ALL_PHASES = ['writes', 'watch', 'contention', 'list', 'fanout'];
const RUN_ID = Date.now().toString(36);
const WATCHERS = 100;
const WATCH_RATE = 200;
/** Writes before the measured ones, received by every watcher before measuring starts. */
const WATCH_WARMUP = 400;
/**
 * The fan-out's write rate: 1,000 watchers at 20 creates/s is 20,000 events/s, about what this
 * process can consume on 2 cores beside the server (the watch phase's 100 × 200/s).
 */
const FANOUT_RATE = 20;
const FANOUT_OBJECTS = 300;
const FANOUT_WARMUP = 40;
const LIST_REPS = 10;
/** Connections the 100 watchers are spread over (gRPC channels, etcd3 clients). */
const WATCH_CHANNELS = 4;
/** A stored Pod's JSON is sized to this. */
const OBJECT_BYTES = 1024;
const GRPC_PATH = 'gRPC, TLS + token, server in a child process';
const REST_PATH = 'REST, HTTPS/1.1 keep-alive + token, JSON, server in a child process';
const INPROC_PATH = 'in-process client (cp.client()), no network';
const RAW_PUTS = 'raw etcd3 puts';
const REST_WATCH_PARSED = 'REST watches, an HTTP/1.1 connection each, events JSON.parse()d';
const REST_WATCH_RAW = 'REST watches, an HTTP/1.1 connection each, lines not parsed';
const REST_LIST_PARSED = 'REST GET, JSON.parse()d';
const REST_LIST_RAW = 'REST GET, bytes received, not parsed';

// ------------------------------------------------------------------------------ cleanup

/** Everything started is stopped in reverse order, on success, failure, Ctrl-C or timeout. */
class Cleanup {
  private readonly steps: Array<{ what: string; run: () => unknown }> = [];
  private running: Promise<void> | undefined;

  add(what: string, run: () => unknown): void {
    this.steps.push({ what, run });
  }

  /** Runs and forgets the most recent step named `what` (for things stopped mid-run). */
  async now(what: string): Promise<void> {
    const i = this.steps.findLastIndex((s) => s.what === what);
    if (i < 0) return;
    const [step] = this.steps.splice(i, 1);
    await step.run();
  }

  runAll(): Promise<void> {
    this.running ??= (async () => {
      while (this.steps.length) {
        const step = this.steps.pop()!;
        try {
          await step.run();
        } catch (err) {
          console.error(`cleanup: ${step.what} failed: ${(err as Error).message}`);
        }
      }
    })();
    return this.running;
  }
}

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

// ------------------------------------------------------------------------------ results

type WriteRun = ThroughputResult & { cpu: CpuShare };

interface WriteRow {
  system: string;
  path: string;
  /** concurrency → every round's result */
  runs: Map<number, WriteRun[]>;
}

interface WatchRow {
  system: string;
  how: string;
  result: WatchLatencyResult;
  cpu: CpuShare;
}

interface ListRow {
  system: string;
  how: string;
  times: number[];
  /** CPU milliseconds per list (mean of the timed ones) of this process, the server, etcd. */
  cpuMs: CpuShare;
}

type FanoutKey = 'none' | 'grpc' | 'grpcShared' | 'rest';

interface FanoutRun {
  result: WatchLatencyResult;
  /** CPU seconds of the server and of this process over the measured creates. */
  serverCpuS: number;
  benchCpuS: number;
  seconds: number;
  /** The server's CPU µs per delivered event beyond the writes alone (this round's no-watcher case). */
  netUsPerEvent: number;
}

interface FanoutRow {
  key: FanoutKey;
  how: string;
  watchers: number;
  connections: number;
  runs: FanoutRun[];
}

interface Results {
  machine?: MachineInfo;
  /** 1-minute load average when the run started and when it ended: others' work shows here. */
  load: { start: number; end?: number };
  objectBytes: number;
  writes: WriteRow[];
  watch: WatchRow[];
  list: ListRow[];
  listDecode?: { decodeMs: number; convertMs: number; bytes: number };
  fanout: FanoutRow[];
  contention?: {
    burners: number;
    rows: Array<{ system: string; how: string; runs: Array<{ result: WatchLatencyResult; cpu: CpuShare }> }>;
  };
}

function best(runs: WriteRun[] | undefined): WriteRun | undefined {
  return runs?.reduce((a, b) => (b.perSec > a.perSec ? b : a));
}

/** The round whose delivery cost the server least per event (the least disturbed one). */
function bestFanout(row: FanoutRow | undefined): FanoutRun | undefined {
  return row?.runs.reduce((a, b) => (b.netUsPerEvent < a.netUsPerEvent ? b : a));
}

function writeRate(results: Results, system: string, path: string, concurrency: number): number {
  const row = results.writes.find((r) => r.system === system && r.path === path);
  return best(row?.runs.get(concurrency))?.perSec ?? NaN;
}

// ------------------------------------------------------------------------------ the phases

interface Systems {
  sqlite: ChildControlPlane;
  etcd: ChildControlPlane;
  sqliteClient: Client;
  etcdClient: Client;
  sqliteRest: RestClient;
  etcdRest: RestClient;
  raw: Etcd3;
  rawWatchClients: Etcd3[];
  rawValue: (name: string, extra?: Record<string, string>) => string;
  etcdEndpoint: string;
  /** Processes whose CPU is reported per case. */
  pids: { sqlite: number; etcdChild: number; etcd: number | undefined };
}

function fmtCpu(cpu: CpuShare): string {
  return ['bench', 'server', 'etcd'].map((k) => (Number.isFinite(cpu[k]) ? fmt(cpu[k], 2) : '–')).join(' / ');
}

function fmtCpuMs(cpu: CpuShare): string {
  return ['bench', 'server', 'etcd'].map((k) => (Number.isFinite(cpu[k]) ? fmt(cpu[k], 0) : '–')).join(' / ');
}

type WriteOp = (i: number) => Promise<unknown>;

/** CPU meter for a case: this process, the kubelab server of the case (if any), etcd. */
function meter(s: Systems, server: number | undefined) {
  return cpuMeter({ bench: process.pid, server, etcd: s.pids.etcd });
}

async function writesPhase(
  s: Systems,
  args: Args,
  results: Results,
  cleanup: Cleanup,
  counts: Map<number, number>,
): Promise<void> {
  const ns = 'bench-writes';
  const kubelabOp =
    (client: Client, tag: string): WriteOp =>
    (i) =>
      client.create(benchPod(`${RUN_ID}-${tag}-${i}`, ns));
  const restOp =
    (client: RestClient, tag: string): WriteOp =>
    (i) =>
      client.create(benchPod(`${RUN_ID}-rest-${tag}-${i}`, ns));
  const rawOp =
    (tag: string): WriteOp =>
    (i) => {
      const name = `${RUN_ID}-${tag}-${i}`;
      return s.raw.put(`/bench-ref-${RUN_ID}/writes/${name}`).value(s.rawValue(name)).exec();
    };

  type Case = { row: WriteRow; op: (tag: string) => WriteOp; server: number | undefined };
  const runRounds = async (cases: Case[]) => {
    for (const { row, op } of cases) {
      log(`warm-up: ${row.system} (${row.path})`);
      await fill(300, 32, op('warm32'));
      await fill(100, 1, op('warm1'));
    }
    for (let round = 1; round <= args.rounds; round++) {
      for (const [concurrency, n] of counts) {
        for (const { row, op, server } of cases) {
          const stop = meter(s, server);
          const r = await throughput(n, concurrency, op(`r${round}c${concurrency}`));
          const run: WriteRun = { ...r, cpu: stop() };
          log(
            `writes round ${round}: ${row.system} (${row.path}), ${concurrency} writer(s): ` +
              `${fmt(r.perSec)}/s (${n} in ${fmt(r.seconds)} s; p50 ${fmt(r.p50Ms)} ms, p99 ${fmt(r.p99Ms)} ms; ` +
              `CPU bench/server/etcd ${fmtCpu(run.cpu)})`,
          );
          const list = row.runs.get(concurrency) ?? [];
          list.push(run);
          row.runs.set(concurrency, list);
        }
      }
    }
  };

  const rawRow: WriteRow = { system: 'etcd (reference)', path: RAW_PUTS, runs: new Map() };
  const sqliteRow: WriteRow = { system: 'kubelab/sqlite', path: GRPC_PATH, runs: new Map() };
  const etcdRow: WriteRow = { system: 'kubelab/etcd', path: GRPC_PATH, runs: new Map() };
  const sqliteRestRow: WriteRow = { system: 'kubelab/sqlite', path: REST_PATH, runs: new Map() };
  const etcdRestRow: WriteRow = { system: 'kubelab/etcd', path: REST_PATH, runs: new Map() };
  results.writes.push(sqliteRow, etcdRow, sqliteRestRow, etcdRestRow, rawRow);
  await ensureNamespace(s.sqliteClient, ns);
  await ensureNamespace(s.etcdClient, ns);
  await runRounds([
    { row: rawRow, op: rawOp, server: undefined },
    { row: sqliteRow, op: (t) => kubelabOp(s.sqliteClient, t), server: s.pids.sqlite },
    { row: etcdRow, op: (t) => kubelabOp(s.etcdClient, t), server: s.pids.etcdChild },
    { row: sqliteRestRow, op: (t) => restOp(s.sqliteRest, t), server: s.pids.sqlite },
    { row: etcdRestRow, op: (t) => restOp(s.etcdRest, t), server: s.pids.etcdChild },
  ]);

  // The in-process client: the control plane in this process, no network.
  log('starting in-process control planes');
  const dirs = [
    mkdtempSync(join(tmpdir(), 'kubelab-bench-inproc-sqlite-')),
    mkdtempSync(join(tmpdir(), 'kubelab-bench-inproc-etcd-')),
  ];
  cleanup.add('in-process data dirs', () => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const cpSqlite = await ControlPlane.start({
    dataDir: dirs[0],
    listen: '127.0.0.1:0',
    store: 'sqlite',
    logger: silentLogger(),
    ...(args.controllers ? {} : { controllers: false as const }),
  });
  cleanup.add('in-process sqlite control plane', () => cpSqlite.stop());
  const cpEtcd = await ControlPlane.start({
    dataDir: dirs[1],
    listen: '127.0.0.1:0',
    store: 'etcd',
    etcdEndpoints: [s.etcdEndpoint],
    etcdPrefix: `/bench-inproc-${RUN_ID}`,
    logger: silentLogger(),
    ...(args.controllers ? {} : { controllers: false as const }),
  });
  cleanup.add('in-process etcd control plane', () => cpEtcd.stop());
  const sqliteIn: WriteRow = { system: 'kubelab/sqlite', path: INPROC_PATH, runs: new Map() };
  const etcdIn: WriteRow = { system: 'kubelab/etcd', path: INPROC_PATH, runs: new Map() };
  results.writes.push(sqliteIn, etcdIn);
  const cs = cpSqlite.client();
  const ce = cpEtcd.client();
  await ensureNamespace(cs, ns);
  await ensureNamespace(ce, ns);
  await runRounds([
    { row: sqliteIn, op: (t) => kubelabOp(cs, t), server: process.pid },
    { row: etcdIn, op: (t) => kubelabOp(ce, t), server: process.pid },
  ]);
  await cleanup.now('in-process etcd control plane');
  await cleanup.now('in-process sqlite control plane');
  await cleanup.now('in-process data dirs');
}

/** Typed gRPC watchers over a few connections of their own, apart from the writer's. */
function typedWatchHarness(cp: ChildControlPlane, writer: Client, ns: string, tag: string): WatchHarness {
  const clients = Array.from({ length: WATCH_CHANNELS }, () => cp.client(true));
  const h = kubelabWatchHarness(writer, clients, ns, `${RUN_ID}-${tag}`);
  return {
    async startWatchers(count, onEvent) {
      const running = await h.startWatchers(count, onEvent);
      return {
        async stop() {
          await running.stop();
          for (const c of clients) c.close();
        },
      };
    },
    write: h.write,
  };
}

async function watchPhase(s: Systems, args: Args, results: Results): Promise<void> {
  const objects = Math.round(2000 * args.scale);
  const options = { watchers: WATCHERS, objects, ratePerSec: WATCH_RATE, warmup: WATCH_WARMUP };
  const ns = 'bench-watch';
  await ensureNamespace(s.sqliteClient, ns);
  await ensureNamespace(s.etcdClient, ns);
  const typed = (cp: ChildControlPlane, writer: Client, tag: string) =>
    typedWatchHarness(cp, writer, ns, tag);
  // Written through the same typed gRPC client as the gRPC rows: only the delivery differs.
  const rest = (cp: ChildControlPlane, writer: Client, tag: string, parse: boolean): WatchHarness =>
    restWatchHarness(writer, cp, ns, `${RUN_ID}-${tag}`, { parse });
  const cases: Array<{
    system: string;
    how: string;
    server: number | undefined;
    harness: () => WatchHarness;
  }> = [
    {
      system: 'kubelab/sqlite',
      how: 'typed gRPC client, objects decoded',
      server: s.pids.sqlite,
      harness: () => typed(s.sqlite, s.sqliteClient, 'watch-typed'),
    },
    {
      system: 'kubelab/etcd',
      how: 'typed gRPC client, objects decoded',
      server: s.pids.etcdChild,
      harness: () => typed(s.etcd, s.etcdClient, 'watch-typed'),
    },
    {
      system: 'kubelab/sqlite',
      how: REST_WATCH_PARSED,
      server: s.pids.sqlite,
      harness: () => rest(s.sqlite, s.sqliteClient, 'watch-rest', true),
    },
    {
      system: 'kubelab/etcd',
      how: REST_WATCH_PARSED,
      server: s.pids.etcdChild,
      harness: () => rest(s.etcd, s.etcdClient, 'watch-rest', true),
    },
    {
      system: 'etcd (reference)',
      how: 'etcd3 watchers, values JSON.parse()d',
      server: undefined,
      harness: () =>
        etcdWatchHarness(s.raw, s.rawWatchClients, `/bench-ref-${RUN_ID}/watch-parsed/`, s.rawValue, true),
    },
    {
      system: 'kubelab/sqlite',
      how: 'raw gRPC streams, bytes not decoded',
      server: s.pids.sqlite,
      harness: () => rawGrpcWatchHarness(s.sqliteClient, s.sqlite, WATCH_CHANNELS, ns, `${RUN_ID}-watch-raw`),
    },
    {
      system: 'kubelab/etcd',
      how: 'raw gRPC streams, bytes not decoded',
      server: s.pids.etcdChild,
      harness: () => rawGrpcWatchHarness(s.etcdClient, s.etcd, WATCH_CHANNELS, ns, `${RUN_ID}-watch-raw`),
    },
    {
      system: 'kubelab/sqlite',
      how: REST_WATCH_RAW,
      server: s.pids.sqlite,
      harness: () => rest(s.sqlite, s.sqliteClient, 'watch-rest-raw', false),
    },
    {
      system: 'kubelab/etcd',
      how: REST_WATCH_RAW,
      server: s.pids.etcdChild,
      harness: () => rest(s.etcd, s.etcdClient, 'watch-rest-raw', false),
    },
    {
      system: 'etcd (reference)',
      how: 'etcd3 watchers, values not parsed',
      server: undefined,
      harness: () =>
        etcdWatchHarness(s.raw, s.rawWatchClients, `/bench-ref-${RUN_ID}/watch-raw/`, s.rawValue, false),
    },
  ];
  for (const c of cases) {
    log(`watch: ${c.system} (${c.how}): ${WATCHERS} watchers, ${objects} writes at ${WATCH_RATE}/s`);
    const stop = meter(s, c.server);
    const result = await watchLatency(c.harness(), options);
    const cpu = stop();
    log(
      `watch: ${c.system} (${c.how}): p50 ${fmt(result.p50Ms)} ms, p99 ${fmt(result.p99Ms)} ms, ` +
        `max ${fmt(result.maxMs)} ms; ${fmt(result.deliveredPerSec, 0)} events/s consumed ` +
        `(${result.samples} samples, ${result.missing} missing, writer lag ≤ ${fmt(result.writerLagMs)} ms; ` +
        `CPU bench/server/etcd ${fmtCpu(cpu)})`,
    );
    results.watch.push({ system: c.system, how: c.how, result, cpu });
  }
}

/**
 * The watch case again while CPU burners share the machine, for kubelab and etcd alike: a busy
 * single-threaded server falls behind its watchers sooner than etcd's many threads do. Rounds
 * are interleaved; the best round of each system is compared.
 */
async function contentionPhase(s: Systems, args: Args, results: Results): Promise<void> {
  const objects = Math.round(2000 * args.scale);
  const options = { watchers: WATCHERS, objects, ratePerSec: WATCH_RATE, warmup: WATCH_WARMUP };
  const ns = 'bench-contention';
  await ensureNamespace(s.sqliteClient, ns);
  await ensureNamespace(s.etcdClient, ns);
  const cases: Array<{
    system: string;
    how: string;
    server: number | undefined;
    harness: (round: number) => WatchHarness;
  }> = [
    {
      system: 'kubelab/sqlite',
      how: 'typed gRPC client, objects decoded',
      server: s.pids.sqlite,
      harness: (round) => typedWatchHarness(s.sqlite, s.sqliteClient, ns, `contention-${round}`),
    },
    {
      system: 'kubelab/etcd',
      how: 'typed gRPC client, objects decoded',
      server: s.pids.etcdChild,
      harness: (round) => typedWatchHarness(s.etcd, s.etcdClient, ns, `contention-${round}`),
    },
    {
      system: 'etcd (reference)',
      how: 'etcd3 watchers, values JSON.parse()d',
      server: undefined,
      harness: (round) =>
        etcdWatchHarness(
          s.raw,
          s.rawWatchClients,
          `/bench-ref-${RUN_ID}/contention-${round}/`,
          s.rawValue,
          true,
        ),
    },
  ];
  const rows = cases.map((c) => ({
    system: c.system,
    how: c.how,
    runs: [] as Array<{ result: WatchLatencyResult; cpu: CpuShare }>,
  }));
  results.contention = { burners: args.burners, rows };
  log(`contention: starting ${args.burners} CPU burner${args.burners === 1 ? '' : 's'}`);
  const burners = startBurners(args.burners);
  try {
    for (let round = 1; round <= args.rounds; round++) {
      for (const [i, c] of cases.entries()) {
        log(
          `contention round ${round}: ${c.system} (${c.how}): ${WATCHERS} watchers, ${objects} writes at ${WATCH_RATE}/s`,
        );
        const stop = cpuMeter({
          bench: process.pid,
          server: c.server,
          etcd: s.pids.etcd,
          burners: burners.pids[0],
        });
        const result = await watchLatency(c.harness(round), options);
        const cpu = stop();
        log(
          `contention round ${round}: ${c.system}: p50 ${fmt(result.p50Ms)} ms, p99 ${fmt(result.p99Ms)} ms, ` +
            `max ${fmt(result.maxMs)} ms (${result.missing} missing; CPU bench/server/etcd ${fmtCpu(cpu)})`,
        );
        rows[i].runs.push({ result, cpu });
      }
    }
  } finally {
    await burners.stop();
  }
}

/** The round with the lowest p99 (the least disturbed one). */
function bestWatchRun<T extends { result: WatchLatencyResult }>(runs: T[] | undefined): T | undefined {
  return runs?.reduce<T | undefined>(
    (a, b) => (a === undefined || b.result.p99Ms < a.result.p99Ms ? b : a),
    undefined,
  );
}

/**
 * With the controllers on, the scheduler marks each new unbound Pod PodScheduled=False once:
 * list a settled cluster, not one whose objects (and cached encodings) are still being
 * rewritten while the lists are timed.
 */
async function untilScheduledOnce(client: Client, ns: string, count: number, system: string): Promise<void> {
  const started = nowMs();
  for (;;) {
    const { items } = await client.list('Pod', { namespace: ns });
    const marked = items.filter((p) => p.status?.conditions?.some((c) => c.type === 'PodScheduled')).length;
    if (marked >= count) break;
    if (nowMs() - started > 120_000) {
      log(
        `list: ${system}: only ${marked}/${count} Pods marked by the scheduler after 120 s; listing anyway`,
      );
      break;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  log(
    `list: ${system} settled (every Pod marked by the scheduler) after ${fmt((nowMs() - started) / 1000)} s`,
  );
}

async function listPhase(s: Systems, args: Args, results: Results, cleanup: Cleanup): Promise<void> {
  const count = Math.round(10_000 * args.scale);
  const ns = 'bench-list';
  const rawPrefix = `/bench-ref-${RUN_ID}/list/`;
  for (const [system, client] of [
    ['kubelab/sqlite', s.sqliteClient],
    ['kubelab/etcd', s.etcdClient],
  ] as const) {
    await ensureNamespace(client, ns);
    const t = nowMs();
    await fill(count, 32, (i) => client.create(benchPod(`${RUN_ID}-list-${i}`, ns)));
    log(`list: created ${count} Pods in ${system} in ${fmt((nowMs() - t) / 1000)} s`);
    if (args.controllers) await untilScheduledOnce(client, ns, count, system);
  }
  const t = nowMs();
  await fill(count, 32, (i) => {
    const name = `${RUN_ID}-list-${i}`;
    return s.raw
      .put(rawPrefix + name)
      .value(s.rawValue(name))
      .exec();
  });
  log(`list: put ${count} values in etcd in ${fmt((nowMs() - t) / 1000)} s`);

  const rawSqlite = new RawListCaller(s.sqlite.server, s.sqlite.token, s.sqlite.caPem);
  const rawEtcd = new RawListCaller(s.etcd.server, s.etcd.token, s.etcd.caPem);
  cleanup.add('raw list clients', () => (rawSqlite.close(), rawEtcd.close()));
  const listReq = { kind: 'Pod', namespace: ns };
  let lastBytes: Buffer | undefined;
  const minBytes = count * (padBytes() + 100);
  const cases: Array<{ row: ListRow; run: () => Promise<number>; server?: number; bytes?: boolean }> = [
    {
      row: { system: 'etcd (reference)', how: 'etcd3 getAll().prefix().buffers()', times: [], cpuMs: {} },
      run: async () => Object.keys(await s.raw.getAll().prefix(rawPrefix).buffers()).length,
    },
    {
      row: { system: 'kubelab/sqlite', how: 'typed gRPC client list()', times: [], cpuMs: {} },
      run: async () => (await s.sqliteClient.list('Pod', { namespace: ns })).items.length,
      server: s.pids.sqlite,
    },
    {
      row: { system: 'kubelab/etcd', how: 'typed gRPC client list()', times: [], cpuMs: {} },
      run: async () => (await s.etcdClient.list('Pod', { namespace: ns })).items.length,
      server: s.pids.etcdChild,
    },
    {
      row: { system: 'kubelab/sqlite', how: 'raw gRPC call, answer not decoded', times: [], cpuMs: {} },
      run: async () => (lastBytes = await rawSqlite.list(listReq)).length,
      server: s.pids.sqlite,
      bytes: true,
    },
    {
      row: { system: 'kubelab/etcd', how: 'raw gRPC call, answer not decoded', times: [], cpuMs: {} },
      run: async () => (await rawEtcd.list(listReq)).length,
      server: s.pids.etcdChild,
      bytes: true,
    },
    {
      row: { system: 'kubelab/sqlite', how: REST_LIST_PARSED, times: [], cpuMs: {} },
      run: async () => (await s.sqliteRest.listParsed(podsPath(ns))).length,
      server: s.pids.sqlite,
    },
    {
      row: { system: 'kubelab/etcd', how: REST_LIST_PARSED, times: [], cpuMs: {} },
      run: async () => (await s.etcdRest.listParsed(podsPath(ns))).length,
      server: s.pids.etcdChild,
    },
    {
      row: { system: 'kubelab/sqlite', how: REST_LIST_RAW, times: [], cpuMs: {} },
      run: () => s.sqliteRest.listBytes(podsPath(ns)),
      server: s.pids.sqlite,
      bytes: true,
    },
    {
      row: { system: 'kubelab/etcd', how: REST_LIST_RAW, times: [], cpuMs: {} },
      run: () => s.etcdRest.listBytes(podsPath(ns)),
      server: s.pids.etcdChild,
      bytes: true,
    },
  ];
  // Two warm-ups, then the repetitions interleaved so that noise hits every system alike.
  for (let rep = -2; rep < LIST_REPS; rep++) {
    for (const c of cases) {
      const pids = { bench: process.pid, server: c.server, etcd: s.pids.etcd };
      const cpu0 = Object.entries(pids).map(([, pid]) => (pid ? cpuSeconds(pid) : NaN));
      const t0 = nowMs();
      const n = await c.run();
      const ms = nowMs() - t0;
      const cpu1 = Object.entries(pids).map(([, pid]) => (pid ? cpuSeconds(pid) : NaN));
      if (c.bytes ? n < minBytes : n !== count)
        throw new Error(`${c.row.system} (${c.row.how}) answered ${n} ${c.bytes ? 'bytes' : 'objects'}`);
      if (rep < 0) continue;
      c.row.times.push(ms);
      Object.keys(pids).forEach((k, i) => {
        c.row.cpuMs[k] = (c.row.cpuMs[k] ?? 0) + ((cpu1[i] - cpu0[i]) * 1000) / LIST_REPS;
      });
    }
  }
  for (const c of cases) {
    results.list.push(c.row);
    log(
      `list: ${c.row.system} (${c.row.how}): median ${fmt(median(c.row.times))} ms, min ${fmt(min(c.row.times))} ms ` +
        `[${c.row.times.map((x) => fmt(x, 0)).join(', ')}]; CPU ms per list bench/server/etcd ${fmtCpuMs(c.row.cpuMs)}`,
    );
  }
  // Where the typed client's time goes: protobuf decoding, then unwrapping each ApiObject.
  if (lastBytes) {
    const decode: number[] = [];
    const convert: number[] = [];
    for (let i = 0; i < 7; i++) {
      const t0 = nowMs();
      const res = ListResponse.decode(lastBytes);
      const t1 = nowMs();
      const items = (res.items ?? []).map((o) => fromApiObject(o)?.object);
      const t2 = nowMs();
      if (items.length !== count) throw new Error(`decoded ${items.length} items, expected ${count}`);
      if (i >= 2) {
        decode.push(t1 - t0);
        convert.push(t2 - t1);
      }
    }
    results.listDecode = { decodeMs: median(decode), convertMs: median(convert), bytes: lastBytes.length };
    log(
      `list: client-side decode of ${fmt(lastBytes.length / 1024 / 1024)} MiB: ListResponse.decode ` +
        `${fmt(median(decode))} ms, fromApiObject ${fmt(median(convert))} ms`,
    );
  }
  await cleanup.now('raw list clients');
}

/**
 * The same creates, at a steady rate, delivered to N raw gRPC watchers or N REST watchers of
 * kubelab/sqlite, and to none: the server's CPU over the measured creates, less that of the
 * creates alone, per delivered event, is what each door's fan-out costs. HTTP/1.1 cannot carry
 * two watches on one connection, so the REST watchers hold N connections; gRPC is measured both
 * with N connections (like for like: as many TLS sessions and socket writes) and over the watch
 * phase's 4 (what HTTP/2 multiplexing saves). Neither client decodes the events, so the bench
 * process, which shares the 2 cores with the server, does little per event on either. The cases
 * take turns within a round, in reverse order every other round.
 */
async function fanoutPhase(s: Systems, args: Args, results: Results): Promise<void> {
  const ns = 'bench-fanout';
  const watchers = args.fanoutWatchers;
  const objects = Math.round(FANOUT_OBJECTS * args.scale);
  await ensureNamespace(s.sqliteClient, ns);
  const rows: Array<FanoutRow & { harness: (tag: string) => WatchHarness }> = [
    {
      key: 'none',
      how: 'no watchers: the creates alone',
      watchers: 0,
      connections: 0,
      runs: [],
      harness: (tag) => kubelabWatchHarness(s.sqliteClient, [], ns, tag),
    },
    {
      key: 'grpc',
      how: 'raw gRPC watch streams, a connection each, bytes not decoded',
      watchers,
      connections: watchers,
      runs: [],
      harness: (tag) => rawGrpcWatchHarness(s.sqliteClient, s.sqlite, watchers, ns, tag),
    },
    {
      key: 'grpcShared',
      how: `raw gRPC watch streams over ${WATCH_CHANNELS} connections, bytes not decoded`,
      watchers,
      connections: WATCH_CHANNELS,
      runs: [],
      harness: (tag) => rawGrpcWatchHarness(s.sqliteClient, s.sqlite, WATCH_CHANNELS, ns, tag),
    },
    {
      key: 'rest',
      how: 'REST watches, an HTTP/1.1 connection each, lines not parsed',
      watchers,
      connections: watchers,
      runs: [],
      harness: (tag) => restWatchHarness(s.sqliteClient, s.sqlite, ns, tag, { parse: false }),
    },
  ];
  results.fanout.push(...rows);
  for (let round = 1; round <= args.rounds; round++) {
    const order = round % 2 ? rows : [...rows].reverse();
    const measured = new Map<FanoutKey, Omit<FanoutRun, 'netUsPerEvent'>>();
    for (const row of order) {
      log(
        `fan-out round ${round}: ${row.how}: ${row.watchers} watchers, ${objects} creates at ${FANOUT_RATE}/s`,
      );
      let cpu0 = { server: NaN, bench: NaN, t: 0 };
      let cpu1 = cpu0;
      const sample = () => ({
        server: cpuSeconds(s.pids.sqlite),
        bench: cpuSeconds(process.pid),
        t: nowMs(),
      });
      const result = await watchLatency(row.harness(`${RUN_ID}-fanout-r${round}-${row.key.toLowerCase()}`), {
        watchers: row.watchers,
        objects,
        ratePerSec: FANOUT_RATE,
        warmup: FANOUT_WARMUP,
        window: { start: () => (cpu0 = sample()), end: () => (cpu1 = sample()) },
      });
      const run = {
        result,
        serverCpuS: cpu1.server - cpu0.server,
        benchCpuS: cpu1.bench - cpu0.bench,
        seconds: (cpu1.t - cpu0.t) / 1000,
      };
      measured.set(row.key, run);
      log(
        `fan-out round ${round}: ${row.how}: server CPU ${fmt(run.serverCpuS)} s over ${fmt(run.seconds)} s ` +
          `(bench ${fmt(run.benchCpuS)} s); ${result.samples} events delivered, ${result.missing} missing; ` +
          `p50 ${fmt(result.p50Ms)} ms, p99 ${fmt(result.p99Ms)} ms`,
      );
    }
    const base = measured.get('none')?.serverCpuS ?? 0;
    for (const row of rows) {
      const run = measured.get(row.key)!;
      const events = run.result.samples;
      row.runs.push({ ...run, netUsPerEvent: events ? ((run.serverCpuS - base) * 1e6) / events : NaN });
    }
    const net = (key: FanoutKey) => rows.find((r) => r.key === key)?.runs.at(-1)?.netUsPerEvent ?? NaN;
    log(
      `fan-out round ${round}: server CPU per delivered event beyond the creates: REST ${fmt(net('rest'))} µs, ` +
        `gRPC ${fmt(net('grpc'))} µs (a connection each), ${fmt(net('grpcShared'))} µs (${WATCH_CHANNELS} connections); ` +
        `REST ÷ gRPC ${fmt(net('rest') / net('grpc'))}× / ${fmt(net('rest') / net('grpcShared'))}×`,
    );
  }
}

// ------------------------------------------------------------------------------ the report

interface Target {
  what: string;
  /** For the summary table's result column. */
  short: string;
  value: number;
  unit: string;
  goal: string;
  pass: boolean;
}

/** The figures the targets and the summary row are made of. */
function keyFigures(r: Results) {
  const listOf = (system: string, how: string) =>
    median(r.list.find((l) => l.system === system && l.how === how)?.times ?? []);
  const watchOf = (system: string, how: (h: string) => boolean) =>
    r.watch.find((w) => w.system === system && how(w.how))?.result.p99Ms ?? NaN;
  const fanout = (key: FanoutKey) => bestFanout(r.fanout.find((f) => f.key === key))?.netUsPerEvent ?? NaN;
  const contended = (system: string) =>
    bestWatchRun(r.contention?.rows.find((w) => w.system === system)?.runs)?.result.p99Ms ?? NaN;
  return {
    sqlite32: writeRate(r, 'kubelab/sqlite', GRPC_PATH, 32),
    etcd32: writeRate(r, 'kubelab/etcd', GRPC_PATH, 32),
    sqliteRest32: writeRate(r, 'kubelab/sqlite', REST_PATH, 32),
    raw32: writeRate(r, 'etcd (reference)', RAW_PUTS, 32),
    sqliteInproc32: writeRate(r, 'kubelab/sqlite', INPROC_PATH, 32),
    etcdInproc32: writeRate(r, 'kubelab/etcd', INPROC_PATH, 32),
    watchP99: watchOf('kubelab/sqlite', (h) => h.startsWith('typed')),
    restWatchP99: watchOf('kubelab/sqlite', (h) => h === REST_WATCH_PARSED),
    etcdWatchP99: watchOf('etcd (reference)', (h) => h.includes('JSON.parse')),
    sqliteList: listOf('kubelab/sqlite', 'typed gRPC client list()'),
    sqliteRawList: listOf('kubelab/sqlite', 'raw gRPC call, answer not decoded'),
    restList: listOf('kubelab/sqlite', REST_LIST_PARSED),
    restRawList: listOf('kubelab/sqlite', REST_LIST_RAW),
    etcdRange: listOf('etcd (reference)', 'etcd3 getAll().prefix().buffers()'),
    contendedWatchP99: contended('kubelab/sqlite'),
    contendedEtcdWatchP99: contended('etcd (reference)'),
    fanoutRest: fanout('rest'),
    fanoutGrpc: fanout('grpc'),
    fanoutGrpcShared: fanout('grpcShared'),
  };
}

function targets(r: Results): Target[] {
  const k = keyFigures(r);
  const t = (
    what: string,
    short: string,
    value: number,
    unit: string,
    goal: string,
    pass: boolean,
  ): Target => ({
    what,
    short,
    value,
    unit,
    goal,
    pass: Number.isFinite(value) && pass,
  });
  const watchers = fmt(r.fanout.find((f) => f.key === 'rest')?.watchers ?? NaN, 0);
  return [
    t(
      'kubelab/sqlite creates/s through the apiserver (in-process client, 32 writers) ÷ raw etcd puts/s (32 writers)',
      'in-process creates ÷ raw etcd',
      k.sqliteInproc32 / k.raw32,
      '×',
      '≥ 1.0',
      k.sqliteInproc32 / k.raw32 >= 1,
    ),
    t(
      'kubelab/sqlite ÷ kubelab/etcd creates/s through the apiserver (in-process client, 32 writers)',
      'SQLite ÷ etcd in-process creates',
      k.sqliteInproc32 / k.etcdInproc32,
      '×',
      '≥ 2.0',
      k.sqliteInproc32 / k.etcdInproc32 >= 2,
    ),
    t(
      'kubelab/sqlite creates/s (gRPC, 32 writers) ÷ raw etcd puts/s (32 writers)',
      'gRPC creates ÷ raw etcd',
      k.sqlite32 / k.raw32,
      '×',
      '≥ 1.0',
      k.sqlite32 / k.raw32 >= 1,
    ),
    t(
      'kubelab/sqlite creates/s (REST, 32 writers) ÷ raw etcd puts/s (32 writers)',
      'REST creates ÷ raw etcd',
      k.sqliteRest32 / k.raw32,
      '×',
      '≥ 1.0',
      k.sqliteRest32 / k.raw32 >= 1,
    ),
    t(
      'kubelab/sqlite ÷ kubelab/etcd creates/s (gRPC, 32 writers)',
      'SQLite ÷ etcd gRPC creates',
      k.sqlite32 / k.etcd32,
      '×',
      '≥ 2.0',
      k.sqlite32 / k.etcd32 >= 2,
    ),
    t(
      'watch delivery p99, kubelab/sqlite (100 typed gRPC watchers)',
      'gRPC watch p99',
      k.watchP99,
      'ms',
      '≤ 20 ms',
      k.watchP99 <= 20,
    ),
    t(
      'watch delivery p99, kubelab/sqlite (100 REST watchers, events JSON.parse()d)',
      'REST watch p99',
      k.restWatchP99,
      'ms',
      '≤ 20 ms',
      k.restWatchP99 <= 20,
    ),
    t(
      `watch delivery p99 while ${r.contention?.burners ?? 1} CPU burner(s) share the machine: kubelab/sqlite (100 typed gRPC watchers) ÷ etcd (100 etcd3 watchers, values parsed), best of each`,
      'contended watch p99 ÷ etcd',
      k.contendedWatchP99 / k.contendedEtcdWatchP99,
      '×',
      '≤ 1.0',
      k.contendedWatchP99 / k.contendedEtcdWatchP99 <= 1,
    ),
    t(
      'list 10,000 Pods through gRPC from the watch cache, kubelab/sqlite (typed client, median)',
      'typed gRPC list',
      k.sqliteList,
      'ms',
      '≤ 30 ms',
      k.sqliteList <= 30,
    ),
    t(
      'list 10,000 Pods through gRPC from the watch cache, kubelab/sqlite (answer as received, not decoded, like the etcd3 buffers; median)',
      'raw gRPC list',
      k.sqliteRawList,
      'ms',
      '≤ 30 ms',
      k.sqliteRawList <= 30,
    ),
    t(
      'list 10,000 Pods through REST from the watch cache, kubelab/sqlite (JSON.parse()d, median)',
      'REST list parsed',
      k.restList,
      'ms',
      '≤ 30 ms',
      k.restList <= 30,
    ),
    t(
      'list 10,000 Pods through REST from the watch cache, kubelab/sqlite (bytes received, not parsed; median)',
      'REST list raw',
      k.restRawList,
      'ms',
      '≤ 30 ms',
      k.restRawList <= 30,
    ),
    t(
      'etcd range of 10,000 (median) ÷ kubelab/sqlite list through gRPC, not decoded (median)',
      'etcd range ÷ raw gRPC list',
      k.etcdRange / k.sqliteRawList,
      '×',
      '≥ 2.0',
      k.etcdRange / k.sqliteRawList >= 2,
    ),
    t(
      'etcd range of 10,000 (median) ÷ kubelab/sqlite list (typed client, median)',
      'etcd range ÷ typed list',
      k.etcdRange / k.sqliteList,
      '×',
      '≥ 2.0',
      k.etcdRange / k.sqliteList >= 2,
    ),
    t(
      `watch fan-out to ${watchers} watchers, kubelab/sqlite: the server's CPU per delivered event beyond the creates, REST ÷ gRPC (a connection per watcher for both)`,
      'fan-out CPU REST ÷ gRPC',
      k.fanoutRest / k.fanoutGrpc,
      '×',
      '≤ 1.0',
      k.fanoutRest / k.fanoutGrpc <= 1,
    ),
    t(
      `watch fan-out to ${watchers} watchers, kubelab/sqlite: the same, REST (a connection each) ÷ gRPC over ${WATCH_CHANNELS} connections`,
      `fan-out CPU REST ÷ gRPC over ${WATCH_CHANNELS} connections`,
      k.fanoutRest / k.fanoutGrpcShared,
      '×',
      '≤ 1.0',
      k.fanoutRest / k.fanoutGrpcShared <= 1,
    ),
  ];
}

/** The `bench:store` row of the summary table at the top of BENCHMARKS.md. */
function summaryRow(r: Results, started: Date) {
  const k = keyFigures(r);
  const m = r.machine;
  const ms = (v: number) => `${fmt(v)} ms`;
  const us = (v: number) => `${fmt(v)} µs`;
  const ts = targets(r);
  const measured = ts.filter((t) => Number.isFinite(t.value));
  const missed = measured.filter((t) => !t.pass);
  const shown = (t: Target) =>
    `${t.short} ${t.unit === '×' ? `${fmt(t.value)}×` : ms(t.value)} (goal ${t.goal})`;
  const watchers = fmt(r.fanout.find((f) => f.key === 'rest')?.watchers ?? NaN, 0);
  return {
    bench: '`bench:store`',
    date: started.toISOString().slice(0, 16).replace('T', ' '),
    machine: m ? `${m.cpu}, ${m.cores} cores, ${fmt(m.ramGiB, 1)} GiB` : 'unknown',
    figures:
      `creates/s, 32 writers: kubelab/sqlite over gRPC ${fmt(k.sqlite32, 0)}/s = ${fmt(k.sqlite32 / k.raw32)}× raw etcd puts (${fmt(k.raw32, 0)}/s), ` +
      `over REST ${fmt(k.sqliteRest32, 0)}/s = ${fmt(k.sqliteRest32 / k.raw32)}×, in-process ${fmt(k.sqliteInproc32, 0)}/s = ${fmt(k.sqliteInproc32 / k.raw32)}×; ` +
      `watch delivery p99, 100 watchers: kubelab/sqlite typed gRPC ${ms(k.watchP99)}, REST (parsed) ${ms(k.restWatchP99)}, etcd reference ${ms(k.etcdWatchP99)}; ` +
      `the same with ${r.contention?.burners ?? 1} CPU burner(s): kubelab/sqlite ${ms(k.contendedWatchP99)}, etcd ${ms(k.contendedEtcdWatchP99)}; ` +
      `list 10,000 Pods, median: typed gRPC ${ms(k.sqliteList)}, raw gRPC ${ms(k.sqliteRawList)}, REST parsed ${ms(k.restList)}, REST raw ${ms(k.restRawList)}, etcd range ${ms(k.etcdRange)}; ` +
      `fan-out to ${watchers} watchers, server CPU per delivered event: REST ${us(k.fanoutRest)}, gRPC ${us(k.fanoutGrpc)} (a connection each; ${fmt(k.fanoutRest / k.fanoutGrpc)}×), ` +
      `gRPC over ${WATCH_CHANNELS} connections ${us(k.fanoutGrpcShared)} (${fmt(k.fanoutRest / k.fanoutGrpcShared)}×)`,
    result:
      `${measured.length - missed.length} of ${measured.length} targets met` +
      (missed.length ? `; misses: ${missed.map(shown).join(', ')}` : '') +
      (m?.changed.length ? "; measured with others' uncommitted changes in the tree" : ''),
  };
}

function render(r: Results, args: Args, started: Date, seconds: number): string {
  const m = r.machine;
  const out: string[] = [];
  out.push(`## ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  out.push('');
  if (m) {
    out.push(
      `Machine: ${m.cpu}, ${m.cores} cores, ${fmt(m.ramGiB, 1)} GiB RAM, ${m.os}; Node ${m.node}; etcd ${m.etcd}. ` +
        `kubelab ${m.commit}. ` +
        `Pods of ${r.objectBytes} bytes of JSON as stored (a ${padBytes()}-byte annotation). ` +
        (args.controllers
          ? 'Control planes as `kubelab server` runs them by default, with their in-process controllers (--controllers). '
          : 'Control planes without their in-process controllers (`kubelab server --no-controller-manager`): the apiserver and the store alone. ') +
        `Whole run: ${fmt(seconds, 0)} s${args.scale !== 1 ? `, object counts scaled by ${args.scale}` : ''}. ` +
        'CPU columns: cores used during the case by this benchmark process (the client; also the ' +
        'server for in-process rows), the kubelab server child, and etcd. ' +
        `1-minute load average at the start ${fmt(r.load.start)}, at the end ${fmt(r.load.end ?? NaN)}.` +
        (changedNote(m) ? ` ${changedNote(m)}` : ''),
    );
    out.push('');
  }
  if (r.writes.length) {
    const concurrencies = [...new Set(r.writes.flatMap((w) => [...w.runs.keys()]))].sort((a, b) => a - b);
    const counts = concurrencies.map((c) => r.writes.find((w) => w.runs.get(c))?.runs.get(c)?.[0]?.ops ?? 0);
    out.push(
      `### Durable creates/s (best of ${args.rounds} interleaved rounds, every round in brackets; ` +
        'per-call p50/p99 ms and CPU bench/server/etcd of the best)',
    );
    out.push('');
    out.push(
      table(
        [
          'system',
          'path',
          ...concurrencies.map((c, i) => `${c} writer${c > 1 ? 's' : ''} (${fmt(counts[i], 0)} Pods)`),
        ],
        ['l', 'l', ...concurrencies.map(() => 'r' as const)],
        r.writes.map((w) => [
          w.system,
          w.path,
          ...concurrencies.map((c) => {
            const runs = w.runs.get(c);
            const b = best(runs);
            if (!runs || !b) return 'n/a';
            return (
              `**${fmt(b.perSec, 0)}/s** [${runs.map((x) => fmt(x.perSec, 0)).join(', ')}]; ` +
              `${fmt(b.p50Ms)}/${fmt(b.p99Ms)} ms; CPU ${fmtCpu(b.cpu)}`
            );
          }),
        ]),
      ),
    );
    out.push('');
  }
  if (r.watch.length) {
    const w0 = r.watch[0].result;
    out.push(
      `### Watch delivery latency (${w0.watchers} watchers on one namespace/prefix: gRPC and etcd3 ones over ${WATCH_CHANNELS} connections, ` +
        'REST ones on a connection each (HTTP/1.1 carries one stream at a time); kubelab Pods created through the typed gRPC client for every row; ' +
        `${fmt(w0.objects, 0)} creates at ${w0.ratePerSec}/s after ${WATCH_WARMUP} warm-up creates were delivered; ` +
        'latency = event consumed − write call; ' +
        `keeping up means ${fmt(w0.watchers * w0.ratePerSec, 0)} events/s)`,
    );
    out.push('');
    out.push(
      table(
        ['system', 'watchers', 'p50 ms', 'p99 ms', 'max ms', 'events/s', 'missing', 'CPU bench/server/etcd'],
        ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
        r.watch.map(({ system, how, result: x, cpu }) => [
          system,
          how,
          fmt(x.p50Ms),
          fmt(x.p99Ms),
          fmt(x.maxMs),
          fmt(x.deliveredPerSec, 0),
          fmt(x.missing, 0),
          fmtCpu(cpu),
        ]),
      ),
    );
    out.push('');
  }
  if (r.contention) {
    const c = r.contention;
    out.push(
      `### Watch delivery latency under CPU contention (the watch case above while ${c.burners} process${c.burners === 1 ? '' : 'es'} ` +
        `spinning on the CPU share${c.burners === 1 ? 's' : ''} the machine with every system alike; ${args.rounds} interleaved rounds, ` +
        "the round with the lowest p99 shown, every round's p99 in brackets)",
    );
    out.push('');
    out.push(
      table(
        ['system', 'watchers', 'p50 ms', 'p99 ms', 'max ms', 'events/s', 'missing', 'CPU bench/server/etcd'],
        ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
        c.rows.map(({ system, how, runs }) => {
          const b = bestWatchRun(runs);
          if (!b) return [system, how, 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a'];
          const x = b.result;
          return [
            system,
            how,
            fmt(x.p50Ms),
            `**${fmt(x.p99Ms)}** [${runs.map((u) => fmt(u.result.p99Ms)).join(', ')}]`,
            fmt(x.maxMs),
            fmt(x.deliveredPerSec, 0),
            fmt(x.missing, 0),
            fmtCpu(b.cpu),
          ];
        }),
      ),
    );
    out.push('');
  }
  if (r.list.length) {
    out.push(
      `### List all ${fmt(Math.round(10_000 * args.scale), 0)} Pods (${LIST_REPS} interleaved repetitions after 2 warm-ups)`,
    );
    out.push('');
    out.push(
      table(
        ['system', 'how', 'median ms', 'min ms', 'CPU ms per list: bench / server / etcd'],
        ['l', 'l', 'r', 'r', 'r'],
        r.list.map((l) => [l.system, l.how, fmt(median(l.times)), fmt(min(l.times)), fmtCpuMs(l.cpuMs)]),
      ),
    );
    out.push('');
    if (r.listDecode) {
      out.push(
        `Decoding the ${fmt(r.listDecode.bytes / 1024 / 1024)} MiB answer in the typed client: ` +
          `\`ListResponse.decode\` ${fmt(r.listDecode.decodeMs)} ms, unwrapping the ApiObjects ${fmt(r.listDecode.convertMs)} ms.`,
      );
      out.push('');
    }
  }
  if (r.fanout.length) {
    const spec = r.fanout.find((f) => f.runs.length && f.watchers)?.runs[0]?.result;
    const net = (key: FanoutKey) => bestFanout(r.fanout.find((f) => f.key === key))?.netUsPerEvent ?? NaN;
    const grpc = net('grpc');
    out.push(
      `### Watch fan-out: the server's CPU per delivered event (kubelab/sqlite, ${fmt(spec?.objects ?? NaN, 0)} creates at ` +
        `${spec?.ratePerSec ?? FANOUT_RATE}/s through the typed gRPC client after ${FANOUT_WARMUP} warm-up creates were delivered; ` +
        `best of ${args.rounds} interleaved rounds, every round in brackets; CPU over the measured creates only)`,
    );
    out.push('');
    out.push(
      "Fan-out µs per event = (the server's CPU seconds − those of the same creates without watchers, in the same round) ÷ " +
        'events delivered. Neither client decodes the events (gRPC: bytes; REST: lines split, the two annotations read ' +
        'from the bytes), so the benchmark process, which shares the cores with the server, does little per event on either.',
    );
    out.push('');
    out.push(
      table(
        [
          'watchers',
          'connections',
          'server CPU s',
          'fan-out µs per event',
          '÷ gRPC, a connection each',
          'p50 / p99 ms',
          'events/s',
          'missing',
          'CPU cores bench / server',
        ],
        ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        r.fanout.map((f) => {
          const b = bestFanout(f);
          if (!b) return [f.how, fmt(f.connections, 0), 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a'];
          const x = b.result;
          const none = f.key === 'none';
          return [
            none ? f.how : `${fmt(f.watchers, 0)} ${f.how}`,
            fmt(f.connections, 0),
            `${fmt(b.serverCpuS)} [${f.runs.map((u) => fmt(u.serverCpuS)).join(', ')}]`,
            none
              ? `(${fmt((b.serverCpuS * 1e6) / x.objects, 0)} µs per create, the server's idle work included)`
              : `**${fmt(b.netUsPerEvent)}** [${f.runs.map((u) => fmt(u.netUsPerEvent)).join(', ')}]`,
            none ? '–' : `${fmt(b.netUsPerEvent / grpc)}×`,
            none ? '–' : `${fmt(x.p50Ms)} / ${fmt(x.p99Ms)}`,
            none ? '–' : fmt(x.deliveredPerSec, 0),
            none ? '–' : fmt(x.missing, 0),
            `${fmt(b.benchCpuS / b.seconds)} / ${fmt(b.serverCpuS / b.seconds)}`,
          ];
        }),
      ),
    );
    out.push('');
  }
  const ts = targets(r);
  out.push('### Targets (ratios from this run)');
  out.push('');
  out.push(
    table(
      ['target', 'value', 'goal', 'result'],
      ['l', 'r', 'l', 'l'],
      ts.map((t) => [
        t.what,
        t.unit === '×' ? `${fmt(t.value)}×` : `${fmt(t.value)} ms`,
        t.goal,
        Number.isFinite(t.value) ? (t.pass ? 'PASS' : '**MISS**') : 'n/a',
      ]),
    ),
  );
  return out.join('\n') + '\n';
}

// ------------------------------------------------------------------------------ main

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = new Date();
  const t0 = nowMs();
  const cleanup = new Cleanup();
  const fail = (why: string, code: number) => {
    log(why);
    void cleanup.runAll().finally(() => process.exit(code));
  };
  process.once('SIGINT', () => fail('interrupted; cleaning up', 130));
  process.once('SIGTERM', () => fail('terminated; cleaning up', 143));
  const watchdog = setTimeout(
    () => fail('the benchmark took more than 25 minutes; giving up', 1),
    25 * 60_000,
  );

  const results: Results = {
    load: { start: loadavg()[0] },
    objectBytes: 0,
    writes: [],
    watch: [],
    list: [],
    fanout: [],
  };
  try {
    const nodeArgs: string[] = [];
    if (args.profileDir) {
      mkdirSync(args.profileDir, { recursive: true });
      nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${args.profileDir}`);
    }
    const serverArgs = args.controllers ? [] : ['--no-controller-manager'];
    // The fan-out's REST watchers hold a connection each, all from 127.0.0.1: over the default
    // limit of 1,000 per address once the gRPC clients are counted.
    if (args.phases.has('fanout')) serverArgs.push('--max-connections-per-address', '0');
    log('starting etcd');
    const etcd = await startEtcd();
    cleanup.add('etcd', () => etcd.stop());
    results.machine = await machineInfo(etcd.endpoint, REPO_ROOT);

    log('starting kubelab/sqlite and kubelab/etcd in child processes');
    // Started together; each is registered for cleanup as soon as it runs, even if the other fails.
    const started = (name: string) => (cp: ChildControlPlane) => {
      cleanup.add(name, () => cp.stop());
      return cp;
    };
    const children = await Promise.allSettled([
      startChildControlPlane({ store: 'sqlite', nodeArgs, serverArgs }).then(started('kubelab/sqlite child')),
      startChildControlPlane({
        store: 'etcd',
        etcdEndpoint: etcd.endpoint,
        etcdPrefix: `/bench-kubelab-${RUN_ID}`,
        nodeArgs,
        serverArgs,
      }).then(started('kubelab/etcd child')),
    ]);
    for (const c of children) if (c.status === 'rejected') throw c.reason;
    const [sqlite, etcdCp] = children.map((c) => (c as PromiseFulfilledResult<ChildControlPlane>).value);
    const rawOptions = {
      hosts: etcd.endpoint,
      grpcOptions: { 'grpc.max_receive_message_length': 64 * 1024 * 1024 },
    };
    const raw = new Etcd3(rawOptions);
    const rawWatchClients = Array.from({ length: WATCH_CHANNELS }, () => new Etcd3(rawOptions));
    cleanup.add('etcd3 clients', () => [raw, ...rawWatchClients].forEach((c) => c.close()));

    const sqliteClient = sqlite.client();
    const etcdClient = etcdCp.client();
    const sqliteRest = new RestClient(sqlite);
    const etcdRest = new RestClient(etcdCp);
    cleanup.add('REST clients', () => (sqliteRest.close(), etcdRest.close()));
    // Size the padding so that a Pod, as stored (with the server's defaults), is ~1 KiB of JSON;
    // that stored form is also the raw etcd value.
    await ensureNamespace(sqliteClient, 'bench-sample');
    const storedJson = async (name: string) => {
      const created = await sqliteClient.create(benchPod(`${RUN_ID}-${name}`, 'bench-sample'));
      const { resourceVersion: _rv, ...meta } = created.metadata ?? {};
      return { ...created, metadata: meta } as Pod;
    };
    setPadBytes(0);
    const bare = JSON.stringify(await storedJson('bare')).length;
    setPadBytes(OBJECT_BYTES - bare);
    const stored = await storedJson('sample');
    results.objectBytes = JSON.stringify(stored).length;
    log(
      `a Pod is ${results.objectBytes} bytes of JSON as stored (padding annotation of ${padBytes()} bytes)`,
    );

    const systems: Systems = {
      sqlite,
      etcd: etcdCp,
      sqliteClient,
      etcdClient,
      sqliteRest,
      etcdRest,
      raw,
      rawWatchClients,
      rawValue: rawValueFactory(stored),
      etcdEndpoint: etcd.endpoint,
      pids: { sqlite: sqlite.pid, etcdChild: etcdCp.pid, etcd: findPid(etcd.dataDir) },
    };
    const counts = new Map([
      [1, Math.round(1000 * args.scale)],
      [32, Math.round(3000 * args.scale)],
    ]);
    if (args.phases.has('writes')) await writesPhase(systems, args, results, cleanup, counts);
    if (args.phases.has('watch')) await watchPhase(systems, args, results);
    if (args.phases.has('contention')) await contentionPhase(systems, args, results);
    if (args.phases.has('list')) await listPhase(systems, args, results, cleanup);
    if (args.phases.has('fanout')) await fanoutPhase(systems, args, results);
  } finally {
    clearTimeout(watchdog);
    results.load.end = loadavg()[0];
    log('stopping everything');
    await cleanup.runAll();
  }

  const section = render(results, args, started, (nowMs() - t0) / 1000);
  process.stdout.write('\n' + section);
  if (args.append) {
    const path = join(REPO_ROOT, 'BENCHMARKS.md');
    appendSection(path, section);
    log(`appended to ${path}`);
    // Only a run of every phase speaks for the benchmark: a partial one would blank the others'
    // figures in the summary row.
    if (ALL_PHASES.every((p) => args.phases.has(p))) {
      upsertSummaryRow(path, summaryRow(results, started));
      log(`updated the bench:store row of the summary table in ${path}`);
    }
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
