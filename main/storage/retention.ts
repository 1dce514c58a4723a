/**
 * How much of the store's history is kept. Both stores keep about 5 minutes for watchers that
 * resume and for paged lists (kube-apiserver's compaction interval). Under heavy writing those
 * 5 minutes can hold hundreds of thousands of revisions, and a desktop app's disk pays for
 * them although the watch cache already serves every watcher from its own 75-second window:
 * so once the history holds more than `maxRevisions`, the oldest go until `maxRevisions` are
 * left (etcd's own --auto-compaction-mode=revision), except that the last `minRetentionMs`
 * always stay. Trimming to the bound rather than far below it keeps the history's size, and
 * so the file's, steady. A quiet lab never reaches the bound and keeps its 5 minutes.
 */

/** A revision the store had reached at a time (ms since the epoch). */
export interface RetentionSample {
  at: number;
  rev: number;
}

export interface HistoryBound {
  /** Above this many revisions of history, only the last `minRetentionMs` are kept (0: no bound). */
  maxRevisions: number;
  /** What is kept under heavy writing: the watch cache's window, so a cut store watch resumes. */
  minRetentionMs: number;
}

/** 20,000 revisions: a lab of a hundred nodes writes fewer in 5 minutes. */
export const DEFAULT_HISTORY_MAX_REVISIONS = 20_000;

/** The watch cache's window (apiserver/cacher.ts DEFAULT_HISTORY_MS). */
export const DEFAULT_MIN_RETENTION_MS = 75_000;

export const DEFAULT_HISTORY_BOUND: HistoryBound = {
  maxRevisions: DEFAULT_HISTORY_MAX_REVISIONS,
  minRetentionMs: DEFAULT_MIN_RETENTION_MS,
};

/** The newest sample's revision taken at or before `cutoff` (0 when none is that old). */
export function revisionAsOf(samples: readonly RetentionSample[], cutoff: number): number {
  let rev = 0;
  for (const s of samples) if (s.at <= cutoff && s.rev > rev) rev = s.rev;
  return rev;
}

/**
 * Where heavy writing moves the compaction to when more than `maxRevisions` lie between
 * `compacted` (where history starts, or will once a compaction already decided on has run)
 * and `revision`: `maxRevisions` below `revision`, or the revision of `minRetentionMs` ago if
 * that is older; otherwise 0.
 */
export function boundedHistoryTarget(
  samples: readonly RetentionSample[],
  now: number,
  revision: number,
  compacted: number,
  bound: HistoryBound,
): number {
  if (bound.maxRevisions <= 0 || revision - compacted <= bound.maxRevisions) return 0;
  const target = Math.min(revision - bound.maxRevisions, revisionAsOf(samples, now - bound.minRetentionMs));
  return target > compacted ? target : 0;
}

/** How many samples outlive a restart at most: the oldest, and the newest after it. */
export const PERSISTED_SAMPLES = 32;

/**
 * The samples worth keeping across a restart: the oldest (the regular retention counts from
 * it) and the newest (the bound's window needs the one `minRetentionMs` old).
 */
export function samplesToPersist(samples: readonly RetentionSample[]): RetentionSample[] {
  if (samples.length <= PERSISTED_SAMPLES) return [...samples];
  return [samples[0], ...samples.slice(samples.length - (PERSISTED_SAMPLES - 1))];
}

/**
 * The persisted samples that still say something: none from the future (a clock set back),
 * none a compaction has passed, none above the store's revision, in order of time and
 * revision.
 */
export function usableSamples(
  samples: readonly RetentionSample[],
  now: number,
  compacted: number,
  revision: number,
): RetentionSample[] {
  const usable: RetentionSample[] = [];
  for (const s of [...samples].sort((a, b) => a.at - b.at)) {
    if (!Number.isSafeInteger(s.at) || !Number.isSafeInteger(s.rev)) continue;
    if (s.at > now || s.rev <= compacted || s.rev > revision) continue;
    const last = usable[usable.length - 1];
    if (last && s.rev < last.rev) continue;
    usable.push(s);
  }
  return usable;
}
