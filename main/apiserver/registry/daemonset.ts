/**
 * DaemonSets: defaults, validation and the template generation (Kubernetes' apps/v1 DaemonSet
 * strategy and conversion).
 */
import { kindInfo } from '../../../client/api/kinds.js';
import type { DaemonSet } from '../../../client/api/types.js';
import { deepEqual } from '../../../client/util/objects.js';
import { forbidden, invalid, type FieldError } from '../../../client/api/validation.js';
import { validateEnum, validateIntOrPercent, validateMin } from '../validation/common.js';
import { validateSelectorAndTemplate } from '../validation/template.js';
import { applyPodSpecDefaults } from './pod.js';
import type { Strategy } from './strategy.js';

function isZero(v: unknown): boolean {
  return v === undefined || v === 0 || v === '0%';
}

/**
 * The template generation: apps/v1 has no spec.templateGeneration, so Kubernetes keeps it in
 * this annotation, and the DaemonSet controller labels pods with it (pod-template-generation).
 * Spelled out again here rather than imported: the apiserver does not depend on controllers.
 */
const TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';
const TEMPLATE_GENERATION_FIELD = `metadata.annotations[${TEMPLATE_GENERATION}]`;
const INT64_MAX = 2n ** 63n - 1n;

/**
 * The annotation as Kubernetes' conversion reads it (strconv.ParseInt, base 10, 64 bits):
 * undefined when absent, null when it is not such a number.
 */
function parseTemplateGeneration(ds: DaemonSet): bigint | undefined | null {
  const value = ds.metadata?.annotations?.[TEMPLATE_GENERATION];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[+-]?\d+$/.test(value)) return null;
  const n = BigInt(value);
  return n > INT64_MAX || n < -INT64_MAX - 1n ? null : n;
}

function setTemplateGeneration(ds: DaemonSet, generation: bigint): void {
  const meta = (ds.metadata ??= {});
  meta.annotations = { ...meta.annotations, [TEMPLATE_GENERATION]: generation.toString() };
}

export const daemonSetStrategy: Strategy<DaemonSet> = {
  info: kindInfo('DaemonSet'),
  nameRule: 'subdomain',
  tracksGeneration: true,
  prepareForCreate(ds) {
    delete ds.status;
    // A client's generation is kept on create when it is 1 or more (PrepareForCreate), so a
    // DaemonSet restored or moved from another cluster keeps matching the generation label of
    // the pods it adopts; anything below 1 starts at 1. A value that is not a number is left
    // for validate to refuse, as Kubernetes' conversion does.
    const requested = parseTemplateGeneration(ds);
    if (requested === null) return;
    setTemplateGeneration(ds, requested !== undefined && requested >= 1n ? requested : 1n);
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
    if (parseTemplateGeneration(ds) === null) {
      errors.push(
        invalid(
          TEMPLATE_GENERATION_FIELD,
          ds.metadata?.annotations?.[TEMPLATE_GENERATION],
          'must be a whole number; kubelab keeps the template generation itself: leave the annotation out',
        ),
      );
    }
    const spec = ds.spec ?? {};
    errors.push(...validateSelectorAndTemplate('daemonset', spec.selector, spec.template));
    const podSpec = spec.template?.spec;
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
  prepareForUpdate(ds, old) {
    // An update may not set the template generation: it is the stored one, plus one when the
    // template changes. A DaemonSet stored without one counts as 0, as the conversion reads it.
    // A value that is not a number is left for validate to refuse, as the conversion does.
    if (parseTemplateGeneration(ds) === null) return;
    const stored = parseTemplateGeneration(old) ?? 0n;
    let generation = stored;
    if (!deepEqual(ds.spec?.template, old.spec?.template)) {
      // Go would wrap past the int64 maximum to a negative number, which is no label value.
      generation = stored >= INT64_MAX ? 1n : stored + 1n;
    }
    setTemplateGeneration(ds, generation);
  },
  validateUpdate(ds, old) {
    return deepEqual(ds.spec?.selector, old.spec?.selector)
      ? []
      : [invalid('spec.selector', ds.spec?.selector, 'field is immutable')];
  },
};
