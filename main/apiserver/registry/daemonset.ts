/** DaemonSets: defaults and validation (Kubernetes' apps/v1 DaemonSet strategy). */
import { kindInfo } from '../../../client/api/kinds.js';
import { labelSelectorFromObject, SelectorError } from '../../../client/api/selectors.js';
import type { DaemonSet } from '../../../client/api/types.js';
import { deepEqual } from '../../../client/util/objects.js';
import {
  forbidden,
  invalid,
  required,
  validateLabels,
  type FieldError,
} from '../../../client/api/validation.js';
import { validateEnum, validateIntOrPercent, validateMin } from '../validation/common.js';
import { validatePodSpec } from '../validation/podspec.js';
import { applyPodSpecDefaults } from './pod.js';
import type { Strategy } from './strategy.js';

function isZero(v: unknown): boolean {
  return v === undefined || v === 0 || v === '0%';
}

export const daemonSetStrategy: Strategy<DaemonSet> = {
  info: kindInfo('DaemonSet'),
  nameRule: 'subdomain',
  tracksGeneration: true,
  prepareForCreate(ds) {
    delete ds.status;
  },
  applyDefaults(ds) {
    const spec = (ds.spec ??= {});
    const strategy = (spec.updateStrategy ??= {});
    strategy.type ??= 'RollingUpdate';
    if (strategy.type === 'RollingUpdate') {
      const ru = (strategy.rollingUpdate ??= {});
      ru.maxUnavailable ??= 1;
      ru.maxSurge ??= 0;
    }
    spec.revisionHistoryLimit ??= 10;
    const template = (spec.template ??= {});
    applyPodSpecDefaults((template.spec ??= {}));
  },
  validate(ds) {
    const errors: FieldError[] = [];
    const spec = ds.spec ?? {};
    const sel = spec.selector;
    if (!sel) errors.push(required('spec.selector'));
    else if (!Object.keys(sel.matchLabels ?? {}).length && !sel.matchExpressions?.length) {
      errors.push(
        invalid('spec.selector', sel, 'empty selector is invalid for daemonset: it would select every pod'),
      );
    } else {
      try {
        const selector = labelSelectorFromObject(sel, 'spec.selector');
        if (!selector.matches(spec.template?.metadata?.labels ?? {})) {
          errors.push(
            invalid(
              'spec.template.metadata.labels',
              spec.template?.metadata?.labels ?? {},
              '`selector` does not match template `labels`',
            ),
          );
        }
      } catch (err) {
        if (err instanceof SelectorError && err.fieldErrors.length) errors.push(...err.fieldErrors);
        else errors.push(invalid('spec.selector', sel, (err as Error).message));
      }
    }
    errors.push(...validateLabels(spec.template?.metadata?.labels, 'spec.template.metadata.labels'));
    const podSpec = spec.template?.spec;
    errors.push(...validatePodSpec(podSpec, 'spec.template.spec'));
    if (podSpec?.restartPolicy && podSpec.restartPolicy !== 'Always') {
      errors.push(
        invalid(
          'spec.template.spec.restartPolicy',
          podSpec.restartPolicy,
          'must be "Always": a daemon pod runs for as long as its node is eligible',
        ),
      );
    }
    if (podSpec?.activeDeadlineSeconds !== undefined)
      errors.push(
        forbidden(
          'spec.template.spec.activeDeadlineSeconds',
          'activeDeadlineSeconds in DaemonSet is not Supported',
        ),
      );
    const strategy = spec.updateStrategy;
    validateEnum(strategy?.type, 'spec.updateStrategy.type', ['RollingUpdate', 'OnDelete'], errors, false);
    if (strategy?.type === 'RollingUpdate') {
      const ru = strategy.rollingUpdate ?? {};
      validateIntOrPercent(ru.maxUnavailable, 'spec.updateStrategy.rollingUpdate.maxUnavailable', errors);
      validateIntOrPercent(ru.maxSurge, 'spec.updateStrategy.rollingUpdate.maxSurge', errors);
      if (isZero(ru.maxUnavailable) && isZero(ru.maxSurge)) {
        errors.push(
          invalid(
            'spec.updateStrategy.rollingUpdate.maxUnavailable',
            ru.maxUnavailable ?? 0,
            'may not be 0 when `maxSurge` is 0',
          ),
        );
      }
      if (!isZero(ru.maxUnavailable) && !isZero(ru.maxSurge)) {
        errors.push(
          invalid(
            'spec.updateStrategy.rollingUpdate.maxSurge',
            ru.maxSurge,
            'may not be set when `maxUnavailable` is non-zero',
          ),
        );
      }
    } else if (strategy?.rollingUpdate) {
      errors.push(
        forbidden(
          'spec.updateStrategy.rollingUpdate',
          'may not be specified when strategy `type` is "OnDelete"',
        ),
      );
    }
    validateMin(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit', 0, errors);
    validateMin(spec.minReadySeconds, 'spec.minReadySeconds', 0, errors);
    const st = ds.status;
    if (st) {
      for (const f of [
        'currentNumberScheduled',
        'numberMisscheduled',
        'desiredNumberScheduled',
        'numberReady',
        'updatedNumberScheduled',
        'numberAvailable',
        'numberUnavailable',
        'observedGeneration',
        'collisionCount',
      ] as const) {
        validateMin(st[f], `status.${f}`, 0, errors);
      }
    }
    return errors;
  },
  validateUpdate(ds, old) {
    return deepEqual(ds.spec?.selector, old.spec?.selector)
      ? []
      : [invalid('spec.selector', ds.spec?.selector, 'field is immutable')];
  },
};
