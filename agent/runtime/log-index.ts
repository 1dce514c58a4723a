/**
 * The sidecar index of a log file, `<log>.idx`: when each stretch of the file was first seen.
 * The container writes its log file directly (the agent may not even be running), so no line
 * carries a time of its own; the log store's poller appends one entry per poll in which the file
 * grew. Text, one entry per line, "<end> <time>\n": the bytes from the previous entry's end (0
 * for the first) up to `end` were first seen at `time` (clock ms). Ends and times never decrease.
 */
import { promises as fsp } from 'node:fs';
import { isNotFound } from './layout.js';

export interface IndexEntry {
  /** Byte offset just past the stretch. */
  end: number;
  /** When the stretch was first seen (clock ms). */
  time: number;
}

export function indexPathOf(logFile: string): string {
  return `${logFile}.idx`;
}

export function formatIndexEntries(entries: readonly IndexEntry[]): string {
  return entries.map((e) => `${e.end} ${e.time}\n`).join('');
}

/**
 * Parses an index. Tolerant: an entry that does not parse, or that would move backwards (a
 * crash between truncating a log and its index can leave such), is dropped.
 */
export function parseIndex(text: string): IndexEntry[] {
  const entries: IndexEntry[] = [];
  for (const line of text.split('\n')) {
    const match = /^(\d+) (\d+)$/.exec(line);
    if (!match) continue;
    const entry = { end: Number(match[1]), time: Number(match[2]) };
    const last = entries.at(-1);
    if (last && (entry.end <= last.end || entry.time < last.time)) continue;
    entries.push(entry);
  }
  return entries;
}

/** The index of `logFile` (none when it has no index yet). */
export async function readIndex(logFile: string): Promise<IndexEntry[]> {
  try {
    return parseIndex(await fsp.readFile(indexPathOf(logFile), 'utf8'));
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

export async function appendIndex(logFile: string, entries: readonly IndexEntry[]): Promise<void> {
  if (entries.length > 0) await fsp.appendFile(indexPathOf(logFile), formatIndexEntries(entries));
}

/** How many bytes of the log the index covers. */
export function indexedBytes(entries: readonly IndexEntry[]): number {
  return entries.at(-1)?.end ?? 0;
}

/**
 * When the byte at `offset` was first seen: the time of the stretch holding it. Past the last
 * stretch (bytes the index does not cover yet), the last time; with no index at all, `fallback`.
 */
export function timeAt(entries: readonly IndexEntry[], offset: number, fallback: number): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid].end > offset) hi = mid;
    else lo = mid + 1;
  }
  if (lo < entries.length) return entries[lo].time;
  return entries.at(-1)?.time ?? fallback;
}

/**
 * Where the first stretch first seen at or after `since` starts, or undefined when every stretch
 * is older.
 */
export function offsetSince(entries: readonly IndexEntry[], since: number): number | undefined {
  for (let i = 0; i < entries.length; i++) {
    if (entries[i].time >= since) return i === 0 ? 0 : entries[i - 1].end;
  }
  return undefined;
}
