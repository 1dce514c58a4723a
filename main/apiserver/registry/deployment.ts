/** Deployments: defaults and validation (Kubernetes' apps/v1 Deployment strategy). */
import { kindInfo } from '../../../client/api/kinds.js';
import type { Deployment } from '../../../client/api/types.js';
import { forbidden, invalid, type FieldError } from '../../../client/api/validation.js';
import { deepEqual } from '../../../client/util/objects.js';
import { validateEnum, validateIntOrPercent, validateMin } from '../validation/common.js';
import { validateSelectorAndTemplate } from '../validation/template.js';
import { applyPodSpecDefaults } from './pod.js';
import type { Strategy } from './strategy.js';

const isZero = (v: unknown) => v === undefined || v === 0 || v === '0%';

export const deploymentStrategy: Strategy<Deployment> = {
  info: kindInfo('Deployment'),
  nameRule: 'subdomain',
  tracksGeneration: true,
  annotationsBumpGeneration: true,
  statusWritesAnnotations: true,
  prepareForCreate(d) {
    delete d.status;
  },
  applyDefaults(d) {
    const spec = (d.spec ??= {});
    spec.replicas ??= 1;
    const strategy = (spec.strategy ??= {});
    strategy.type ??= 'RollingUpdate';
    if (strategy.type === 'RollingUpdate') {
      const ru = (strategy.rollingUpdate ??= {});
      ru.maxUnavailable ??= '25%';
      ru.maxSurge ??= '25%';
    }
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
    applyPodSpecDefaults(((spec.template ??= {}).spec ??= {}));
  },
  validate(d) {
    const spec = d.spec ?? {};
    const errors = validateSelectorAndTemplate('deployment', spec.selector, spec.template);
    validateMin(spec.replicas, 'spec.replicas', 0, errors);
    const strategy = spec.strategy;
    validateEnum(strategy?.type, 'spec.strategy.type', ['Recreate', 'RollingUpdate'], errors, false);
    if (strategy?.type === 'Recreate' && strategy.rollingUpdate) {
      errors.push(
        forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"),
      );
    }
    if (strategy?.type === 'RollingUpdate') {
      const ru = strategy.rollingUpdate ?? {};
      validateIntOrPercent(ru.maxUnavailable, 'spec.strategy.rollingUpdate.maxUnavailable', errors);
      validateIntOrPercent(ru.maxSurge, 'spec.strategy.rollingUpdate.maxSurge', errors);
      if (isZero(ru.maxUnavailable) && isZero(ru.maxSurge)) {
        errors.push(
          invalid(
            'spec.strategy.rollingUpdate.maxUnavailable',
            ru.maxUnavailable ?? 0,
            'may not be 0 when `maxSurge` is 0',
          ),
        );
      }
    }
    validateMin(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit', 0, errors);
    validateMin(spec.minReadySeconds, 'spec.minReadySeconds', 0, errors);
    validateMin(spec.progressDeadlineSeconds, 'spec.progressDeadlineSeconds', 0, errors);
    if (
      spec.progressDeadlineSeconds !== undefined &&
      spec.progressDeadlineSeconds <= (spec.minReadySeconds ?? 0)
    ) {
      errors.push(
        invalid(
          'spec.progressDeadlineSeconds',
          spec.progressDeadlineSeconds,
          'must be greater than minReadySeconds',
        ),
      );
    }
    const st = d.status ?? {};
    for (const f of [
      'observedGeneration',
      'replicas',
      'updatedReplicas',
      'readyReplicas',
      'availableReplicas',
      'unavailableReplicas',
      'collisionCount',
    ] as const) {
      validateMin(st[f], `status.${f}`, 0, errors);
    }
    return errors;
  },
  validateUpdate(d, old): FieldError[] {
    return deepEqual(d.spec?.selector, old.spec?.selector)
      ? []
      : [invalid('spec.selector', d.spec?.selector, 'field is immutable')];
  },
};
