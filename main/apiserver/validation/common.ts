/** Small validation helpers shared by the kinds' validators. */
import { isValidQuantity } from '../../../client/api/quantity.js';
import { invalid, notSupported, required, type FieldError } from '../../../client/api/validation.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export function validateTimestamp(value: string | undefined, path: string, errors: FieldError[]): void {
  if (value === undefined || value === '') return;
  if (!RFC3339.test(value) || Number.isNaN(Date.parse(value))) {
    errors.push(invalid(path, value, 'must be an RFC 3339 timestamp, e.g. "2026-01-02T15:04:05Z"'));
  }
}

export function validateEnum(
  value: string | undefined,
  path: string,
  allowed: string[],
  errors: FieldError[],
  allowEmpty = true,
): void {
  if (value === undefined || (value === '' && allowEmpty)) return;
  if (!allowed.includes(value)) errors.push(notSupported(path, value, allowed));
}

export function validateMin(
  value: number | undefined,
  path: string,
  min: number,
  errors: FieldError[],
): void {
  if (value !== undefined && value < min)
    errors.push(invalid(path, value, `must be greater than or equal to ${min}`));
}

export function validateQuantities(
  map: Record<string, string> | undefined,
  path: string,
  errors: FieldError[],
): void {
  for (const [name, q] of Object.entries(map ?? {})) {
    if (!isValidQuantity(q)) {
      errors.push(invalid(`${path}[${name}]`, q, 'must be a quantity like "500m", "2", "512Mi" or "10Gi"'));
    } else if (q.startsWith('-')) {
      errors.push(invalid(`${path}[${name}]`, q, 'must be greater than or equal to 0'));
    }
  }
}

/** int-or-string count/percentage (maxUnavailable, maxSurge): 1 or "30%". */
export function validateIntOrPercent(value: unknown, path: string, errors: FieldError[]): void {
  if (value === undefined) return;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0)
      errors.push(invalid(path, value, 'must be a whole number greater than or equal to 0'));
    return;
  }
  if (typeof value === 'string') {
    const m = /^(\d+)%$/.exec(value);
    if (!m) errors.push(invalid(path, value, 'must be an integer or a percentage like "25%"'));
    else if (Number(m[1]) > 100) errors.push(invalid(path, value, 'must not be greater than 100%'));
    return;
  }
  errors.push(invalid(path, value, 'must be an integer or a percentage like "25%"'));
}

/** An int-or-string port: 1-65535 or an IANA service name (a named container port). */
export function validatePortNumOrName(value: unknown, path: string, errors: FieldError[]): void {
  if (value === undefined) {
    errors.push(required(path));
    return;
  }
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 1 || value > 65535)
      errors.push(invalid(path, value, 'must be between 1 and 65535, inclusive'));
    return;
  }
  if (typeof value === 'string' && isServiceName(value)) return;
  errors.push(invalid(path, value, 'must be a port number (1-65535) or the name of a container port'));
}

/** IANA_SVC_NAME: at most 15 characters, lowercase letters, digits and '-', at least one letter. */
export function isServiceName(v: string): boolean {
  return (
    v.length >= 1 &&
    v.length <= 15 &&
    /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(v) &&
    /[a-z]/.test(v) &&
    !v.includes('--')
  );
}
