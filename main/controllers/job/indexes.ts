/**
 * Completion indexes of Indexed Jobs: the pod's index (its annotation), and the succeeded set as
 * Kubernetes writes status.completedIndexes — sorted ranges, "0-3,5,7-8".
 */
import type { Pod } from '../../../client/api/types.js';

export const COMPLETION_INDEX_ANNOTATION = 'batch.kubernetes.io/job-completion-index';

/** The pod's completion index, or undefined when it has none (or an unreadable one). */
export function completionIndexOf(pod: Pod): number | undefined {
  const v =
    pod.metadata?.annotations?.[COMPLETION_INDEX_ANNOTATION] ??
    pod.metadata?.labels?.[COMPLETION_INDEX_ANNOTATION];
  if (v === undefined || !/^\d{1,9}$/.test(v)) return undefined;
  return Number(v);
}

/** Parses "0-3,5" (invalid parts are ignored, as the controller must not stop on a bad status). */
export function parseIndexes(text: string | undefined, completions: number): Set<number> {
  const out = new Set<number>();
  for (const part of (text ?? '').split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const from = Number(m[1]);
    const to = Math.min(m[2] === undefined ? from : Number(m[2]), completions - 1);
    for (let i = from; i <= to; i++) out.add(i);
  }
  return out;
}

export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
