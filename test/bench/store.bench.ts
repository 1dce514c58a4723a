/**
 * `npm run bench:store`: the store through the apiserver, on both backends, side by side with
 * raw etcd, in one run; appends the figures, the machine and the date to BENCHMARKS.md.
 *
 *   1. durable creates/s with 1 and 32 writers: kubelab/sqlite and kubelab/etcd over gRPC (TLS +
 *      token, control plane in a child process), the same through the in-process client, and
 *      raw etcd puts (etcd3) as the reference;
 *   2. watch delivery latency p50/p99/max with 100 watchers, 2,000 Pods written at 200/s;
 *   3. List of 10,000 Pods through gRPC from the watch cache vs etcd's own range.
 *
 * The control planes run without their in-process controllers: the benchmark measures the
 * apiserver and the store. With controllers, every Pod created here (there are no nodes) also
 * gets the scheduler's PodScheduled=False status update and a FailedScheduling Event, so each
 * create costs the server three writes, and watchers see a MODIFIED event per Pod besides its
 * ADDED one. `--controllers` runs them anyway.
 *
 * Options: --no-append (print only), --phases writes,watch,list, --rounds N (write rounds,
 * default 2), --scale F (multiplies the object counts), --profile DIR (run the control-plane
 * children with --cpu-prof into DIR), --controllers (control planes with their in-process
 * controllers, as `kubelab server` runs by default).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
import { machineInfo, type MachineInfo } from './lib/machine.js';
import { appendSection, table } from './lib/report.js';
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

// ------------------------------------------------------------------------------ settings

interface Args {
  append: boolean;
  phases: Set<string>;
  rounds: number;
  scale: number;
  profileDir?: string;
  /** Run the control planes with their in-process controllers (default: without). */
  controllers: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    append: true,
    phases: new Set(['writes', 'watch', 'list']),
    rounds: 2,
    scale: 1,
    controllers: false,
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
    else throw new Error(`unknown option ${a}; see the comment at the top of test/bench/store.bench.ts`);
  }
  return args;
}

const RUN_ID = Date.now().toString(36);
const WATCHERS = 100;
const WATCH_RATE = 200;
/** Writes before the measured ones, received by every watcher before measuring starts. */
const WATCH_WARMUP = 400;
const LIST_REPS = 10;
/** Connections the 100 watchers are spread over (gRPC channels, etcd3 clients). */
const WATCH_CHANNELS = 4;
/** A stored Pod's JSON is sized to this. */
const OBJECT_BYTES = 1024;
const GRPC_PATH = 'gRPC, TLS + token, server in a child process';
const INPROC_PATH = 'in-process client (cp.client()), no network';
const RAW_PUTS = 'raw etcd3 puts';

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

interface Results {
  machine?: MachineInfo;
  objectBytes: number;
  writes: WriteRow[];
  watch: WatchRow[];
  list: ListRow[];
  listDecode?: { decodeMs: number; convertMs: number; bytes: number };
}

function best(runs: WriteRun[] | undefined): WriteRun | undefined {
  return runs?.reduce((a, b) => (b.perSec > a.perSec ? b : a));
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
  results.writes.push(sqliteRow, etcdRow, rawRow);
  await ensureNamespace(s.sqliteClient, ns);
  await ensureNamespace(s.etcdClient, ns);
  await runRounds([
    { row: rawRow, op: rawOp, server: undefined },
    { row: sqliteRow, op: (t) => kubelabOp(s.sqliteClient, t), server: s.pids.sqlite },
    { row: etcdRow, op: (t) => kubelabOp(s.etcdClient, t), server: s.pids.etcdChild },
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

async function watchPhase(s: Systems, args: Args, results: Results): Promise<void> {
  const objects = Math.round(2000 * args.scale);
  const options = { watchers: WATCHERS, objects, ratePerSec: WATCH_RATE, warmup: WATCH_WARMUP };
  const ns = 'bench-watch';
  await ensureNamespace(s.sqliteClient, ns);
  await ensureNamespace(s.etcdClient, ns);
  const typed = (cp: ChildControlPlane, writer: Client, tag: string): WatchHarness => {
    // A few connections for the watch streams, apart from the writer's.
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
  };
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

// ------------------------------------------------------------------------------ the report

interface Target {
  what: string;
  value: number;
  unit: string;
  goal: string;
  pass: boolean;
}

function targets(r: Results): Target[] {
  const sqlite32 = writeRate(r, 'kubelab/sqlite', GRPC_PATH, 32);
  const etcd32 = writeRate(r, 'kubelab/etcd', GRPC_PATH, 32);
  const raw32 = writeRate(r, 'etcd (reference)', RAW_PUTS, 32);
  const watchP99 =
    r.watch.find((w) => w.system === 'kubelab/sqlite' && w.how.startsWith('typed'))?.result.p99Ms ?? NaN;
  const listOf = (system: string, how: string) =>
    median(r.list.find((l) => l.system === system && l.how === how)?.times ?? []);
  const sqliteList = listOf('kubelab/sqlite', 'typed gRPC client list()');
  const sqliteRawList = listOf('kubelab/sqlite', 'raw gRPC call, answer not decoded');
  const sqliteInproc32 = writeRate(r, 'kubelab/sqlite', INPROC_PATH, 32);
  const etcdInproc32 = writeRate(r, 'kubelab/etcd', INPROC_PATH, 32);
  const etcdRange = listOf('etcd (reference)', 'etcd3 getAll().prefix().buffers()');
  const t = (what: string, value: number, unit: string, goal: string, pass: boolean): Target => ({
    what,
    value,
    unit,
    goal,
    pass: Number.isFinite(value) && pass,
  });
  return [
    t(
      'kubelab/sqlite creates/s through the apiserver (in-process client, 32 writers) ÷ raw etcd puts/s (32 writers)',
      sqliteInproc32 / raw32,
      '×',
      '≥ 1.0',
      sqliteInproc32 / raw32 >= 1,
    ),
    t(
      'kubelab/sqlite ÷ kubelab/etcd creates/s through the apiserver (in-process client, 32 writers)',
      sqliteInproc32 / etcdInproc32,
      '×',
      '≥ 2.0',
      sqliteInproc32 / etcdInproc32 >= 2,
    ),
    t(
      'kubelab/sqlite creates/s (gRPC, 32 writers) ÷ raw etcd puts/s (32 writers)',
      sqlite32 / raw32,
      '×',
      '≥ 1.0',
      sqlite32 / raw32 >= 1,
    ),
    t(
      'kubelab/sqlite ÷ kubelab/etcd creates/s (gRPC, 32 writers)',
      sqlite32 / etcd32,
      '×',
      '≥ 2.0',
      sqlite32 / etcd32 >= 2,
    ),
    t(
      'watch delivery p99, kubelab/sqlite (100 typed gRPC watchers)',
      watchP99,
      'ms',
      '≤ 20 ms',
      watchP99 <= 20,
    ),
    t(
      'list 10,000 Pods through gRPC from the watch cache, kubelab/sqlite (typed client, median)',
      sqliteList,
      'ms',
      '≤ 30 ms',
      sqliteList <= 30,
    ),
    t(
      'list 10,000 Pods through gRPC from the watch cache, kubelab/sqlite (answer as received, not decoded, like the etcd3 buffers; median)',
      sqliteRawList,
      'ms',
      '≤ 30 ms',
      sqliteRawList <= 30,
    ),
    t(
      'etcd range of 10,000 (median) ÷ kubelab/sqlite list through gRPC, not decoded (median)',
      etcdRange / sqliteRawList,
      '×',
      '≥ 2.0',
      etcdRange / sqliteRawList >= 2,
    ),
    t(
      'etcd range of 10,000 (median) ÷ kubelab/sqlite list (typed client, median)',
      etcdRange / sqliteList,
      '×',
      '≥ 2.0',
      etcdRange / sqliteList >= 2,
    ),
  ];
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
        'server for in-process rows), the kubelab server child, and etcd.',
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
      `### Watch delivery latency (${w0.watchers} watchers over ${WATCH_CHANNELS} connections on one namespace/prefix, ` +
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
    () => fail('the benchmark took more than 15 minutes; giving up', 1),
    15 * 60_000,
  );

  const results: Results = { objectBytes: 0, writes: [], watch: [], list: [] };
  try {
    const nodeArgs: string[] = [];
    if (args.profileDir) {
      mkdirSync(args.profileDir, { recursive: true });
      nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${args.profileDir}`);
    }
    const serverArgs = args.controllers ? [] : ['--no-controller-manager'];
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
    if (args.phases.has('list')) await listPhase(systems, args, results, cleanup);
  } finally {
    clearTimeout(watchdog);
    log('stopping everything');
    await cleanup.runAll();
  }

  const section = render(results, args, started, (nowMs() - t0) / 1000);
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
