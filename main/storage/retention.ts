/**
 * How much of the store's history is kept. Both stores keep about 5 minutes for watchers that
 * resume and for paged lists (kube-apiserver's compaction interval). Under heavy writing those
 * 5 minutes can hold hundreds of thousands of revisions, and a desktop app's disk pays for
 * them although the watch cache already serves every watcher from its own 75-second window:
 * so once the history holds more than `maxRevisions`, only the last `minRetentionMs` are kept
 * (etcd's own --auto-compaction-mode=revision bounds history by count the same way). A quiet
 * lab never reaches the bound and keeps its 5 minutes.
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
 * Where heavy writing moves the compaction to: the revision of `minRetentionMs` ago when more
 * than `maxRevisions` lie between `compacted` (where history starts, or will once a compaction
 * already decided on has run) and `revision`; otherwise 0.
 */
export function boundedHistoryTarget(
  samples: readonly RetentionSample[],
  now: number,
  revision: number,
  compacted: number,
  bound: HistoryBound,
): number {
  if (bound.maxRevisions <= 0 || revision - compacted <= bound.maxRevisions) return 0;
  const target = revisionAsOf(samples, now - bound.minRetentionMs);
  return target > compacted ? target : 0;
}
