/** NodeMetrics: a node's latest usage, from its agent; kept in memory only. */
import { kindInfo } from '../../../client/api/kinds.js';
import type { NodeMetrics } from '../../../client/api/types.js';
import { invalid, required, type FieldError } from '../../../client/api/validation.js';
import { validateQuantities, validateTimestamp } from '../validation/common.js';
import type { Strategy } from './strategy.js';

export const nodeMetricsStrategy: Strategy<NodeMetrics> = {
  info: kindInfo('NodeMetrics'),
  nameRule: 'subdomain',
  tracksGeneration: false,
  inMemory: true,
  untrackedFields: true,
  validate(m) {
    const errors: FieldError[] = [];
    if (!m.timestamp) errors.push(required('timestamp'));
    validateTimestamp(m.timestamp, 'timestamp', errors);
    if (m.window && !/^\d+(\.\d+)?(ms|s|m)$/.test(m.window))
      errors.push(invalid('window', m.window, 'must be a duration like "10s"'));
    validateQuantities(m.usage, 'usage', errors);
    return errors;
  },
};
