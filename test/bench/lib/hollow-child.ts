/**
 * The hollow side of agent.bench.ts, in a process of its own (`node --import tsx`, an IPC
 * channel to the benchmark): what `kubelab-agent --hollow N` runs — a HollowFleet with the
 * CLI's default settings and logger — plus the per-renewal callback the CLI does not expose,
 * so renew latency is measured where the agent sees it.
 *
 * Configuration comes as JSON in KUBELAB_BENCH_HOLLOW_CHILD. Messages to the parent: `loaded`
 * (imports done), `joining` (every 5 s while joining ahead of the fleet) and `joined`, then
 * `progress` (every second until every node is Ready, then every 5 s), `started` (fleet.start()
 * resolved), `report` (answer to `report`), `stopped`. From the parent: `mark` (start of the
 * measured window), `report`, `stop`, and `profile`: with KUBELAB_BENCH_CPU_PROFILE set to a
 * folder the fleet is CPU-profiled (inspector, 10 ms samples) from its start, and each `profile`
 * writes what was sampled since the last one to <prefix>-<n>.cpuprofile there and starts again
 * (unlike `--cpu-prof`, this survives a fleet that is killed because it stops too slowly).
 */
import * as grpc from '@grpc/grpc-js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildAgentProgram, configFromFlags } from '../../../agent/cli.js';
import { credentialsPath, nodePasswordPath, obtainCredentials } from '../../../agent/credentials.js';
import { HollowFleet } from '../../../agent/hollow.js';
import { createAgentLogger } from '../../../agent/logger.js';
import { nowMs, percentileSorted, sortedCopy } from './stats.js';

export interface HollowChildConfig {
  count: number;
  prefix: string;
  servers: string[];
  dataDir: string;
  token: string;
  /**
   * Join every node before the fleet starts, as HollowFleet.start() would (obtainCredentials,
   * same paths), the first `sequential` one after another and the rest `concurrency` at a
   * time; the fleet then starts from stored credentials, as on its second start. 0: let
   * HollowFleet.start() join them, one at a time.
   */
  preJoinConcurrency: number;
  sequential: number;
  /**
   * One ChannelCredentials per CA for the whole process (grpc.credentials.createSsl memoized):
   * grpc-js shares a connection only between channels whose credentials are the same object,
   * and client/grpc/connection.ts makes new ones per client, so every hollow node dials its own.
   */
  sharedCredentials: boolean;
}

export interface JoinStats {
  type: 'joined';
  ms: number;
  /** Mean time of the sequential joins (one at a time, as HollowFleet.start() does). */
  sequentialMeanMs: number;
  concurrentMs: number;
  /** Joins/s of the concurrent joins, first and last fifth. */
  firstFifthPerSec: number;
  lastFifthPerSec: number;
  /** Joins tried again after a timeout or an unreachable server. */
  retries: number;
}

export interface HollowProgress {
  type: 'progress';
  /** ms since fleet.start() was called. */
  ms: number;
  joined: number;
  registered: number;
  /** Nodes whose first status write (which makes them Ready) went through. */
  ready: number;
  leased: number;
}

export interface HollowReport {
  type: 'report';
  windowMs: number;
  renewals: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  /** Nodes with at least one renewal in the window. */
  nodesRenewed: number;
  minPerNode: number;
  medianPerNode: number;
  /** Longest time between two renewals of one node in the window (client clock), ms. */
  maxGapMs: number;
  /** Gaps longer than the lease duration: the lease had expired before it was renewed. */
  gapsOverLease: number;
  leaseDurationMs: number;
  statusWrites: number;
  metricsReports: number;
  eventLoopP50Ms: number;
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
}

export type HollowChildMessage =
  | HollowProgress
  | { type: 'loaded' }
  | { type: 'joining'; done: number; ms: number }
  | JoinStats
  | { type: 'started'; ms: number }
  | HollowReport
  | { type: 'stopped' }
  | { type: 'error'; message: string };

function send(m: HollowChildMessage): void {
  process.send?.(m);
}

/** Cuts the fleet's CPU profile into one file per `profile` message (see the top). */
function startProfiling(dir: string, prefix: string): () => void {
  mkdirSync(dir, { recursive: true });
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 10_000 });
  session.post('Profiler.start');
  let cuts = 0;
  return () => {
    const n = cuts++;
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `${prefix}${n}.cpuprofile`), JSON.stringify(result.profile));
      session.post('Profiler.start');
    });
  };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.KUBELAB_BENCH_HOLLOW_CHILD ?? '') as HollowChildConfig;
  // tsx turns source maps on; the shipped kubelab-agent is a bundle without them. With them on,
  // grpc-js formatting a stack for every failed call made a loaded fleet spend ~6 % of its CPU
  // mapping stack frames.
  process.setSourceMapsEnabled(false);
  send({ type: 'loaded' });
  const profileDir = process.env.KUBELAB_BENCH_CPU_PROFILE;
  const cutProfile = profileDir ? startProfiling(profileDir, config.prefix) : () => undefined;
  if (config.sharedCredentials) shareChannelCredentials();
  // The CLI's defaults, exactly: commander fills them in before parsing.
  const flags = buildAgentProgram().opts() as Parameters<typeof configFromFlags>[0];
  const logger = createAgentLogger(flags.logLevel);
  const leaseDurationMs = configFromFlags(flags, 'check').leaseDurationSeconds * 1000;

  let latencies: number[] = [];
  let perNode = new Map<string, number>();
  const lastAt = new Map<string, number>();
  let maxGap = 0;
  let gapsOverLease = 0;
  let windowStart = nowMs();
  let statusBase = 0;
  let metricsBase = 0;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();

  const fleet = new HollowFleet({
    count: config.count,
    prefix: config.prefix,
    servers: config.servers,
    dataDir: config.dataDir,
    joinToken: config.token,
    config: (name) => configFromFlags(flags, name),
    logger,
    onLeaseRenew: (node, at, latencyMs) => {
      latencies.push(latencyMs);
      perNode.set(node, (perNode.get(node) ?? 0) + 1);
      const last = lastAt.get(node);
      if (last !== undefined) {
        const gap = at - last;
        if (gap > maxGap) maxGap = gap;
        if (gap > leaseDurationMs) gapsOverLease++;
      }
      lastAt.set(node, at);
    },
  });
  const sum = (f: (n: { agent: { status: { writes: number }; metrics: { reports: number } } }) => number) => {
    let s = 0;
    for (const n of fleet.nodes.values()) s += f(n);
    return s;
  };

  if (config.preJoinConcurrency > 0) send(await preJoin(config));

  const t0 = nowMs();
  let allReady = false;
  const progress = () => {
    let registered = 0;
    let ready = 0;
    let leased = 0;
    for (const n of fleet.nodes.values()) {
      if (n.agent.status.isRegistered) registered++;
      if (n.agent.status.writes > 0) ready++;
      if (n.agent.lease.renewals > 0) leased++;
    }
    send({ type: 'progress', ms: nowMs() - t0, joined: fleet.nodes.size, registered, ready, leased });
    if (!allReady && ready === config.count) {
      allReady = true;
      clearInterval(fast);
    }
  };
  const fast = setInterval(progress, 1000);
  const slow = setInterval(() => allReady && progress(), 5000);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    clearInterval(fast);
    clearInterval(slow);
    await fleet.stop();
    send({ type: 'stopped' });
    process.exit(0);
  };
  process.on('message', (m: { type: string }) => {
    if (m.type === 'mark') {
      latencies = [];
      perNode = new Map();
      maxGap = 0;
      gapsOverLease = 0;
      windowStart = nowMs();
      statusBase = sum((n) => n.agent.status.writes);
      metricsBase = sum((n) => n.agent.metrics.reports);
      loop.reset();
    } else if (m.type === 'report') {
      const sorted = sortedCopy(latencies);
      const counts = sortedCopy([...fleet.nodes.keys()].map((k) => perNode.get(k) ?? 0));
      send({
        type: 'report',
        windowMs: nowMs() - windowStart,
        renewals: latencies.length,
        p50Ms: percentileSorted(sorted, 50),
        p90Ms: percentileSorted(sorted, 90),
        p99Ms: percentileSorted(sorted, 99),
        maxMs: sorted.length ? sorted[sorted.length - 1] : NaN,
        meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
        nodesRenewed: perNode.size,
        minPerNode: counts.length ? counts[0] : 0,
        medianPerNode: percentileSorted(counts, 50),
        maxGapMs: maxGap,
        gapsOverLease,
        leaseDurationMs,
        statusWrites: sum((n) => n.agent.status.writes) - statusBase,
        metricsReports: sum((n) => n.agent.metrics.reports) - metricsBase,
        eventLoopP50Ms: loop.percentile(50) / 1e6,
        eventLoopP99Ms: loop.percentile(99) / 1e6,
        eventLoopMaxMs: loop.max / 1e6,
      });
    } else if (m.type === 'profile') cutProfile();
    else if (m.type === 'stop') void stop();
  });
  // The benchmark is gone (killed): do not linger.
  process.on('disconnect', () => process.exit(1));
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());

  await fleet.start();
  send({ type: 'started', ms: nowMs() - t0 });
}

function shareChannelCredentials(): void {
  const creds = grpc.credentials as { createSsl: typeof grpc.credentials.createSsl };
  const original = creds.createSsl.bind(grpc.credentials);
  const cache = new Map<string, grpc.ChannelCredentials>();
  creds.createSsl = (rootCerts, ...rest) => {
    if (!rootCerts || rest.some((x) => x != null)) return original(rootCerts, ...rest);
    const key = rootCerts.toString('latin1');
    let c = cache.get(key);
    if (!c) cache.set(key, (c = original(rootCerts)));
    return c;
  };
}

async function preJoin(config: HollowChildConfig): Promise<JoinStats> {
  let done = 0;
  let retries = 0;
  const doneAt: number[] = [];
  const join = async (i: number) => {
    // HollowFleet.start() gives up on the first failure; here a join that timed out under
    // load is tried again (and counted).
    for (let attempt = 1; ; attempt++) {
      try {
        await obtainCredentials({
          path: credentialsPath(config.dataDir, `${config.prefix}-${i}`),
          passwordPath: nodePasswordPath(config.dataDir, `${config.prefix}-${i}`),
          servers: config.servers,
          joinToken: config.token,
          nodeName: `${config.prefix}-${i}`,
        });
        break;
      } catch (err) {
        const reason = (err as { reason?: string }).reason;
        if (attempt >= 5 || (reason !== 'Timeout' && reason !== 'Unavailable')) throw err;
        retries++;
        await new Promise((r) => setTimeout(r, 500 * attempt));
      }
    }
    done++;
  };
  const t0 = nowMs();
  const ticker = setInterval(() => send({ type: 'joining', done, ms: nowMs() - t0 }), 5000);
  try {
    const sequential = Math.min(config.sequential, config.count);
    for (let i = 0; i < sequential; i++) await join(i);
    const t1 = nowMs();
    let next = sequential;
    const worker = async () => {
      while (next < config.count) {
        await join(next++);
        doneAt.push(nowMs());
      }
    };
    await Promise.all(Array.from({ length: config.preJoinConcurrency }, worker));
    const t2 = nowMs();
    const fifth = Math.max(1, Math.floor(doneAt.length / 5));
    const last = doneAt.length - 1;
    return {
      type: 'joined',
      ms: t2 - t0,
      sequentialMeanMs: sequential ? (t1 - t0) / sequential : NaN,
      concurrentMs: t2 - t1,
      firstFifthPerSec: doneAt.length >= fifth ? fifth / ((doneAt[fifth - 1] - t1) / 1000) : NaN,
      lastFifthPerSec: doneAt.length > fifth ? fifth / ((doneAt[last] - doneAt[last - fifth]) / 1000) : NaN,
      retries,
    };
  } finally {
    clearInterval(ticker);
  }
}

main().catch((err: Error) => {
  send({ type: 'error', message: err.stack ?? err.message });
  process.exit(1);
});
