/**
 * Events: LAST SEEN TYPE REASON OBJECT MESSAGE (wide: LAST SEEN TYPE REASON OBJECT SUBOBJECT
 * SOURCE MESSAGE FIRST SEEN COUNT NAME), as kubectl's printEvent.
 */
import type { Event } from '../../api/types.js';
import { ageOf } from '../age.js';
import type { KindColumns } from './types.js';

/** When the event was last seen, as an RFC 3339 string (series, lastTimestamp, or its first time). */
export function eventLastSeen(e: Event): string | undefined {
  return (
    e.series?.lastObservedTime ||
    e.lastTimestamp ||
    e.firstTimestamp ||
    e.eventTime ||
    e.metadata?.creationTimestamp
  );
}

export function eventFirstSeen(e: Event): string | undefined {
  return e.firstTimestamp || e.eventTime || e.metadata?.creationTimestamp;
}

export function eventCount(e: Event): number {
  return e.series?.count || e.count || 1;
}

/** `pod/web`, or the kind alone when the object has no name. */
export function eventObject(e: Event): string {
  const kind = (e.involvedObject?.kind ?? '').toLowerCase();
  return e.involvedObject?.name ? `${kind}/${e.involvedObject.name}` : kind;
}

/** kubectl's formatEventSource: "component, host" or the reporting controller. */
export function eventSource(e: Event): string {
  const component = e.source?.component || e.reportingComponent || '';
  const host = e.source?.host || e.reportingInstance || '';
  if (!component) return '';
  return host ? `${component}, ${host}` : component;
}

export const eventColumns: KindColumns<Event> = {
  headers: (wide) =>
    wide
      ? [
          'LAST SEEN',
          'TYPE',
          'REASON',
          'OBJECT',
          'SUBOBJECT',
          'SOURCE',
          'MESSAGE',
          'FIRST SEEN',
          'COUNT',
          'NAME',
        ]
      : ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
  cells(e, now, wide) {
    const last = ageOf(eventLastSeen(e), now);
    const message = (e.message ?? '').trim();
    if (!wide) return [last, e.type ?? '', e.reason ?? '', eventObject(e), message];
    return [
      last,
      e.type ?? '',
      e.reason ?? '',
      eventObject(e),
      e.involvedObject?.fieldPath ?? '',
      eventSource(e),
      message,
      ageOf(eventFirstSeen(e), now),
      String(eventCount(e)),
      e.metadata?.name ?? '',
    ];
  },
};

/** Oldest first, as a person reads a story (kubectl events' order). */
export function byLastSeen(a: Event, b: Event): number {
  return (Date.parse(eventLastSeen(a) ?? '') || 0) - (Date.parse(eventLastSeen(b) ?? '') || 0);
}
