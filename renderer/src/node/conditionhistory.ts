/**
 * A node's conditions over time, for the timeline on its page: each condition's status as
 * first seen, and every transition after that while the page is open. A transition starts at
 * the condition's lastTransitionTime when the server's clock puts it inside the watched span
 * (what the agent says is more exact than when we heard), else when we saw it.
 */
import type { NodeCondition } from '../../../client/api/types.js';

export interface Segment {
  status: string;
  /** Milliseconds since the epoch. */
  from: number;
  reason?: string;
}

export interface ConditionTrack {
  type: string;
  /** Oldest first; the last one lasts until now. */
  segments: Segment[];
  current: NodeCondition;
}

/** Ready=True is good; for the pressure conditions, True is the bad news. */
export function conditionHealth(type: string, status: string | undefined): 'good' | 'bad' | 'unknown' {
  if (status !== 'True' && status !== 'False') return 'unknown';
  const good = type === 'Ready' ? status === 'True' : status === 'False';
  return good ? 'good' : 'bad';
}

/** What the timeline shows of a condition (a new heartbeat alone changes nothing there). */
function shown(c: NodeCondition): string {
  return `${c.status}|${c.reason}|${c.message}|${c.lastTransitionTime}`;
}

/** Ready first, then the others in the order the agent reports them. */
const ORDER = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];

export class ConditionHistory {
  private readonly tracks = new Map<string, ConditionTrack>();

  constructor(readonly since: number) {}

  /** Takes the node's conditions as of `now`; true when anything changed. */
  observe(conditions: readonly NodeCondition[] | undefined, now: number): boolean {
    let changed = false;
    for (const c of conditions ?? []) {
      if (!c.type) continue;
      const status = c.status ?? 'Unknown';
      const track = this.tracks.get(c.type);
      if (!track) {
        this.tracks.set(c.type, {
          type: c.type,
          segments: [{ status, from: this.since, reason: c.reason }],
          current: c,
        });
        changed = true;
        continue;
      }
      const last = track.segments[track.segments.length - 1];
      if (last.status !== status) {
        const stated = Date.parse(c.lastTransitionTime ?? '');
        const from = stated > last.from && stated <= now ? stated : now;
        track.segments.push({ status, from, reason: c.reason });
        changed = true;
      }
      if (shown(track.current) !== shown(c)) changed = true;
      track.current = c;
    }
    return changed;
  }

  list(): ConditionTrack[] {
    const rank = (t: string) => (ORDER.includes(t) ? ORDER.indexOf(t) : ORDER.length);
    return [...this.tracks.values()].sort(
      (a, b) => rank(a.type) - rank(b.type) || a.type.localeCompare(b.type),
    );
  }
}

export interface Bar {
  status: string;
  reason?: string;
  from: number;
  to: number;
  /** Position and width in percent of the span since the page opened. */
  left: number;
  width: number;
}

/** The segments laid out on a bar from `since` to `now`; the ongoing one reaches the end. */
export function layoutTrack(segments: readonly Segment[], since: number, clock: number): Bar[] {
  // A transition seen since the clock last ticked is still drawn, as the newest moment.
  const now = Math.max(clock, segments[segments.length - 1]?.from ?? clock);
  const span = Math.max(1, now - since);
  return segments.map((s, i) => {
    const from = Math.max(since, s.from);
    const last = i + 1 === segments.length;
    const to = last ? now : Math.max(from, segments[i + 1].from);
    const left = ((from - since) / span) * 100;
    return {
      status: s.status,
      reason: s.reason,
      from,
      to,
      left,
      width: last ? 100 - left : ((to - from) / span) * 100,
    };
  });
}
