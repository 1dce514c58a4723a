/**
 * ConfigMaps: configuration kept apart from the manifests that use it. Validated as Kubernetes
 * validates them (pkg/apis/core/validation ValidateConfigMap): keys are file names, a key is
 * in data or binaryData but not both, 1 MiB in all, and an immutable ConfigMap keeps its data.
 */
import { kindInfo } from '../../../client/api/kinds.js';
import type { ConfigMap } from '../../../client/api/types.js';
import { forbidden, invalid, tooLong, type FieldError } from '../../../client/api/validation.js';
import { deepEqual } from '../../../client/util/objects.js';
import type { Strategy } from './strategy.js';

/** Kubernetes' limit on a ConfigMap's data and binaryData together (corev1.MaxSecretSize too). */
export const MAX_CONFIG_BYTES = 1024 * 1024;
const KEY_MAX = 253;
const KEY_PATTERN = /^[-._a-zA-Z0-9]+$/;
/** Standard base64 with padding, as Kubernetes' JSON carries bytes. */
export const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** What is wrong with a key (empty when it is a valid file name), as IsConfigMapKey says it. */
export function configKeyErrors(key: string): string[] {
  const out: string[] = [];
  if (key.length > KEY_MAX) out.push(`must be no more than ${KEY_MAX} characters`);
  if (!KEY_PATTERN.test(key))
    out.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name')");
  if (key === '.') out.push("must not be '.'");
  else if (key === '..') out.push("must not be '..'");
  else if (key.startsWith('..')) out.push("must not start with '..'");
  return out;
}

export const configMapStrategy: Strategy<ConfigMap> = {
  info: kindInfo('ConfigMap'),
  nameRule: 'subdomain',
  tracksGeneration: false,
  validate(cm) {
    const errors: FieldError[] = [];
    let bytes = 0;
    for (const [key, value] of Object.entries(cm.data ?? {})) {
      for (const m of configKeyErrors(key)) errors.push(invalid('data', key, m));
      bytes += Buffer.byteLength(value, 'utf8');
    }
    for (const [key, value] of Object.entries(cm.binaryData ?? {})) {
      for (const m of configKeyErrors(key)) errors.push(invalid('binaryData', key, m));
      if (cm.data && Object.hasOwn(cm.data, key))
        errors.push(invalid('binaryData', key, 'duplicate of key present in data'));
      if (!BASE64.test(value))
        errors.push(invalid(`binaryData[${key}]`, '<binary>', 'must be base64-encoded'));
      else bytes += Buffer.from(value, 'base64').length;
    }
    // Kubernetes names no field here; data (with binaryData) is what to shrink.
    if (bytes > MAX_CONFIG_BYTES) errors.push(tooLong('data', '', MAX_CONFIG_BYTES));
    return errors;
  },
  validateUpdate(cm, old) {
    if (!old.immutable) return [];
    const errors: FieldError[] = [];
    if (!cm.immutable) errors.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
    if (!deepEqual(cm.data ?? {}, old.data ?? {}))
      errors.push(forbidden('data', 'field is immutable when `immutable` is set'));
    if (!deepEqual(cm.binaryData ?? {}, old.binaryData ?? {}))
      errors.push(forbidden('binaryData', 'field is immutable when `immutable` is set'));
    return errors;
  },
};
