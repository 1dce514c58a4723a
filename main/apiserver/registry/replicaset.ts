/** ReplicaSets: defaults and validation (Kubernetes' apps/v1 ReplicaSet strategy). */
import { kindInfo } from '../../../client/api/kinds.js';
import type { ReplicaSet } from '../../../client/api/types.js';
import { invalid, type FieldError } from '../../../client/api/validation.js';
import { deepEqual } from '../../../client/util/objects.js';
import { validateMin } from '../validation/common.js';
import { validateSelectorAndTemplate } from '../validation/template.js';
import { applyPodSpecDefaults } from './pod.js';
import type { Strategy } from './strategy.js';

export const replicaSetStrategy: Strategy<ReplicaSet> = {
  info: kindInfo('ReplicaSet'),
  nameRule: 'subdomain',
  tracksGeneration: true,
  prepareForCreate(rs) {
    delete rs.status;
  },
  applyDefaults(rs) {
    const spec = (rs.spec ??= {});
    spec.replicas ??= 1;
    applyPodSpecDefaults(((spec.template ??= {}).spec ??= {}));
  },
  validate(rs) {
    const spec = rs.spec ?? {};
    const errors = validateSelectorAndTemplate('replicaset', spec.selector, spec.template);
    validateMin(spec.replicas, 'spec.replicas', 0, errors);
    validateMin(spec.minReadySeconds, 'spec.minReadySeconds', 0, errors);
    const st = rs.status ?? {};
    for (const f of [
      'replicas',
      'fullyLabeledReplicas',
      'readyReplicas',
      'availableReplicas',
      'observedGeneration',
    ] as const) {
      validateMin(st[f], `status.${f}`, 0, errors);
    }
    return errors;
  },
  validateUpdate(rs, old): FieldError[] {
    return deepEqual(rs.spec?.selector, old.spec?.selector)
      ? []
      : [invalid('spec.selector', rs.spec?.selector, 'field is immutable')];
  },
};
