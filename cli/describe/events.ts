/** The Events section at the end of describe: the object's events, oldest first (kubectl's DescribeEvents). */
import type { KindInfo } from '../../client/api/kinds.js';
import type { Event, KubeObject } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { escapeFieldValue } from '../../client/api/selectors.js';
import { ageOf } from '../../client/print/age.js';
import {
  byLastSeen,
  eventCount,
  eventFirstSeen,
  eventLastSeen,
  eventSource,
} from '../../client/print/columns/event.js';
import type { DescribeWriter } from './writer.js';

/** Events about the object (matched by kind, name and, when the event has one, uid). */
export async function eventsFor(client: Client, info: KindInfo, object: KubeObject): Promise<Event[]> {
  const meta = object.metadata ?? {};
  const fieldSelector = [
    `involvedObject.kind=${escapeFieldValue(info.kind)}`,
    `involvedObject.name=${escapeFieldValue(meta.name ?? '')}`,
  ].join(',');
  // Events of cluster-scoped objects are recorded in some namespace ("default"): search all.
  const list = await client.list('Event', {
    namespace: info.namespaced ? (meta.namespace ?? '') : '',
    fieldSelector,
  });
  return list.items
    .filter((e) => !e.involvedObject?.uid || !meta.uid || e.involvedObject.uid === meta.uid)
    .sort(byLastSeen);
}

export function writeEvents(w: DescribeWriter, events: Event[], now: number): void {
  if (!events.length) {
    w.line(0, 'Events:', '<none>');
    return;
  }
  w.line(0, 'Events:');
  w.table(
    1,
    ['Type', 'Reason', 'Age', 'From', 'Message'],
    events.map((e) => {
      const count = eventCount(e);
      const age =
        count > 1
          ? `${ageOf(eventLastSeen(e), now)} (x${count} over ${ageOf(eventFirstSeen(e), now)})`
          : ageOf(eventFirstSeen(e), now);
      return [e.type ?? '', e.reason ?? '', age, eventSource(e), (e.message ?? '').trim()];
    }),
  );
}
