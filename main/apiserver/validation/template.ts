/**
 * What every controller of pods checks of its spec (Kubernetes' ValidatePodTemplateSpecForReplicaSet
 * and its kin): a non-empty selector that matches the template's labels, a valid pod spec, and
 * a restart policy the kind allows — Always for controllers that replace pods that end,
 * OnFailure or Never for Jobs.
 */
import { labelSelectorFromObject, SelectorError } from '../../../client/api/selectors.js';
import type { LabelSelector, PodTemplateSpec } from '../../../client/api/types.js';
import {
  invalid,
  notSupported,
  required,
  validateLabels,
  type FieldError,
} from '../../../client/api/validation.js';
import { validatePodSpec } from './podspec.js';

const POD_RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];

/** A non-empty, valid selector that selects the template's labels. */
export function validateSelector(
  kind: string,
  selector: LabelSelector | undefined,
  templateLabels: Record<string, string> | undefined,
): FieldError[] {
  if (!selector) return [required('spec.selector')];
  if (!Object.keys(selector.matchLabels ?? {}).length && !selector.matchExpressions?.length)
    return [
      invalid('spec.selector', selector, `empty selector is invalid for ${kind}: it would select every pod`),
    ];
  try {
    const parsed = labelSelectorFromObject(selector, 'spec.selector');
    if (!parsed.matches(templateLabels ?? {}))
      return [
        invalid(
          'spec.template.metadata.labels',
          templateLabels ?? {},
          '`selector` does not match template `labels`',
        ),
      ];
  } catch (err) {
    if (err instanceof SelectorError && err.fieldErrors.length) return [...err.fieldErrors];
    return [invalid('spec.selector', selector, (err as Error).message)];
  }
  return [];
}

/** A pod template's labels, pod spec and restart policy (restartPolicies: what the kind allows). */
export function validatePodTemplate(
  template: PodTemplateSpec | undefined,
  opts: { restartPolicies?: string[]; prefix?: string } = {},
): FieldError[] {
  const prefix = opts.prefix ?? 'spec.template';
  const errors = [...validateLabels(template?.metadata?.labels, `${prefix}.metadata.labels`)];
  errors.push(...validatePodSpec(template?.spec, `${prefix}.spec`));
  const allowed = opts.restartPolicies ?? ['Always'];
  // An unknown policy is the pod spec's error already; a known one may still not fit the kind.
  const policy = template?.spec?.restartPolicy;
  if (policy && POD_RESTART_POLICIES.includes(policy) && !allowed.includes(policy))
    errors.push(notSupported(`${prefix}.spec.restartPolicy`, policy, allowed));
  return errors;
}

export function validateSelectorAndTemplate(
  kind: string,
  selector: LabelSelector | undefined,
  template: PodTemplateSpec | undefined,
  opts: { restartPolicies?: string[] } = {},
): FieldError[] {
  return [
    ...validateSelector(kind, selector, template?.metadata?.labels),
    ...validatePodTemplate(template, opts),
  ];
}
