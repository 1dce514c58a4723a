/** Durations on the command line, as Go's time.ParseDuration reads them: 30s, 5m, 1h30m, 500ms, or plain seconds. */
import { InvalidArgumentError } from 'commander';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds; a bare number is seconds. */
export function parseDurationMs(value: string): number {
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const parts = [...v.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== v) {
    throw new InvalidArgumentError(`"${value}" is not a duration: use e.g. 30s, 5m, 1h30m or 500ms`);
  }
  return parts.reduce((ms, p) => ms + Number(p[1]) * UNIT_MS[p[2]], 0);
}

/** Whole seconds (for TTLs and grace periods). */
export function parseDurationSeconds(value: string): number {
  return Math.round(parseDurationMs(value) / 1000);
}

/** commander parser for a non-negative integer. */
export function parseCount(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError(`"${value}" is not a whole number`);
  return Number(value);
}

/** commander parser for an integer that may be -1 ("use the object's own"). */
export function parseGracePeriod(value: string): number {
  if (!/^-?\d+$/.test(value.trim()))
    throw new InvalidArgumentError(`"${value}" is not a whole number of seconds`);
  return Number(value);
}
