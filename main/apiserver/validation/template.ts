/**
 * What every controller of pods checks of its spec (Kubernetes' ValidatePodTemplateSpecForReplicaSet
 * and the DaemonSet's equivalent): a non-empty selector that matches the template's labels, a
 * valid pod spec, and restartPolicy Always — the controller, not the pod, restarts what ends.
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

export function validateSelectorAndTemplate(
  kind: string,
  selector: LabelSelector | undefined,
  template: PodTemplateSpec | undefined,
  opts: { restartPolicies?: string[] } = {},
): FieldError[] {
  const errors: FieldError[] = [];
  if (!selector) errors.push(required('spec.selector'));
  else if (!Object.keys(selector.matchLabels ?? {}).length && !selector.matchExpressions?.length) {
    errors.push(
      invalid('spec.selector', selector, `empty selector is invalid for ${kind}: it would select every pod`),
    );
  } else {
    try {
      const parsed = labelSelectorFromObject(selector, 'spec.selector');
      if (!parsed.matches(template?.metadata?.labels ?? {})) {
        errors.push(
          invalid(
            'spec.template.metadata.labels',
            template?.metadata?.labels ?? {},
            '`selector` does not match template `labels`',
          ),
        );
      }
    } catch (err) {
      if (err instanceof SelectorError && err.fieldErrors.length) errors.push(...err.fieldErrors);
      else errors.push(invalid('spec.selector', selector, (err as Error).message));
    }
  }
  errors.push(...validateLabels(template?.metadata?.labels, 'spec.template.metadata.labels'));
  const podSpec = template?.spec;
  errors.push(...validatePodSpec(podSpec, 'spec.template.spec'));
  const allowed = opts.restartPolicies ?? ['Always'];
  // An unknown policy is the pod spec's error already; a known one may still not fit the kind.
  const policy = podSpec?.restartPolicy;
  if (policy && POD_RESTART_POLICIES.includes(policy) && !allowed.includes(policy)) {
    errors.push(notSupported('spec.template.spec.restartPolicy', policy, allowed));
  }
  return errors;
}
