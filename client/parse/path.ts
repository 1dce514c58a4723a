/**
 * Where in a document a parser stopped, as a field path (`spec.containers[0].env`), short
 * enough to put in an error message whatever the document holds.
 */

export type PathSegment = string | number;

const MAX_SEGMENT = 40;
const MAX_SEGMENTS_SHOWN = 8;

function segment(s: PathSegment, first: boolean): string {
  if (typeof s === 'number') return `[${s}]`;
  const shown = s.length > MAX_SEGMENT ? `${s.slice(0, MAX_SEGMENT)}…` : s;
  return /^[A-Za-z_$][\w$-]*$/.test(shown) ? (first ? shown : `.${shown}`) : `[${JSON.stringify(shown)}]`;
}

export function formatPath(segments: readonly PathSegment[]): string {
  const skipped = Math.max(0, segments.length - MAX_SEGMENTS_SHOWN);
  let out = skipped ? `…(${skipped} levels)` : '';
  for (let i = skipped; i < segments.length; i++) out += segment(segments[i], i === 0);
  return out;
}
