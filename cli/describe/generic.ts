/** describe for the kinds without a describer of their own: metadata, then what matters of each. */
import type { KindInfo } from '../../client/api/kinds.js';
import type {
  ConfigMap,
  ControllerRevision,
  Event,
  KubeObject,
  Lease,
  Namespace,
  NodeMetrics,
} from '../../client/api/types.js';
import { eventObject, eventSource } from '../../client/print/columns/event.js';
import { controlledBy, writeMeta } from './common.js';
import { describeTime, type DescribeWriter } from './writer.js';

export function describeGeneric(w: DescribeWriter, info: KindInfo, object: KubeObject): void {
  writeMeta(w, object, info.namespaced);
  switch (info.kind) {
    case 'Namespace':
      w.field(0, 'Status', (object as Namespace).status?.phase ?? 'Active');
      break;
    case 'Lease': {
      const spec = (object as Lease).spec ?? {};
      w.field(0, 'Holder Identity', spec.holderIdentity);
      w.field(0, 'Lease Duration Seconds', spec.leaseDurationSeconds);
      w.field(0, 'Acquire Time', describeTime(spec.acquireTime));
      w.field(0, 'Renew Time', describeTime(spec.renewTime));
      break;
    }
    case 'ControllerRevision':
      w.field(0, 'Controlled By', controlledBy(object));
      w.field(0, 'Revision', (object as ControllerRevision).revision ?? 0);
      break;
    case 'NodeMetrics': {
      const m = object as NodeMetrics;
      w.field(0, 'Timestamp', describeTime(m.timestamp));
      w.field(0, 'Window', m.window);
      w.map(0, 'Usage', m.usage, ':  ');
      break;
    }
    case 'ConfigMap': {
      // As kubectl describes one: each key, a rule, its value; binary values by size only.
      const cm = object as ConfigMap;
      w.line(0, '');
      w.line(0, 'Data');
      w.line(0, '====');
      for (const [key, value] of Object.entries(cm.data ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
        w.line(0, `${key}:`);
        w.line(0, '----');
        w.line(0, value);
        w.line(0, '');
      }
      w.line(0, '');
      w.line(0, 'BinaryData');
      w.line(0, '====');
      for (const [key, value] of Object.entries(cm.binaryData ?? {}).sort(([a], [b]) => a.localeCompare(b)))
        w.line(0, `${key}: ${Buffer.from(value, 'base64').length} bytes`);
      break;
    }
    case 'Event': {
      const e = object as Event;
      w.field(0, 'Type', e.type);
      w.field(0, 'Reason', e.reason);
      w.field(0, 'Object', eventObject(e));
      w.field(0, 'Source', eventSource(e));
      w.field(0, 'Count', e.count ?? 1);
      w.field(0, 'First Seen', describeTime(e.firstTimestamp ?? e.eventTime));
      w.field(0, 'Last Seen', describeTime(e.lastTimestamp ?? e.eventTime));
      w.field(0, 'Message', e.message);
      break;
    }
    default:
      w.field(0, 'Controlled By', controlledBy(object));
  }
}
