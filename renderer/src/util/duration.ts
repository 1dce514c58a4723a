/** Durations as people type them for a token's lifetime: 90s, 30m, 24h, 7d, or "never". */

/** Seconds; 0 for "never"; undefined for text that is not a duration. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'never') return 0;
  const m = /^(\d+)\s*(s|m|h|d)?$/.exec(t);
  if (!m) return undefined;
  const n = Number(m[1]);
  const seconds = n * { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  return seconds > 0 ? seconds : undefined;
}

/** When something expires, relative to now: "in 23h", "in 6d", "expired". */
export function expiresIn(iso: string | undefined, now: number): string {
  if (!iso) return 'never';
  const s = Math.round((Date.parse(iso) - now) / 1000);
  if (Number.isNaN(s)) return iso;
  if (s <= 0) return 'expired';
  if (s < 3600) return `in ${Math.ceil(s / 60)}m`;
  if (s < 86400) return `in ${Math.round(s / 3600)}h`;
  return `in ${Math.round(s / 86400)}d`;
}
