/** Pod and container security contexts (Kubernetes' ValidatePodSecurityContext / ValidateSecurityContext). */
import type { PodSecurityContext, SecurityContext } from '../../../client/api/types.js';
import { invalid, type FieldError } from '../../../client/api/validation.js';

const CAPABILITY = /^(ALL|(CAP_)?[A-Z][A-Z0-9_]*)$/;

function validateId(value: number | undefined, path: string, errors: FieldError[]): void {
  if (value !== undefined && (value < 0 || !Number.isInteger(value)))
    errors.push(invalid(path, value, 'must be between 0 and 2147483647, inclusive'));
}

export function validatePodSecurityContext(sc: PodSecurityContext | undefined, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!sc) return errors;
  validateId(sc.runAsUser, `${path}.runAsUser`, errors);
  validateId(sc.runAsGroup, `${path}.runAsGroup`, errors);
  validateId(sc.fsGroup, `${path}.fsGroup`, errors);
  (sc.supplementalGroups ?? []).forEach((g, i) => validateId(g, `${path}.supplementalGroups[${i}]`, errors));
  if (sc.runAsNonRoot && sc.runAsUser === 0)
    errors.push(invalid(`${path}.runAsNonRoot`, true, 'must not be true when runAsUser is 0 (root)'));
  return errors;
}

export function validateSecurityContext(sc: SecurityContext | undefined, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!sc) return errors;
  validateId(sc.runAsUser, `${path}.runAsUser`, errors);
  validateId(sc.runAsGroup, `${path}.runAsGroup`, errors);
  if (sc.privileged && sc.allowPrivilegeEscalation === false)
    errors.push(invalid(path, '', 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
  for (const which of ['add', 'drop'] as const) {
    (sc.capabilities?.[which] ?? []).forEach((cap, i) => {
      if (!CAPABILITY.test(cap))
        errors.push(
          invalid(
            `${path}.capabilities.${which}[${i}]`,
            cap,
            'must be a capability name such as NET_BIND_SERVICE, or ALL',
          ),
        );
    });
  }
  return errors;
}
