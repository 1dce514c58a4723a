/**
 * Compacts etcd's history as the Kubernetes apiserver does (k8s.io/apiserver, storage/etcd3/
 * compact.go). etcd keeps every revision unless told otherwise (its --auto-compaction is off by
 * default), so every lease renewal and status write would stay until the backend quota is
 * reached and every write fails with NOSPACE.
 *
 * Every interval (5 minutes) a round compacts to the revision seen in the previous round, so
 * about one interval of history stays for watchers that resume. Several control planes may
 * share one etcd; they take turns through a compare-and-swap on the version of the key
 * `compact_rev_key` (kube-apiserver's key and protocol, so kubelab and a kube-apiserver on the
 * same etcd take turns too): a replica whose last known version is still current bumps it
 * and compacts; the others learn the new version and try again next round. When the replica
 * that compacts goes away, another one takes over within two intervals. etcd's compaction is
 * idempotent, so a round that races one anyway costs a request, nothing more.
 *
 * Unlike kube-apiserver, a control plane keeps its schedule across restarts: a desktop app is
 * restarted far more often than every 10 minutes (the learning round and the noting round a
 * fresh replica needs), and counting from start would never compact. Each turn also writes its
 * time to `kubelab_compact_time` in the same transaction; a replica that starts finds the last
 * turn there (its version, its revision — the next target — and its time) and takes the next
 * turn when it is due, at once if it is overdue. A turn taken by a kube-apiserver carries no
 * time; then the replica learns whose turn it is at once, and compacts one interval later.
 *
 * Under heavy writing, history is also bounded by count (retention.ts): every 15 seconds the
 * compactor notes etcd's revision, and once more than 20,000 revisions lie above the compacted
 * one it takes a turn early, compacting to 20,000 below the current one (but never into the
 * last 75 seconds, the watch cache's window), and counts the next regular round from then.
 * Each turn records the compactor's recent samples too, so a restarted control plane goes on
 * trimming at once.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock, TimerHandle } from '../../client/util/clock.js';
import { createLogger, type Logger } from '../logging.js';
import {
  boundedHistoryTarget,
  DEFAULT_HISTORY_BOUND,
  PERSISTED_SAMPLES,
  samplesToPersist,
  usableSamples,
  type HistoryBound,
  type RetentionSample,
} from './retention.js';

/** The key of the turn-taking, outside any prefix: compaction is global to the etcd cluster. */
export const COMPACT_REV_KEY = 'compact_rev_key';

/** When the last turn was taken (ms since the epoch), written with compact_rev_key. */
export const COMPACT_TIME_KEY = 'kubelab_compact_time';

/**
 * The compactor's recent samples of etcd's revision, written with each turn: a control plane
 * restarted under heavy writing knows at once which revision is `minRetentionMs` old.
 */
export const COMPACT_SAMPLES_KEY = 'kubelab_compact_samples';

/** `at:rev` pairs, comma-separated (at most PERSISTED_SAMPLES of them). */
export function formatSamples(samples: readonly RetentionSample[]): string {
  return samplesToPersist(samples)
    .map((s) => `${s.at}:${s.rev}`)
    .join(',');
}

/** What formatSamples wrote; anything else in the key yields no samples. */
export function parseSamples(value: Buffer): RetentionSample[] {
  // PERSISTED_SAMPLES pairs of two safe integers take well under 2 KiB.
  if (value.length > 2048) return [];
  const pairs = value.toString('utf8').split(',', PERSISTED_SAMPLES + 1);
  if (pairs.length > PERSISTED_SAMPLES) return [];
  const samples: RetentionSample[] = [];
  for (const pair of pairs) {
    const m = /^(\d{1,16}):(\d{1,16})$/.exec(pair);
    if (!m) return [];
    samples.push({ at: Number(m[1]), rev: Number(m[2]) });
  }
  return samples;
}

/** kube-apiserver's --etcd-compaction-interval default. */
export const DEFAULT_COMPACTION_INTERVAL_MS = 5 * 60_000;

/** How often etcd's revision is noted for the bound on history by count. */
export const HISTORY_CHECK_MS = 15_000;

/** The outcome of the compare-and-swap on compact_rev_key. */
export interface CompactionClaim {
  /** This replica compacts this round. */
  claimed: boolean;
  /** compact_rev_key's version after the transaction (the logical time of the turn-taking). */
  version: number;
  /** etcd's revision at the transaction: the next round compacts to it. */
  revision: number;
  /** When not claimed: the revision the replica whose turn it was recorded (it compacts there). */
  recorded?: number;
}

/** The last turn as etcd records it, when a kubelab control plane took it. */
export interface CompactionMark {
  /** compact_rev_key's version after that turn. */
  version: number;
  /** etcd's revision at that turn: the next turn compacts to it. */
  revision: number;
  /** When it was taken (ms since the epoch). */
  at: number;
  /** The samples of etcd's revision the turn's compactor had taken (oldest first). */
  samples: RetentionSample[];
}

/** What the compactor needs of the store (EtcdStorage). */
export interface CompactionBackend {
  /**
   * If compact_rev_key's version equals `expectVersion`, records `revision` in it (which bumps
   * its version) and `at` beside it; otherwise reads it.
   */
  claimCompaction(
    expectVersion: number,
    revision: number,
    at: number,
    samples?: readonly RetentionSample[],
  ): Promise<CompactionClaim>;
  /** The last turn, if a kubelab control plane took it and no one has taken one since. */
  readCompactionMark(): Promise<CompactionMark | undefined>;
  /** Compacts etcd's history below `revision`; already compacted is success. */
  compact(revision: number): Promise<void>;
  /** etcd's current revision. */
  currentRevision(): Promise<number>;
  /** The revision etcd's history is compacted to (0: never compacted). */
  compactedRevision(): Promise<number>;
}

export interface EtcdCompactorOptions {
  intervalMs: number;
  clock: Clock;
  /** History bounded by count too (default DEFAULT_HISTORY_BOUND; maxRevisions 0: by time only). */
  historyBound?: HistoryBound;
  /** Default: a logger on stderr, made when there is something to say. */
  logger?: Logger;
}

export class EtcdCompactor {
  /** compact_rev_key's version as last seen: whose turn it is (kube-apiserver's "compact time"). */
  private version = 0;
  /** etcd's revision seen in the previous round; 0 before the first round. */
  private seen = 0;
  private timer: TimerHandle | undefined;
  private checkTimer: TimerHandle | undefined;
  /** Rounds and checks run one at a time, in the order they fell due. */
  private tail: Promise<void> = Promise.resolve();
  private pending = 0;
  /** etcd's revision every HISTORY_CHECK_MS, for the bound by count. */
  private samples: RetentionSample[] = [];
  /** When an early turn was last logged at info. */
  private earlyTurnReportedAt = -Infinity;
  private stopped = false;
  private logger: Logger | undefined;
  private knownCompacted = 0;
  private readonly compactions = new Counter({
    name: 'kubelab_etcd_compactions_total',
    help: "Compactions of etcd's history this control plane ran, by result (succeeded or failed)",
    labelNames: ['result'],
    registers: [],
  });
  private readonly compactedGauge = new Gauge({
    name: 'kubelab_etcd_compacted_revision',
    help: "The revision etcd's history was last compacted to, by this control plane or another",
    registers: [],
  });

  constructor(
    private readonly backend: CompactionBackend,
    private readonly options: EtcdCompactorOptions,
  ) {
    this.logger = options.logger;
  }

  /**
   * Continues the schedule the last turn recorded; without one, takes the first turn (which
   * compacts nothing) at once.
   */
  start(): void {
    if (this.options.intervalMs <= 0) return;
    void this.exclusive(() => this.resume());
    if (this.bound.maxRevisions > 0) this.scheduleCheck();
  }

  /**
   * Stops the rounds. A round in flight is not waited for: closing the client ends it, and
   * what it leaves undone the next control plane's rounds do.
   */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    if (this.checkTimer) this.options.clock.clearTimeout(this.checkTimer);
    this.timer = undefined;
    this.checkTimer = undefined;
  }

  /** Settles when no round or check is running (tests move the clock, then await this). */
  async idle(): Promise<void> {
    while (this.pending > 0) await this.tail;
  }

  private get bound(): HistoryBound {
    return this.options.historyBound ?? DEFAULT_HISTORY_BOUND;
  }

  /** Runs `work` after whatever round or check is running; `work` must not throw. */
  private exclusive(work: () => Promise<void>): Promise<void> {
    this.pending++;
    this.tail = this.tail.then(work).finally(() => {
      this.pending--;
    });
    return this.tail;
  }

  /** The last revision known to be compacted (0 before any). */
  get compactedRevision(): number {
    return this.knownCompacted;
  }

  registerMetrics(registry: Registry): void {
    if (!registry.getSingleMetric('kubelab_etcd_compactions_total'))
      registry.registerMetric(this.compactions);
    if (!registry.getSingleMetric('kubelab_etcd_compacted_revision'))
      registry.registerMetric(this.compactedGauge);
  }

  private async resume(): Promise<void> {
    const interval = this.options.intervalMs;
    let mark: CompactionMark | undefined;
    try {
      mark = await this.backend.readCompactionMark();
    } catch (err) {
      // Nothing lost but time: the rounds start from scratch.
      this.log().debug(
        { err: err instanceof Error ? err.message : String(err) },
        'could not read the last compaction turn; starting the schedule now',
      );
    }
    if (!mark) {
      // The first turn compacts nothing (it notes a revision, or learns whose turn it is), so
      // it is taken at once: counting an interval first would never take it in an app that
      // is restarted every few minutes.
      if (this.stopped) return;
      await this.round();
      this.schedule(interval);
      return;
    }
    this.version = mark.version;
    this.seen = mark.revision;
    // The last turn's samples, its time and revision are samples for the bound by count: a
    // control plane restarted under heavy writing need not wait the minimum retention to
    // learn the revision that old.
    this.samples = usableSamples(
      [...mark.samples, { at: mark.at, rev: mark.revision }],
      this.options.clock.now(),
      0,
      mark.revision,
    );
    const wait = mark.at + interval - this.options.clock.now();
    this.log().debug(
      { version: mark.version, nextTarget: mark.revision, dueInMs: Math.max(0, wait) },
      'continuing the compaction schedule',
    );
    if (wait > 0) {
      // A clock set back never delays a turn by more than one interval.
      this.schedule(Math.min(wait, interval));
      return;
    }
    if (this.stopped) return;
    await this.round();
    this.schedule(interval);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      void this.exclusive(async () => {
        await this.round();
        this.schedule(this.options.intervalMs);
      });
    }, delayMs);
  }

  private scheduleCheck(): void {
    if (this.stopped) return;
    this.checkTimer = this.options.clock.setTimeout(() => {
      this.checkTimer = undefined;
      void this.exclusive(async () => {
        await this.checkHistory();
        this.scheduleCheck();
      });
    }, HISTORY_CHECK_MS);
  }

  /**
   * Notes etcd's revision; when history holds more than the bound, takes a turn early that
   * trims it to the bound (never into the last minRetentionMs). Never throws: the next check
   * tries again.
   */
  private async checkHistory(): Promise<void> {
    if (this.stopped) return;
    const now = this.options.clock.now();
    const bound = this.bound;
    try {
      const revision = await this.backend.currentRevision();
      this.samples.push({ at: now, rev: revision });
      // One sample at least minRetentionMs old is all a target needs.
      const cutoff = now - bound.minRetentionMs;
      while (this.samples.length > 1 && this.samples[1].at <= cutoff) this.samples.shift();
      if (!boundedHistoryTarget(this.samples, now, revision, this.knownCompacted, bound)) return;
      // The lower bound may be stale (another replica, or a kube-apiserver, compacted).
      this.noteCompacted(await this.backend.compactedRevision());
      const target = boundedHistoryTarget(this.samples, now, revision, this.knownCompacted, bound);
      if (!target || this.stopped) return;
      const claim = await this.backend.claimCompaction(this.version, target, now, this.samples);
      this.version = claim.version;
      this.seen = claim.revision;
      if (!claim.claimed) {
        if (claim.recorded !== undefined) this.noteCompacted(claim.recorded);
        return;
      }
      await this.backend.compact(target);
      this.noteCompacted(target);
      this.compactions.inc({ result: 'succeeded' });
      // Under steady heavy writing a turn is taken every check: say so once an interval.
      const quiet = now - this.earlyTurnReportedAt < this.options.intervalMs;
      if (!quiet) this.earlyTurnReportedAt = now;
      this.log()[quiet ? 'debug' : 'info'](
        { revision: target, currentRevision: revision, maxRevisions: bound.maxRevisions },
        `compacted etcd's history early: more than ${bound.maxRevisions} revisions were kept; the newest ${bound.maxRevisions} and at least the last ${Math.round(bound.minRetentionMs / 1000)} s stay`,
      );
      // The next regular round, one interval from now, compacts to this turn's revision.
      this.schedule(this.options.intervalMs);
    } catch (err) {
      this.failed(err, 'could not take an early turn for a history over its bound');
    }
  }

  /** One round; never throws: a failure is logged and the next round tries again. */
  private async round(): Promise<void> {
    let claim: CompactionClaim;
    try {
      claim = await this.backend.claimCompaction(
        this.version,
        this.seen,
        this.options.clock.now(),
        this.samples,
      );
    } catch (err) {
      // Nothing learnt: the next round repeats the same compare-and-swap (if this one was
      // applied after all, that one fails and learns the new version).
      this.failed(err, 'could not take a turn on compact_rev_key');
      return;
    }
    const target = this.seen;
    this.version = claim.version;
    this.seen = claim.revision;
    if (!claim.claimed) {
      if (claim.recorded !== undefined) this.noteCompacted(claim.recorded);
      this.log().debug(
        { version: claim.version, recorded: claim.recorded },
        'another control plane compacts etcd this round',
      );
      return;
    }
    // The first turn only notes where history starts (kube-apiserver does not compact at
    // start-up either): the next one compacts to it.
    if (target === 0) return;
    const started = this.options.clock.now();
    try {
      await this.backend.compact(target);
    } catch (err) {
      // The turn is taken: the next round claims the next one and compacts further.
      this.failed(err, `could not compact to revision ${target}`);
      return;
    }
    this.noteCompacted(target);
    this.compactions.inc({ result: 'succeeded' });
    this.log().info(
      { revision: target, currentRevision: claim.revision, durationMs: this.options.clock.now() - started },
      "compacted etcd's history",
    );
  }

  private noteCompacted(revision: number): void {
    if (revision <= this.knownCompacted) return;
    this.knownCompacted = revision;
    this.compactedGauge.set(revision);
  }

  private failed(err: unknown, what: string): void {
    // After stop() the client is closing under the round: not a failure worth reporting.
    if (this.stopped) return;
    this.compactions.inc({ result: 'failed' });
    this.log().warn(
      { err: err instanceof Error ? err.message : String(err), nextAttemptInMs: this.options.intervalMs },
      `etcd compaction: ${what}; trying again next round (while it fails, etcd's history grows toward its --quota-backend-bytes)`,
    );
  }

  private log(): Logger {
    this.logger ??= createLogger().child({ component: 'etcd-compactor' });
    return this.logger;
  }
}
