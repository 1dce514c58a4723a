/**
 * `npm run bench:soak` (issue 19): nothing stuck, nothing unbounded, after half an hour of churn
 * and restarts. Not part of `npm test`; a correctness soak more than a speed benchmark. It exits
 * non-zero when a check fails, saying which, and appends its figures to BENCHMARKS.md (a dated
 * section, and the row of `bench:soak` in the summary table at the top).
 *
 * Two control planes, side by side for the same 30 minutes: `kubelab server --store etcd` on a
 * real etcd this bench starts on 127.0.0.1 (test/support/etcd.ts), and `kubelab server` on
 * SQLite; each a child process with its in-process controllers as by default, and each with
 * --nodes (200) hollow nodes joined ahead and run by one `kubelab-agent --hollow` process
 * (hollow pods: the nodes run the pods bound to them). Side by side, not one after the other:
 * the checks are about state and size, not speed, so sharing the machine costs nothing they
 * measure; both stores then see the same wall-clock time (the stores' compaction and the Event
 * TTL, 5 minutes here with --event-ttl, are clocked), and a run takes 30 minutes, not an hour.
 * `--stores sqlite` runs one.
 *
 * The loop, on each control plane, a round every --round-every seconds (30; the next at once when
 * one takes longer) until the time is up (soak-workload.ts). A steady cadence rather than as fast
 * as the machine goes: the history a store keeps follows its write rate, and the size check
 * below means "bounded" only under a write rate that does not drift with the machine's load.
 * a namespace `soak-r<N>` with --pods (50) pods in it, --pods bare pods in namespace `soak`, and
 * a DaemonSet there (a pod on every node) are created; the bench waits (≤ --round-wait, 120 s)
 * until all of them are Running, then deletes the DaemonSet (in the background, or in the
 * foreground every other round), the bare pods and the namespace with its pods in it, and waits
 * (≤ --round-wait) until all are gone. A structured line per round goes to stderr
 * (`round {"store":…}`), and one per restart.
 *
 * Meanwhile each control plane is restarted every --restart-every minutes (3; a quarter of the
 * run for runs under 12 minutes), the SQLite one half an interval after the etcd one: SIGTERM
 * (SIGKILL 30 s later if it has not stopped: noted), and every third restart (the 2nd, 5th, …)
 * SIGKILL. Calls that meet a control plane that is away are sent again until it answers; a
 * control plane that exits on its own is started again and counted as a crash.
 *
 * At the end (the loop stops, the last round's deletes are waited for ≤ --drain, 180 s) the
 * checks, per control plane:
 *   - no pod Terminating (none has a deletionTimestamp);
 *   - no namespace stuck Terminating;
 *   - nothing the loop deleted left over (pods of deleted DaemonSets or namespaces, DaemonSets);
 *   - the store on disk not growing: at the end no more than 20 % above its size after the
 *     first 5 minutes (see baselineAtMs; with --minutes < 12.5, after 40 % of the run), the
 *     largest size after that point beside it: etcd's dbSize from its status endpoint
 *     (/v3/maintenance/status; dbSizeInUse beside it), SQLite's state.db + state.db-wal, sampled
 *     every 15 s; beside a failure, what tells why: etcd's compacted revision (its own metric),
 *     the SQLite log's rows and compacted revision, the Events kept, the longest uptime;
 *   - no control plane or fleet exited on its own.
 *
 * Options: --minutes 30, --nodes 200, --pods 50, --restart-every <minutes>, --stores
 * etcd,sqlite, --round-wait 120 (s), --round-every 30 (s), --drain 180 (s), --no-record (print only; for trial runs).
 * A short trial: `npm run bench:soak -- --minutes 3 --nodes 50 --no-record`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { REPO_ROOT } from './lib/child.js';
import type { Proc } from './lib/childproc.js';
import { machineInfo } from './lib/machine.js';
import { otherBenchmarks } from './lib/others.js';
import { memoryOf, MiB } from './lib/proc.js';
import { appendSection, upsertSummaryRow } from './lib/report.js';
import { Cleanup, log } from './lib/run.js';
import { fmt, nowMs, sleep } from './lib/stats.js';
import {
  etcdCompactedRevision,
  etcdStatus,
  SoakServer,
  sqliteHistory,
  sqliteSize,
  startFleet,
  waitForNodes,
  type SizeSample,
  type StoreName,
} from './soak-cluster.js';
import {
  baselineAtMs,
  checksOf,
  renderSection,
  summaryRow,
  type Args,
  type Check,
  type RestartRecord,
  type Snapshot,
  type StoreRun,
} from './soak-report.js';
import { Caller, drain, ensureSoakNamespace, runRound } from './soak-workload.js';

// ------------------------------------------------------------------------------ settings

const SAMPLE_MS = 15_000;

function parseArgs(argv: string[]): Args {
  let restartMinutes: number | undefined;
  const args: Args = {
    minutes: 30,
    nodes: 200,
    pods: 50,
    restartEveryMs: 0,
    stores: ['etcd', 'sqlite'],
    roundWaitMs: 120_000,
    roundEveryMs: 30_000,
    drainMs: 180_000,
    record: true,
  };
  const number = (v: string, flag: string, whole: boolean) => {
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
    if (a === '--minutes') args.minutes = number(value(), a, false);
    else if (a === '--nodes') args.nodes = number(value(), a, true);
    else if (a === '--pods') args.pods = number(value(), a, true);
    else if (a === '--restart-every') restartMinutes = number(value(), a, false);
    else if (a === '--round-wait') args.roundWaitMs = number(value(), a, false) * 1000;
    else if (a === '--round-every') args.roundEveryMs = number(value(), a, false) * 1000;
    else if (a === '--drain') args.drainMs = number(value(), a, false) * 1000;
    else if (a === '--no-record') args.record = false;
    else if (a === '--stores') {
      const stores = value().split(',');
      if (!stores.length || stores.some((s) => s !== 'etcd' && s !== 'sqlite'))
        throw new Error('--stores takes etcd, sqlite or etcd,sqlite');
      args.stores = [...new Set(stores as StoreName[])];
    } else throw new Error(`unknown option ${a}; see the comment at the top of test/bench/soak.bench.ts`);
  }
  args.restartEveryMs = (restartMinutes ?? (args.minutes < 12 ? args.minutes / 4 : 3)) * 60_000;
  return args;
}

// ------------------------------------------------------------------------------ one control plane

async function sampleSize(
  run: StoreRun,
  etcd: EtcdServer | undefined,
  t0: number,
): Promise<SizeSample | undefined> {
  const t = nowMs() - t0;
  try {
    if (run.store === 'etcd') {
      const s = await etcdStatus(etcd!.endpoint);
      return { t, bytes: s.dbSize, detail: s.dbSizeInUse, revision: s.revision };
    }
    const s = sqliteSize(run.server.dataDir);
    return { t, bytes: s.bytes, detail: s.wal };
  } catch (err) {
    log(`${run.store}: could not read the store's size: ${(err as Error).message}`);
    return undefined;
  }
}

/** The size with what explains it: compacted revision, SQLite log rows, Events kept. */
async function snapshot(
  run: StoreRun,
  etcd: EtcdServer | undefined,
  t0: number,
): Promise<Snapshot | undefined> {
  const size = await sampleSize(run, etcd, t0);
  if (!size) return undefined;
  const events = await run.caller.listAll('Event');
  const snap: Snapshot = { ...size, events: events?.length ?? NaN };
  if (run.store === 'etcd') snap.compacted = await etcdCompactedRevision(etcd!.endpoint).catch(() => NaN);
  else {
    const h = sqliteHistory(run.server.dataDir);
    if (h) Object.assign(snap, { revision: h.currentRev, compacted: h.compactRev, rows: h.rows });
  }
  run.sizes.push(size);
  return snap;
}

/** Restarts on schedule (and after a crash) until `deadline`. */
async function supervise(
  run: StoreRun,
  t0: number,
  deadline: number,
  offsetMs: number,
  everyMs: number,
): Promise<void> {
  let next = t0 + offsetMs;
  while (nowMs() < deadline) {
    await sleep(500);
    const crashed = run.server.crashed();
    if (!crashed && (nowMs() < next || nowMs() >= deadline)) continue;
    const n = run.restarts.length + 1;
    const signal: 'SIGTERM' | 'SIGKILL' | undefined = crashed
      ? undefined
      : n % 3 === 2
        ? 'SIGKILL'
        : 'SIGTERM';
    const rssMiB = memoryOf(run.server.pid).rss / MiB;
    const at = nowMs() - t0;
    const life = await run.server.stop(signal ?? 'SIGTERM');
    let startMs = NaN;
    let error: string | undefined;
    try {
      startMs = await run.server.start();
    } catch (err) {
      error = (err as Error).message;
    }
    const record: RestartRecord = {
      n,
      at,
      signal: signal ?? ('crash' as const),
      stopMs: life?.stopMs ?? 0,
      startMs,
      termTimedOut: !!life?.termTimedOut,
      exit: life?.exit,
      rssMiB,
      error,
    };
    run.restarts.push(record);
    log(
      `restart ${JSON.stringify({
        store: run.store,
        n,
        min: +(at / 60_000).toFixed(1),
        signal: record.signal,
        stopS: +(record.stopMs / 1000).toFixed(1),
        startS: +(startMs / 1000).toFixed(1),
        rssMiB: Math.round(rssMiB),
        ...(record.termTimedOut ? { termTimedOut: true } : {}),
        ...(error ? { error } : {}),
      })}`,
    );
    if (error)
      throw new Error(`${run.store}: the control plane did not come back after restart ${n}: ${error}`);
    if (!crashed) next += everyMs;
  }
}

async function loop(run: StoreRun, args: Args, t0: number, deadline: number): Promise<void> {
  await ensureSoakNamespace(run.caller);
  for (let round = 1, start = nowMs(); start < deadline; round++) {
    if (run.fleet.exit)
      throw new Error(`${run.store}: the hollow fleet exited: ${run.fleet.tail.slice(-1500)}`);
    const r = await runRound(run.caller, round, t0, {
      nodes: args.nodes,
      pods: args.pods,
      waitMs: args.roundWaitMs,
    });
    run.rounds.push(r);
    const size = run.sizes[run.sizes.length - 1];
    log(
      `round ${JSON.stringify({
        store: run.store,
        round,
        min: +((nowMs() - t0) / 60_000).toFixed(1),
        pods: r.expected,
        running: r.running,
        runningS: r.runningMs === undefined ? null : +(r.runningMs / 1000).toFixed(1),
        goneS: r.goneMs === undefined ? null : +(r.goneMs / 1000).toFixed(1),
        left: r.left,
        leftTerminating: r.leftTerminating,
        namespaceLeft: r.namespaceLeft,
        propagation: r.propagation,
        retries: r.retries,
        errors: r.errors.length,
        restarts: run.restarts.length,
        sizeMiB: size ? +(size.bytes / MiB).toFixed(1) : null,
      })}`,
    );
    for (const e of r.errors.slice(0, 3)) log(`${run.store} round ${round}: ${e}`);
    // A steady cadence, not as fast as the machine allows: the history a store keeps follows
    // its write rate, so a size check is only fair under a write rate that does not drift.
    const next = start + args.roundEveryMs;
    if (nowMs() > next) run.lateRounds++;
    while (nowMs() < Math.min(next, deadline)) await sleep(250);
    start = Math.max(next, nowMs());
  }
}

/** Samples the store's size every SAMPLE_MS until `stop()`, the reference snapshot at `baselineAt`. */
async function sizes(
  run: StoreRun,
  etcd: EtcdServer | undefined,
  t0: number,
  baselineAt: number,
  stop: () => boolean,
) {
  while (!stop()) {
    if (!run.baseline && nowMs() - t0 >= baselineAt) {
      const ref = (run.baseline = await snapshot(run, etcd, t0));
      if (ref) log(`${run.store}: the size check's reference: ${fmt(ref.bytes / MiB, 1)} MiB`);
    } else {
      const s = await sampleSize(run, etcd, t0);
      if (s) run.sizes.push(s);
    }
    const wake = nowMs() + SAMPLE_MS;
    while (!stop() && nowMs() < wake) await sleep(250);
  }
}

// ------------------------------------------------------------------------------ main

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = new Date();
  const load = [loadavg()[0], NaN];
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
  const budgetMs =
    10 * 60_000 +
    args.stores.length * args.nodes * 1000 +
    args.minutes * 60_000 +
    2 * args.roundWaitMs +
    args.drainMs;
  const watchdog = setTimeout(
    () => fail(`the soak took more than ${fmt(budgetMs / 60_000, 0)} minutes; giving up`, 1),
    budgetMs,
  );

  const tmp = mkdtempSync(join(tmpdir(), 'kubelab-bench-soak-'));
  cleanup.add('temp folder', () => rmSync(tmp, { recursive: true, force: true }));
  let etcd: EtcdServer | undefined;
  if (args.stores.includes('etcd')) {
    etcd = await startEtcd();
    cleanup.add('etcd', () => etcd!.stop());
  }
  const machine = await machineInfo(etcd?.endpoint ?? '', REPO_ROOT);
  const others = new Set<string>();
  const runs: StoreRun[] = [];
  let error: string | undefined;
  let t0 = nowMs();
  try {
    for (const store of args.stores) {
      log(`${store}: starting kubelab server --store ${store}`);
      const server = await SoakServer.create(store, join(tmp, store, 'server'), etcd?.endpoint);
      await server.start();
      cleanup.add(`kubelab server (${store})`, () => server.stop('SIGTERM'));
      const fleet: Proc = await startFleet(server, args.nodes, `soak-${store}`, join(tmp, store, 'hollow'));
      cleanup.add(`hollow fleet (${store})`, () => fleet.stop());
      const caller = new Caller(server.client());
      cleanup.add(`client (${store})`, () => caller.client.close());
      const readyMs = await waitForNodes(caller.client, args.nodes, store, fleet);
      log(`${store}: ${args.nodes} hollow nodes Ready ${fmt(readyMs / 1000, 1)} s after the fleet started`);
      runs.push({
        store,
        server,
        fleet,
        caller,
        readyMs,
        rounds: [],
        lateRounds: 0,
        restarts: [],
        sizes: [],
        fleetRssMiB: [memoryOf(fleet.pid).rss / MiB, NaN],
      });
    }

    t0 = nowMs();
    const deadline = t0 + args.minutes * 60_000;
    const baselineAt = baselineAtMs(args.minutes);
    log(
      `soaking ${args.stores.join(' and ')} side by side for ${fmt(args.minutes, 1)} min: restarts every ` +
        `${fmt(args.restartEveryMs / 60_000, 2)} min, the size check's reference at ${fmt(baselineAt / 60_000, 1)} min`,
    );
    const othersTimer = setInterval(() => otherBenchmarks().forEach((o) => others.add(o)), 60_000);
    cleanup.add('other benchmarks sampler', () => clearInterval(othersTimer));
    let sampling = true;
    const samplers = runs.map((run) => sizes(run, etcd, t0, baselineAt, () => !sampling));
    try {
      await Promise.all(
        runs.map(async (run, i) => {
          const offset = args.restartEveryMs * (1 + i / 2);
          await Promise.all([
            loop(run, args, t0, deadline),
            supervise(run, t0, deadline, offset, args.restartEveryMs),
          ]);
          log(
            `${run.store}: the loop is over; waiting ≤ ${fmt(args.drainMs / 1000, 0)} s for every deletion to finish`,
          );
          run.end = await drain(run.caller, args.drainMs);
        }),
      );
    } finally {
      sampling = false;
      await Promise.all(samplers);
    }
    for (const run of runs) {
      run.final = await snapshot(run, etcd, t0);
      run.fleetRssMiB[1] = memoryOf(run.fleet.pid).rss / MiB;
      run.serverRssMiB = memoryOf(run.server.pid).rss / MiB;
      run.endedAt = nowMs();
      if (run.fleet.exit) run.fleetExit = `code ${run.fleet.exit.code}, signal ${run.fleet.exit.signal}`;
    }
  } catch (err) {
    error = (err as Error).message;
    log(`failed: ${error}`);
  } finally {
    clearTimeout(watchdog);
    load[1] = loadavg()[0];
    log('stopping everything');
    await cleanup.runAll();
  }

  const checks: Check[] = runs.flatMap((run) => checksOf(run, args));
  const seconds = (nowMs() - t0) / 1000;
  const section = renderSection({
    machine,
    args,
    runs,
    checks,
    started,
    seconds,
    load,
    others: [...others],
    error,
  });
  process.stdout.write(`\n${section}\n`);
  const failed = checks.filter((c) => !c.ok);
  if (args.record && !error) {
    const path = join(REPO_ROOT, 'BENCHMARKS.md');
    appendSection(path, section);
    upsertSummaryRow(path, summaryRow({ machine, args, runs, checks, started }));
    log(`appended a soak section to ${path} and updated its summary row`);
  } else if (args.record) log('not written to BENCHMARKS.md: the run did not finish');
  else log('not written to BENCHMARKS.md (--no-record)');
  for (const c of failed) process.stderr.write(`FAILED ${c.store}: ${c.name}: ${c.detail}\n`);
  if (error) process.stderr.write(`FAILED: the soak did not finish: ${error}\n`);
  if (!failed.length && !error) process.stderr.write(`PASSED: all ${checks.length} checks\n`);
  process.exitCode = failed.length || error ? 1 : 0;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
