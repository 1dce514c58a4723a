/**
 * Secrets: validated as Kubernetes validates them (ValidateSecret): keys are file names, 1 MiB
 * in all, the keys a type requires, type and (once immutable) data fixed. stringData is merged
 * into data, base64-encoded, when written, and never stored. Errors name keys, never values.
 */
import { kindInfo } from '../../../client/api/kinds.js';
import type { Secret } from '../../../client/api/types.js';
import { forbidden, invalid, required, tooLong, type FieldError } from '../../../client/api/validation.js';
import { deepEqual } from '../../../client/util/objects.js';
import { BASE64, configKeyErrors, MAX_CONFIG_BYTES } from './configmap.js';
import type { Strategy } from './strategy.js';

/** Keys each well-known type must have (Kubernetes' secret types). */
const REQUIRED_KEYS: Record<string, string[]> = {
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
};

/** stringData into data (base64), as the apiserver's conversion does; stringData wins a tie. */
function mergeStringData(secret: Secret): void {
  if (!secret.stringData) return;
  const data = { ...secret.data };
  for (const [k, v] of Object.entries(secret.stringData)) data[k] = Buffer.from(v, 'utf8').toString('base64');
  secret.data = data;
  delete secret.stringData;
}

export const secretStrategy: Strategy<Secret> = {
  info: kindInfo('Secret'),
  nameRule: 'subdomain',
  tracksGeneration: false,
  prepareForCreate: mergeStringData,
  prepareForUpdate: mergeStringData,
  applyDefaults(secret) {
    secret.type ||= 'Opaque';
  },
  validate(secret) {
    const errors: FieldError[] = [];
    let bytes = 0;
    for (const [key, value] of Object.entries(secret.data ?? {})) {
      for (const m of configKeyErrors(key)) errors.push(invalid('data', key, m));
      if (!BASE64.test(value))
        errors.push(invalid(`data[${key}]`, '<secret contents redacted>', 'must be base64-encoded'));
      else bytes += Buffer.from(value, 'base64').length;
    }
    if (bytes > MAX_CONFIG_BYTES) errors.push(tooLong('data', '', MAX_CONFIG_BYTES));
    for (const key of REQUIRED_KEYS[secret.type ?? ''] ?? [])
      if (!secret.data?.[key]) errors.push(required(`data[${key}]`, `a ${secret.type} Secret needs it`));
    if (secret.type === 'kubernetes.io/basic-auth' && !secret.data?.username && !secret.data?.password)
      errors.push(required('data[username]', 'a kubernetes.io/basic-auth Secret needs username or password'));
    return errors;
  },
  validateUpdate(secret, old) {
    const errors: FieldError[] = [];
    if ((secret.type ?? 'Opaque') !== (old.type ?? 'Opaque'))
      errors.push(invalid('type', secret.type, 'field is immutable'));
    if (!old.immutable) return errors;
    if (!secret.immutable) errors.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
    if (!deepEqual(secret.data ?? {}, old.data ?? {}))
      errors.push(forbidden('data', 'field is immutable when `immutable` is set'));
    return errors;
  },
};
