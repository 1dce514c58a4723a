/** Events: what happened to an object, for people (describe, the GUI's warnings). */
import { kindInfo } from '../../../client/api/kinds.js';
import type { Event } from '../../../client/api/types.js';
import { invalid, required, type FieldError } from '../../../client/api/validation.js';
import { validateEnum, validateMin, validateTimestamp } from '../validation/common.js';
import type { Strategy } from './strategy.js';

export const eventStrategy: Strategy<Event> = {
  info: kindInfo('Event'),
  nameRule: 'subdomain',
  tracksGeneration: false,
  selectableFields: {
    'involvedObject.kind': (e) => e.involvedObject?.kind ?? '',
    'involvedObject.namespace': (e) => e.involvedObject?.namespace ?? '',
    'involvedObject.name': (e) => e.involvedObject?.name ?? '',
    'involvedObject.uid': (e) => e.involvedObject?.uid ?? '',
    'involvedObject.apiVersion': (e) => e.involvedObject?.apiVersion ?? '',
    'involvedObject.resourceVersion': (e) => e.involvedObject?.resourceVersion ?? '',
    'involvedObject.fieldPath': (e) => e.involvedObject?.fieldPath ?? '',
    reason: (e) => e.reason ?? '',
    reportingComponent: (e) => e.reportingComponent ?? '',
    source: (e) => e.source?.component ?? '',
    type: (e) => e.type ?? '',
  },
  validate(e) {
    const errors: FieldError[] = [];
    if (!e.involvedObject) errors.push(required('involvedObject'));
    else {
      if (!e.involvedObject.kind) errors.push(required('involvedObject.kind'));
      if (!e.involvedObject.name) errors.push(required('involvedObject.name'));
      const ns = e.involvedObject.namespace;
      if (ns && ns !== e.metadata?.namespace) {
        errors.push(invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
      }
    }
    validateEnum(e.type, 'type', ['Normal', 'Warning'], errors);
    validateMin(e.count, 'count', 0, errors);
    if (e.reason && e.reason.length > 128)
      errors.push(invalid('reason', e.reason, 'must be at most 128 characters'));
    if (e.message && e.message.length > 4096)
      errors.push(invalid('message', `${e.message.slice(0, 40)}…`, 'must be at most 4096 characters'));
    for (const f of ['firstTimestamp', 'lastTimestamp', 'eventTime'] as const)
      validateTimestamp(e[f], f, errors);
    return errors;
  },
};
