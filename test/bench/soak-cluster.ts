/**
 * The soak's processes: a `kubelab server` that keeps its data folder, port and credentials
 * across restarts (SIGTERM, or SIGKILL), the hollow fleet that runs its nodes and their pods,
 * and what its store holds on disk — etcd's dbSize from its status endpoint, SQLite's state.db
 * with its -wal — with what tells history kept from history compacted.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Node } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { AGENT_BIN } from '../support/agentproc.js';
import { freePort } from '../support/etcd.js';
import { REPO_ROOT } from './lib/child.js';
import { startProc, type Proc } from './lib/childproc.js';
import { joinAhead } from './lib/fleet.js';
import { log } from './lib/run.js';
import { scrape } from './lib/scrape.js';
import { fmt, nowMs, sleep } from './lib/stats.js';

export type StoreName = 'etcd' | 'sqlite';

/** How long Events live in the soak's control planes. */
export const SOAK_EVENT_TTL_MS = 5 * 60_000;

/** How long a stopping server may take after SIGTERM before it is SIGKILLed (and that is noted). */
export const TERM_GRACE_MS = 30_000;
const START_TIMEOUT_MS = 120_000;

/** One run of the server process, from spawn to exit. */
export interface Life {
  /** ms, this process's clock. */
  spawnedAt: number;
  upAt?: number;
  /** How it ended: a planned SIGTERM or SIGKILL, or on its own (a crash). */
  ended?: 'SIGTERM' | 'SIGKILL' | 'crash';
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  /** Signal sent → exit, ms. */
  stopMs?: number;
  /** SIGTERM did not end it within TERM_GRACE_MS: it was SIGKILLed. */
  termTimedOut?: boolean;
}

/** A `kubelab server` (its in-process controllers as by default) that can be restarted in place. */
export class SoakServer {
  readonly lives: Life[] = [];
  /** Its warn/error log lines by message, over every life. */
  readonly problems = new Map<string, number>();
  /** Output of lives that ended on their own. */
  readonly crashes: string[] = [];
  token = '';
  caPem = '';
  private proc: Proc | undefined;

  private constructor(
    readonly store: StoreName,
    readonly dataDir: string,
    readonly port: number,
    readonly metricsPort: number,
    private readonly etcdEndpoint: string | undefined,
  ) {}

  static async create(store: StoreName, dataDir: string, etcdEndpoint?: string): Promise<SoakServer> {
    mkdirSync(dataDir, { recursive: true });
    return new SoakServer(store, dataDir, await freePort(), await freePort(), etcdEndpoint);
  }

  get server(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.proc?.pid ?? 0;
  }

  /** The current life ended without being told to. */
  crashed(): boolean {
    const life = this.lives[this.lives.length - 1];
    return !!this.proc?.exit && !!life && life.ended === undefined;
  }

  /** Spawns the server and waits until it says it is running; ms from spawn to up. */
  async start(): Promise<number> {
    const args = [join(REPO_ROOT, 'bin/kubelab.mjs'), 'server', '--data-dir', this.dataDir];
    args.push('--listen', this.server, '--store', this.store, '--log-level', 'warn');
    args.push('--metrics-listen', `127.0.0.1:${this.metricsPort}`);
    // Events expire within the run (kube-apiserver's --event-ttl, 1 h by default, is longer than
    // a soak): the live set then stops growing, and what the size check sees is history.
    args.push('--event-ttl', `${SOAK_EVENT_TTL_MS / 1000}s`);
    if (this.etcdEndpoint) args.push('--etcd-endpoints', this.etcdEndpoint, '--etcd-prefix', '/soak');
    const life: Life = { spawnedAt: nowMs() };
    this.lives.push(life);
    const proc = startProc(`server-${this.store}`, args, /is running/);
    this.proc = proc;
    void proc.exited.then(() => {
      life.exit = proc.exit;
      for (const [k, n] of proc.problems) this.problems.set(k, (this.problems.get(k) ?? 0) + n);
      if (life.ended === undefined) this.crashes.push(proc.tail.slice(-1500));
    });
    while (proc.upAt === undefined) {
      if (proc.exit)
        throw new Error(
          `kubelab server (${this.store}) exited during start-up (code ${proc.exit.code}, signal ${proc.exit.signal}): ${proc.tail.slice(-1500)}`,
        );
      if (nowMs() - life.spawnedAt > START_TIMEOUT_MS)
        throw new Error(
          `kubelab server (${this.store}) did not start within ${START_TIMEOUT_MS / 1000} s: ${proc.tail.slice(-1500)}`,
        );
      await sleep(50);
    }
    life.upAt = proc.upAt;
    if (!this.token) {
      this.token = readFileSync(join(this.dataDir, 'admin.token'), 'utf8').trim();
      this.caPem = readFileSync(join(this.dataDir, 'pki', 'ca.crt'), 'utf8');
    }
    return proc.upAt - life.spawnedAt;
  }

  /**
   * Ends the current life with `signal` (SIGTERM: SIGKILL after TERM_GRACE_MS), or notes that it
   * ended on its own; resolves once the process is gone.
   */
  async stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<Life | undefined> {
    const proc = this.proc;
    const life = this.lives[this.lives.length - 1];
    if (!proc || !life) return undefined;
    if (proc.exit) {
      life.ended ??= 'crash';
      return life;
    }
    life.ended = signal;
    const t = nowMs();
    proc.child.kill(signal);
    const timer = setTimeout(() => {
      life.termTimedOut = true;
      proc.child.kill('SIGKILL');
    }, TERM_GRACE_MS);
    await proc.exited;
    clearTimeout(timer);
    life.stopMs = nowMs() - t;
    return life;
  }

  /** A typed client whose connection comes back soon after a restart. */
  client(): Client {
    return grpcClient({
      server: this.server,
      token: this.token,
      caPem: this.caPem,
      timeoutMs: 30_000,
      channelOptions: { 'grpc.initial_reconnect_backoff_ms': 250, 'grpc.max_reconnect_backoff_ms': 2000 },
    });
  }
}

/** Joins `nodes` hollow nodes ahead and starts one `kubelab-agent --hollow` for them (hollow pods on). */
export async function startFleet(
  s: SoakServer,
  nodes: number,
  prefix: string,
  dataDir: string,
): Promise<Proc> {
  mkdirSync(dataDir, { recursive: true });
  const server = `https://${s.server}`;
  const tokens = new TokensClient({ server, token: s.token, caPem: s.caPem });
  let joinToken: string;
  try {
    joinToken = (await tokens.create({ description: 'bench:soak' })).token!;
  } finally {
    tokens.close();
  }
  const names = Array.from({ length: nodes }, (_, i) => ({ dataDir, node: `${prefix}-${i}` }));
  await joinAhead(server, joinToken, names, 16);
  const args = [AGENT_BIN, '--hollow', String(nodes), '--hollow-prefix', prefix];
  return startProc(
    `hollow-${s.store}`,
    [...args, '--server', server, '--data-dir', dataDir, '--log-level', 'warn'],
    /running/,
  );
}

/** Ready and without a NoSchedule/NoExecute taint. */
export function isSchedulableNode(n: Node): boolean {
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  return (
    ready && !n.spec?.unschedulable && !(n.spec?.taints ?? []).some((t) => t.effect !== 'PreferNoSchedule')
  );
}

/** Waits until `nodes` nodes are schedulable (≤ 2 min + 0.1 s a node), logging every 10 s. */
export async function waitForNodes(
  client: Client,
  nodes: number,
  what: string,
  fleet: Proc,
): Promise<number> {
  const t0 = nowMs();
  let lastLog = t0;
  for (;;) {
    if (fleet.exit)
      throw new Error(`${fleet.name} exited (code ${fleet.exit.code}): ${fleet.tail.slice(-1500)}`);
    const all = (await client.list('Node').catch(() => ({ items: [] as Node[] }))).items;
    const ready = all.filter(isSchedulableNode).length;
    if (ready >= nodes) return nowMs() - t0;
    if (nowMs() - t0 > 120_000 + nodes * 100)
      throw new Error(
        `${what}: only ${ready}/${nodes} nodes were Ready after ${fmt((nowMs() - t0) / 1000, 0)} s`,
      );
    if (nowMs() - lastLog >= 10_000) {
      lastLog = nowMs();
      log(`${what}: ${all.length} nodes registered, ${ready} Ready`);
    }
    await sleep(2000);
  }
}

// ------------------------------------------------------------------------------ sizes on disk

/** What one store holds on disk at one moment. */
export interface SizeSample {
  /** ms since the soak began. */
  t: number;
  /** etcd: dbSize (the bbolt file); SQLite: state.db + state.db-wal. */
  bytes: number;
  /** etcd: dbSizeInUse (pages holding data); SQLite: the -wal's share of `bytes`. */
  detail: number;
  /** The store's revision. */
  revision?: number;
}

/** etcd's maintenance status through its gRPC gateway (POST /v3/maintenance/status). */
export async function etcdStatus(
  endpoint: string,
): Promise<{ dbSize: number; dbSizeInUse: number; revision: number }> {
  const res = await fetch(`${endpoint}/v3/maintenance/status`, { method: 'POST', body: '{}' });
  if (!res.ok) throw new Error(`etcd's status endpoint answered ${res.status}`);
  const j = (await res.json()) as { dbSize?: string; dbSizeInUse?: string; header?: { revision?: string } };
  return {
    dbSize: Number(j.dbSize),
    dbSizeInUse: Number(j.dbSizeInUse),
    revision: Number(j.header?.revision),
  };
}

/** The revision etcd's history was last compacted to (its own metric); -1: never. */
export async function etcdCompactedRevision(endpoint: string): Promise<number> {
  const m = await scrape(Number(new URL(endpoint).port));
  return m.get('etcd_debugging_mvcc_compact_revision') ?? NaN;
}

export function sqlitePath(dataDir: string): string {
  return join(dataDir, 'state.db');
}

export function sqliteSize(dataDir: string): { bytes: number; wal: number } {
  const size = (p: string) => (existsSync(p) ? statSync(p).size : 0);
  const db = size(sqlitePath(dataDir));
  const wal = size(`${sqlitePath(dataDir)}-wal`);
  return { bytes: db + wal, wal };
}

/** What the SQLite store's log holds: rows, and the revisions it spans (read-only, one short read). */
export interface SqliteHistory {
  rows: number;
  oldestRev: number;
  currentRev: number;
  compactRev: number;
}

export function sqliteHistory(dataDir: string): SqliteHistory | undefined {
  let db: Database.Database | undefined;
  try {
    db = new Database(sqlitePath(dataDir), { readonly: true, fileMustExist: true });
    const log = db.prepare('SELECT COUNT(*) AS n, MIN(rev) AS lo, MAX(rev) AS hi FROM kv_log').get() as {
      n: number;
      lo: number | null;
      hi: number | null;
    };
    const meta = new Map(
      (db.prepare('SELECT name, value FROM kv_meta').all() as Array<{ name: string; value: number }>).map(
        (r) => [r.name, r.value],
      ),
    );
    return {
      rows: log.n,
      oldestRev: log.lo ?? 0,
      currentRev: Math.max(meta.get('current_rev') ?? 0, log.hi ?? 0),
      compactRev: meta.get('compact_rev') ?? 0,
    };
  } catch (err) {
    log(`could not read ${sqlitePath(dataDir)}: ${(err as Error).message}`);
    return undefined;
  } finally {
    db?.close();
  }
}
