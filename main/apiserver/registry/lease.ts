/** Leases: node heartbeats and leader election. */
import { kindInfo } from '../../../client/api/kinds.js';
import type { Lease } from '../../../client/api/types.js';
import { invalid, type FieldError } from '../../../client/api/validation.js';
import { validateMin, validateTimestamp } from '../validation/common.js';
import type { Strategy } from './strategy.js';

export const leaseStrategy: Strategy<Lease> = {
  info: kindInfo('Lease'),
  nameRule: 'subdomain',
  tracksGeneration: false,
  validate(lease) {
    const errors: FieldError[] = [];
    const s = lease.spec ?? {};
    if (s.leaseDurationSeconds !== undefined && s.leaseDurationSeconds <= 0) {
      errors.push(invalid('spec.leaseDurationSeconds', s.leaseDurationSeconds, 'must be greater than 0'));
    }
    validateMin(s.leaseTransitions, 'spec.leaseTransitions', 0, errors);
    validateTimestamp(s.acquireTime, 'spec.acquireTime', errors);
    validateTimestamp(s.renewTime, 'spec.renewTime', errors);
    return errors;
  },
};
