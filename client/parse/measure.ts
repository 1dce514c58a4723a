/**
 * The limits checked on a value that is already built: what YAML aliases expand to, or an
 * object handed over in-process. The walk keeps its own stack (never recursion) and stops at
 * the first excess, so it costs at most `maxValues` steps whatever it is given — shared or even
 * circular references included.
 */
import { forbiddenKey, keyTooLong, tooDeep, tooManyValues, type ParseLimits } from './limits.js';
import { formatPath, type PathSegment } from './path.js';

/** A path as a chain to the parent: nothing is copied per value, the path is spelled out only for a message. */
interface PathLink {
  parent: PathLink | undefined;
  key: PathSegment;
}

function spell(link: PathLink | undefined): string {
  const segments: PathSegment[] = [];
  for (let l = link; l; l = l.parent) segments.push(l.key);
  return formatPath(segments.reverse());
}

/** `depth` is the level of `value` itself (1 for a whole document). */
export function checkValueLimits(value: unknown, limits: ParseLimits, depth = 1): void {
  // Most values pass: a walk that allocates nothing per value says whether this one does; only
  // for one that fails, the walk below, which follows the path, says where.
  if (withinLimits(value, limits, depth)) return;
  checkValueLimitsAt(value, limits, depth);
}

/** The same decision as checkValueLimitsAt, in the same order, with no path kept. */
function withinLimits(value: unknown, limits: ParseLimits, depth: number): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [depth];
  let seen = 0;
  while (values.length) {
    const v = values.pop();
    const d = depths.pop()!;
    if (++seen > limits.maxValues) return false;
    if (typeof v !== 'object' || v === null) continue;
    if (d > limits.maxDepth) return false;
    if (seen + values.length + (Array.isArray(v) ? v.length : 0) > limits.maxValues) return false;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        values.push(v[i]);
        depths.push(d + 1);
      }
    } else {
      for (const key of Object.keys(v)) {
        if (key.length > limits.maxKeyLength || key === '__proto__') return false;
        values.push((v as Record<string, unknown>)[key]);
        depths.push(d + 1);
      }
    }
  }
  return true;
}

function checkValueLimitsAt(value: unknown, limits: ParseLimits, depth: number): void {
  const pending: Array<{ value: unknown; depth: number; at: PathLink | undefined }> = [
    { value, depth, at: undefined },
  ];
  let values = 0;
  while (pending.length) {
    const item = pending.pop()!;
    if (++values > limits.maxValues) throw tooManyValues(limits);
    const v = item.value;
    if (typeof v !== 'object' || v === null) continue;
    if (item.depth > limits.maxDepth) throw tooDeep(limits, spell(item.at));
    // Counted before they are queued, so a list of a million values is refused at once.
    if (values + pending.length + (Array.isArray(v) ? v.length : 0) > limits.maxValues)
      throw tooManyValues(limits);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--)
        pending.push({ value: v[i], depth: item.depth + 1, at: { parent: item.at, key: i } });
    } else {
      for (const key of Object.keys(v)) {
        if (key.length > limits.maxKeyLength) throw keyTooLong(key.length, limits, spell(item.at));
        if (key === '__proto__') throw forbiddenKey(spell(item.at));
        pending.push({
          value: (v as Record<string, unknown>)[key],
          depth: item.depth + 1,
          at: { parent: item.at, key },
        });
      }
    }
  }
}
