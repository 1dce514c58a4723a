/**
 * Where a V8 mark-compact's pause goes, from `node --trace-gc-nvp` output (one line per GC of
 * `name=value` pairs; `gc=mc` marks a mark-compact, `pause=` its main-thread pause in ms). The
 * phases named here are those the main thread runs inside the pause; the rest of the pause
 * (the safepoint, smaller phases) is "other".
 */
import { percentileSorted, sortedCopy } from './stats.js';

/**
 * Main-thread phases of a mark-compact's pause, with what each one is. Top-level phases add up
 * to the pause (with "other"); a sub-phase (`parent.child`) is part of its parent's time.
 */
export const PAUSE_PHASES: Array<[key: string, what: string]> = [
  ['mark', 'marking left after concurrent marking'],
  ['clear', 'clearing what died'],
  ['clear.external_string_table', 'external strings (e.g. HTTP/2 header values) finalized'],
  ['clear.maps', 'dead hidden-class transitions cleared'],
  ['clear.weak_references', 'weak references cleared'],
  ['clear.weak_collections', 'WeakMaps and WeakSets cleared'],
  ['clear.join_job', 'the string table pruned'],
  ['evacuate', 'compaction'],
  ['evacuate.copy', 'live objects copied out of fragmented pages'],
  ['evacuate.update_pointers', 'pointers to moved objects updated'],
  ['sweep', 'sweeping started'],
  ['heap.prologue', 'GC prologue callbacks'],
  ['finish', 'finishing (array buffers swept)'],
];

/** Whether a phase is one of those that add up to the pause (not a part of another). */
export const isTopLevel = (phase: string) => phase === 'heap.prologue' || !phase.includes('.');

export interface GcPauseSummary {
  markCompacts: number;
  pauseP50Ms: number;
  pauseMaxMs: number;
  /** Per phase: mean over the mark-compacts, its share of their pauses, and its largest. */
  phases: Array<{ phase: string; what: string; meanMs: number; sharePct: number; maxMs: number }>;
}

function fields(line: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pair of line.split(' ')) {
    const at = pair.indexOf('=');
    if (at > 0) out.set(pair.slice(0, at), Number(pair.slice(at + 1)));
  }
  return out;
}

/** The mark-compacts in `trace` (the text of --trace-gc-nvp lines), or undefined if none. */
export function summarizeGcTrace(trace: string): GcPauseSummary | undefined {
  const mcs = trace
    .split('\n')
    .filter((l) => l.includes(' gc=mc '))
    .map(fields);
  if (mcs.length === 0) return undefined;
  const pauses = mcs.map((f) => f.get('pause') ?? 0);
  const total = pauses.reduce((a, b) => a + b, 0);
  const sum = (key: string) => mcs.reduce((a, f) => a + (f.get(key) ?? 0), 0);
  const named = PAUSE_PHASES.map(([phase, what]) => ({
    phase,
    what,
    meanMs: sum(phase) / mcs.length,
    sharePct: total > 0 ? (100 * sum(phase)) / total : 0,
    maxMs: Math.max(...mcs.map((f) => f.get(phase) ?? 0)),
  }));
  const otherPerGc = mcs.map((f) =>
    Math.max(
      0,
      (f.get('pause') ?? 0) -
        PAUSE_PHASES.filter(([k]) => isTopLevel(k)).reduce((a, [k]) => a + (f.get(k) ?? 0), 0),
    ),
  );
  const other = otherPerGc.reduce((a, b) => a + b, 0);
  const sorted = sortedCopy(pauses);
  return {
    markCompacts: mcs.length,
    pauseP50Ms: percentileSorted(sorted, 50),
    pauseMaxMs: sorted[sorted.length - 1],
    phases: [
      ...named,
      {
        phase: 'other',
        what: 'the rest of the pause',
        meanMs: other / mcs.length,
        sharePct: total > 0 ? (100 * other) / total : 0,
        maxMs: Math.max(...otherPerGc),
      },
    ],
  };
}
