/**
 * The soak's verdict and its report: the checks per control plane, the section for
 * BENCHMARKS.md, and the row of `bench:soak` in the summary table at the top of that file.
 */
import { changedNote, type MachineInfo } from './lib/machine.js';
import type { Proc } from './lib/childproc.js';
import { MiB } from './lib/proc.js';
import { table, type SummaryRow } from './lib/report.js';
import { fmt, percentileSorted, sortedCopy } from './lib/stats.js';
import {
  SOAK_EVENT_TTL_MS,
  type Life,
  type SizeSample,
  type SoakServer,
  type StoreName,
} from './soak-cluster.js';
import {
  describeNamespace,
  describePod,
  type Caller,
  type EndState,
  type RoundResult,
} from './soak-workload.js';

export interface Args {
  minutes: number;
  nodes: number;
  pods: number;
  restartEveryMs: number;
  stores: StoreName[];
  roundWaitMs: number;
  /** A round starts this long after the one before (later when that one took longer). */
  roundEveryMs: number;
  drainMs: number;
  record: boolean;
}

/**
 * The size check's reference point: the issue's "after the first 5 minutes" (40 % of a run
 * shorter than 12.5 minutes). Both stores keep 5 minutes of history while writing is light,
 * but the soak writes ~8,000 revisions a minute, so their history passes its bound of 20,000
 * revisions (main/storage/retention.ts) in under 3 minutes and only the last 75 s to 3 minutes
 * are kept from then on; Events live 5 minutes in the soak (--event-ttl). Neither file
 * shrinks much (compaction frees pages inside it; etcd gives them back only on a
 * defragmentation, SQLite 8 MiB per compaction round), so a store that stopped growing by
 * then stays within the tolerance at the end.
 */
export function baselineAtMs(minutes: number): number {
  return Math.min(5, minutes * 0.4) * 60_000;
}

/** How much the store may have grown since the reference point. */
export const SIZE_TOLERANCE = 0.2;

/** A size with what explains it. */
export interface Snapshot extends SizeSample {
  /** Events in the cluster (they live an hour). */
  events: number;
  /** etcd: its compacted revision (-1: never); SQLite: kv_meta's compact_rev. */
  compacted?: number;
  /** SQLite: rows in the revision log. */
  rows?: number;
}

export interface RestartRecord {
  n: number;
  /** ms since the soak began. */
  at: number;
  signal: 'SIGTERM' | 'SIGKILL' | 'crash';
  stopMs: number;
  startMs: number;
  termTimedOut: boolean;
  exit?: Life['exit'];
  /** The server's RSS just before it was stopped. */
  rssMiB: number;
  error?: string;
}

export interface StoreRun {
  store: StoreName;
  server: SoakServer;
  fleet: Proc;
  caller: Caller;
  readyMs: number;
  rounds: RoundResult[];
  /** Rounds that took longer than --round-every, so the next one started late. */
  lateRounds: number;
  restarts: RestartRecord[];
  sizes: SizeSample[];
  baseline?: Snapshot;
  final?: Snapshot;
  end?: { state: EndState; ms: number };
  fleetRssMiB: [number, number];
  serverRssMiB?: number;
  fleetExit?: string;
  /** When the end was read (this process's clock, ms). */
  endedAt?: number;
}

export interface Check {
  store: StoreName;
  name: string;
  ok: boolean;
  detail: string;
}

const STORE_TITLE: Record<StoreName, string> = { etcd: 'etcd', sqlite: 'SQLite' };
const mib = (b: number | undefined) => (b === undefined ? 'n/a' : `${fmt(b / MiB, 1)} MiB`);
const min = (ms: number) => `${fmt(ms / 60_000, 1)} min`;

function listed(items: string[], n = 5): string {
  return items.slice(0, n).join('; ') + (items.length > n ? `; and ${items.length - n} more` : '');
}

/** The longest time one server process was up, ms (the last life until the end). */
function longestUptime(run: StoreRun, endAt: number): number {
  let best = 0;
  const lives = run.server.lives;
  for (let i = 0; i < lives.length; i++) {
    const up = lives[i].upAt;
    if (up === undefined) continue;
    const end = i + 1 < lives.length ? lives[i + 1].spawnedAt : endAt;
    best = Math.max(best, end - up);
  }
  return best;
}

export const sizeCheckName = (args: Args) =>
  `store size: at the end ≤ at ${min(baselineAtMs(args.minutes))} + ${SIZE_TOLERANCE * 100} % (etcd: dbSize; SQLite: state.db + -wal)`;

/** The largest sample taken in [from, to). */
function peakOf(samples: SizeSample[], from: number, to: number): SizeSample | undefined {
  let best: SizeSample | undefined;
  for (const x of samples) if (x.t >= from && x.t < to && (!best || x.bytes > best.bytes)) best = x;
  return best;
}

function sizeCheck(run: StoreRun, args: Args): Check {
  const name = sizeCheckName(args);
  const what = run.store === 'etcd' ? "etcd's dbSize" : "SQLite's state.db + state.db-wal";
  const b = run.baseline;
  const f = run.final;
  if (!b || !f)
    return {
      store: run.store,
      name,
      ok: false,
      detail: `${what}: the run ended before both sizes were read`,
    };
  // A store whose history and Events are bounded reaches its largest size early and stays
  // below it (freed pages are reused); the peak after the reference is reported beside.
  const samples = [b, ...run.sizes, f];
  const peak = peakOf(samples, b.t, f.t + 1) ?? f;
  const growth = f.bytes / b.bytes - 1;
  const ok = f.bytes <= b.bytes * (1 + SIZE_TOLERANCE);
  const why: string[] = [`the largest after ${min(b.t)}: ${mib(peak.bytes)} at ${min(peak.t)}`];
  if (run.store === 'etcd') {
    why.push(`in use ${mib(b.detail)} → ${mib(f.detail)}`);
    why.push(
      f.compacted === undefined || Number.isNaN(f.compacted)
        ? "etcd's compacted revision could not be read"
        : f.compacted < 0
          ? `etcd's history was never compacted during the run (etcd_debugging_mvcc_compact_revision ${f.compacted}; revision ${f.revision})`
          : `etcd's history compacted to revision ${f.compacted} of ${f.revision}`,
    );
  } else {
    why.push(`-wal ${mib(b.detail)} → ${mib(f.detail)}`);
    if (b.rows !== undefined && f.rows !== undefined)
      why.push(
        `revision log ${fmt(b.rows, 0)} → ${fmt(f.rows, 0)} rows, compacted to revision ${f.compacted} of ${f.revision}` +
          (f.compacted === 0 ? ' (never compacted)' : ''),
      );
  }
  why.push(
    `Events kept ${fmt(b.events, 0)} → ${fmt(f.events, 0)} (they live ${SOAK_EVENT_TTL_MS / 60_000} min, --event-ttl)`,
  );
  if (run.endedAt !== undefined)
    why.push(`the longest a server process stayed up: ${min(longestUptime(run, run.endedAt))}`);
  return {
    store: run.store,
    name,
    ok,
    detail:
      `${what}: ${mib(b.bytes)} at ${min(b.t)} → ${mib(f.bytes)} at the end (${growth >= 0 ? '+' : ''}${fmt(growth * 100, 0)} %, ` +
      `limit +${SIZE_TOLERANCE * 100} %)${ok ? '' : ': it grew beyond the limit'}; ${why.join('; ')}`,
  };
}

export function checksOf(run: StoreRun, args: Args): Check[] {
  const out: Check[] = [];
  const add = (name: string, ok: boolean, detail: string) => out.push({ store: run.store, name, ok, detail });
  const e = run.end;
  const notReached = 'the run did not reach its end state (see the error)';
  const drained = e ? ` (${fmt(e.ms / 1000, 0)} s after the loop ended)` : '';
  if (!e) add('the end state could be read', false, notReached);
  else if (e.state.unknown)
    add('the end state could be read', false, 'listing pods, namespaces or DaemonSets failed');
  else {
    const listCheck = (name: string, items: string[], what: string) =>
      add(
        name,
        !items.length,
        items.length ? `${items.length} ${what}${drained}: ${listed(items)}` : `none${drained}`,
      );
    listCheck(
      'no pod Terminating',
      e.state.terminating.map((p) => describePod(p)),
      'pods still Terminating',
    );
    listCheck(
      'no namespace stuck Terminating',
      e.state.stuckNamespaces.map(describeNamespace),
      'namespaces still Terminating',
    );
    listCheck(
      'nothing deleted by the loop left over',
      e.state.leftovers,
      'objects deleted (or owned by one deleted) but not being deleted',
    );
  }
  out.push(sizeCheck(run, args));
  const crashes = run.restarts.filter((r) => r.signal === 'crash');
  add(
    'no control plane or fleet exited on its own',
    !crashes.length && !run.fleetExit,
    [
      crashes.length
        ? `the server exited on its own ${crashes.length} times (at ${crashes.map((c) => min(c.at)).join(', ')}): ${run.server.crashes[0]?.slice(-300) ?? ''}`
        : '',
      run.fleetExit ? `the hollow fleet exited (${run.fleetExit})` : '',
    ]
      .filter(Boolean)
      .join('; ') || 'none',
  );
  return out;
}

// ------------------------------------------------------------------------------ the section

interface ReportInput {
  machine: MachineInfo;
  args: Args;
  runs: StoreRun[];
  checks: Check[];
  started: Date;
}

const p50max = (xs: number[], scale = 1000, digits = 1) => {
  if (!xs.length) return 'n/a';
  const s = sortedCopy(xs);
  return `${fmt(percentileSorted(s, 50) / scale, digits)} / ${fmt(s[s.length - 1] / scale, digits)}`;
};

function machineLine(m: MachineInfo): string {
  return `${m.cpu}, ${m.cores} cores, ${fmt(m.ramGiB, 1)} GiB RAM`;
}

/** The size samples at ≤ 16 moments (the first, the reference, the last among them). */
function sizeTimeline(runs: StoreRun[]): string {
  const times = new Set<number>();
  for (const run of runs) for (const s of run.sizes) times.add(Math.round(s.t / 60_000));
  const minutes = [...times].sort((a, b) => a - b);
  const step = Math.max(1, Math.ceil(minutes.length / 16));
  const shown = minutes.filter((_, i) => i % step === 0 || i === minutes.length - 1);
  const at = (run: StoreRun, m: number) => {
    let best: SizeSample | undefined;
    for (const s of run.sizes) if (Math.round(s.t / 60_000) === m) best = s;
    return best;
  };
  const header = ['minute'];
  for (const run of runs)
    header.push(run.store === 'etcd' ? 'etcd dbSize (in use), MiB' : 'SQLite state.db + -wal (-wal), MiB');
  const rows = shown.map((m) => [
    String(m),
    ...runs.map((run) => {
      const s = at(run, m);
      return s ? `${fmt(s.bytes / MiB, 1)} (${fmt(s.detail / MiB, 1)})` : '';
    }),
  ]);
  return table(header, ['r', ...runs.map(() => 'r' as const)], rows);
}

function loopTable(runs: StoreRun[], args: Args): string {
  const col = (f: (r: StoreRun) => string) => runs.map(f);
  const rows: string[][] = [];
  const row = (what: string, f: (r: StoreRun) => string) => rows.push([what, ...col(f)]);
  row('rounds (all Running within the wait / all gone within the wait)', (r) => {
    const running = r.rounds.filter((x) => x.runningMs !== undefined).length;
    const gone = r.rounds.filter((x) => x.goneMs !== undefined).length;
    return `${r.rounds.length} (${running} / ${gone})`;
  });
  row(`rounds that took longer than the ${fmt(args.roundEveryMs / 1000, 0)} s cadence`, (r) =>
    fmt(r.lateRounds, 0),
  );
  row('pods created and deleted', (r) =>
    fmt(
      r.rounds.reduce((n, x) => n + x.expected, 0),
      0,
    ),
  );
  row('create → all Running, s (p50 / max)', (r) =>
    p50max(r.rounds.flatMap((x) => (x.runningMs === undefined ? [] : [x.runningMs]))),
  );
  row('deletes → all gone, s (p50 / max)', (r) =>
    p50max(r.rounds.flatMap((x) => (x.goneMs === undefined ? [] : [x.goneMs]))),
  );
  row('restarts: SIGTERM / SIGKILL / after a crash', (r) =>
    (['SIGTERM', 'SIGKILL', 'crash'] as const)
      .map((s) => r.restarts.filter((x) => x.signal === s).length)
      .join(' / '),
  );
  row('signal → exited, s (p50 / max)', (r) => p50max(r.restarts.map((x) => x.stopMs)));
  row(`SIGTERM not obeyed within 30 s (SIGKILLed)`, (r) =>
    String(r.restarts.filter((x) => x.termTimedOut).length),
  );
  row('spawn → serving, s (p50 / max)', (r) =>
    p50max(r.restarts.flatMap((x) => (Number.isFinite(x.startMs) ? [x.startMs] : []))),
  );
  row('calls sent again while the control plane was away', (r) => fmt(r.caller.retries, 0));
  row('calls that failed otherwise', (r) => fmt(r.caller.errors.length, 0));
  row('server RSS before each restart, MiB (min–max); at the end', (r) => {
    const xs = r.restarts.map((x) => x.rssMiB).filter((x) => x > 0);
    return `${xs.length ? `${fmt(Math.min(...xs), 0)}–${fmt(Math.max(...xs), 0)}` : 'n/a'}; ${fmt(r.serverRssMiB ?? NaN, 0)}`;
  });
  row(
    'hollow fleet RSS, MiB: start → end',
    (r) => `${fmt(r.fleetRssMiB[0], 0)} → ${fmt(r.fleetRssMiB[1], 0)}`,
  );
  row(`${args.nodes} nodes Ready after the fleet started, s`, (r) => fmt(r.readyMs / 1000, 1));
  return table(['', ...runs.map((r) => STORE_TITLE[r.store])], ['l', ...runs.map(() => 'r' as const)], rows);
}

export function renderSection(
  input: ReportInput & { seconds: number; load: number[]; others: string[]; error?: string },
): string {
  const { machine: m, args, runs, checks, started } = input;
  const out: string[] = [];
  out.push(`## ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — soak (\`npm run bench:soak\`)`);
  out.push('');
  out.push(
    `Machine: ${machineLine(m)}, ${m.os}; Node ${m.node}; etcd ${m.etcd}. kubelab ${m.commit}. ` +
      `Soak: ${fmt(input.seconds / 60, 1)} min from the first round to the end; 1-minute load average ${fmt(input.load[0], 1)} at the start, ` +
      `${fmt(input.load[1], 1)} at the end` +
      (input.others.length
        ? `; **other benchmarks ran meanwhile**: ${input.others.map((o) => `\`${o}\``).join(', ')}.`
        : '.') +
      ` ${changedNote(m)}`.trimEnd(),
  );
  out.push('');
  out.push(
    `Settings: ${runs.map((r) => `\`kubelab server --store ${r.store}\``).join(' and ')} side by side${args.stores.includes('etcd') ? ' (etcd on a real etcd started on 127.0.0.1 for the run)' : ''}, ` +
      `each with its in-process controllers and ${args.nodes} hollow nodes in one \`kubelab-agent --hollow\` (hollow pods); ` +
      `for ${fmt(args.minutes, 1)} min, a round every ${fmt(args.roundEveryMs / 1000, 0)} s (or as soon as the one before ended) of: a namespace with ${args.pods} pods, ${args.pods} bare pods and a DaemonSet ` +
      `(${args.nodes} pods) created, waited for until Running (≤ ${fmt(args.roundWaitMs / 1000, 0)} s), deleted (the DaemonSet in the ` +
      `background or the foreground, every other round; the namespace with its pods), waited for until gone. Each control plane ` +
      `restarted every ${fmt(args.restartEveryMs / 60_000, 2)} min (the SQLite one half an interval after the etcd one), every third ` +
      `restart with SIGKILL, the others with SIGTERM. At the end, ≤ ${fmt(args.drainMs / 1000, 0)} s for the last deletions, then the ` +
      `checks; sizes sampled every 15 s, the size check from ${min(baselineAtMs(args.minutes))} on.`,
  );
  out.push('');
  if (input.error) {
    out.push(`**The soak did not finish: ${input.error}**`);
    out.push('');
  }
  out.push('### Checks');
  out.push('');
  const names = [...new Set(checks.map((c) => c.name))];
  const cell = (c: Check | undefined) =>
    c ? `${c.ok ? 'pass' : '**FAIL**'}: ${c.detail.replace(/\|/g, '\\|')}` : '';
  out.push(
    table(
      ['check', ...runs.map((r) => STORE_TITLE[r.store])],
      ['l', ...runs.map(() => 'l' as const)],
      names.map((n) => [
        n,
        ...runs.map((r) => cell(checks.find((c) => c.store === r.store && c.name === n))),
      ]),
    ),
  );
  out.push('');
  out.push('### The loop and the restarts');
  out.push('');
  out.push(loopTable(runs, args));
  out.push('');
  out.push('### Size on disk (every sample at the minutes shown)');
  out.push('');
  out.push(sizeTimeline(runs));
  for (const run of runs) {
    const problems = [
      ...[...run.server.problems].map(([k, n]) => [`server: ${k}`, n] as const),
      ...[...run.fleet.problems].map(([k, n]) => [`hollow fleet: ${k}`, n] as const),
    ].sort((a, b) => b[1] - a[1]);
    const errors = run.rounds.flatMap((r) => r.errors);
    if (!problems.length && !errors.length) continue;
    out.push('');
    out.push(
      `### ${STORE_TITLE[run.store]}: what the processes logged at warn or above, and calls that failed`,
    );
    out.push('');
    for (const [k, n] of problems.slice(0, 8)) out.push(`- ${n}× ${k.replace(/\|/g, '\\|').slice(0, 240)}`);
    for (const e of errors.slice(0, 8)) out.push(`- call failed: ${e.slice(0, 240)}`);
    if (errors.length > 8) out.push(`- and ${errors.length - 8} more failed calls`);
  }
  return out.join('\n') + '\n';
}

// ------------------------------------------------------------------------------ the summary table

export function summaryRow(input: ReportInput): SummaryRow {
  const { args, runs, checks } = input;
  const sizes = runs.map((r) => {
    const b = r.baseline;
    const f = r.final;
    return `${r.store === 'etcd' ? 'etcd dbSize' : 'SQLite file'} ${mib(b?.bytes)} → ${mib(f?.bytes)}`;
  });
  const restarts = runs.reduce((n, r) => n + r.restarts.length, 0);
  const kills = runs.reduce((n, r) => n + r.restarts.filter((x) => x.signal === 'SIGKILL').length, 0);
  const terminating = runs.reduce((n, r) => n + (r.end?.state.terminating.length ?? 0), 0);
  const stuck = runs.reduce((n, r) => n + (r.end?.state.stuckNamespaces.length ?? 0), 0);
  const failed = checks.filter((c) => !c.ok);
  return {
    bench: '`bench:soak`',
    date: input.started.toISOString().slice(0, 16).replace('T', ' '),
    machine: machineLine(input.machine),
    figures:
      `${fmt(args.minutes, 0)} min, ${runs.map((r) => r.store).join(' + ')} side by side, ${args.nodes} hollow nodes each; ` +
      `${runs.map((r) => `${r.rounds.length} rounds`).join(' / ')}; ${restarts} restarts (${kills} SIGKILL); ` +
      `${terminating} pods Terminating, ${stuck} namespaces stuck at the end; ${sizes.join(', ')} (from ${min(baselineAtMs(args.minutes))} to the end)`,
    result: failed.length
      ? `FAIL: ${failed.map((c) => `${c.store}: ${c.name}`).join('; ')}`
      : `pass (${checks.length} checks)`,
  };
}
