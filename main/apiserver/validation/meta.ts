/**
 * ObjectMeta validation (Kubernetes' ValidateObjectMeta and ValidateObjectMetaUpdate).
 */
import {
  forbidden,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isValidGenerateName,
  required,
  validateAnnotations,
  validateFinalizers,
  validateLabels,
  type FieldError,
} from '../../../client/api/validation.js';
import type { ObjectMeta } from '../../../client/api/types.js';

export interface MetaRules {
  namespaced: boolean;
  nameRule: 'subdomain' | 'label';
  /** The name will be generated from generateName. */
  generated: boolean;
}

export function validateObjectMeta(meta: ObjectMeta, rules: MetaRules): FieldError[] {
  const errors: FieldError[] = [];
  const nameCheck = rules.nameRule === 'label' ? isDNS1123Label : isDNS1123Subdomain;
  if (meta.generateName) {
    for (const msg of isValidGenerateName(meta.generateName, nameCheck))
      errors.push(invalid('metadata.generateName', meta.generateName, msg));
  }
  if (!meta.name) {
    if (!rules.generated || !meta.generateName)
      errors.push(required('metadata.name', 'name or generateName is required'));
  } else {
    for (const msg of nameCheck(meta.name)) errors.push(invalid('metadata.name', meta.name, msg));
  }
  if (rules.namespaced) {
    if (!meta.namespace) errors.push(required('metadata.namespace'));
    else
      for (const msg of isDNS1123Label(meta.namespace))
        errors.push(invalid('metadata.namespace', meta.namespace, msg));
  } else if (meta.namespace) {
    errors.push(forbidden('metadata.namespace', 'not allowed on a cluster-scoped resource'));
  }
  if (meta.generation !== undefined && meta.generation < 0)
    errors.push(invalid('metadata.generation', meta.generation, 'must be greater than or equal to 0'));
  errors.push(...validateLabels(meta.labels, 'metadata.labels'));
  errors.push(...validateAnnotations(meta.annotations, 'metadata.annotations'));
  errors.push(...validateFinalizers(meta.finalizers, 'metadata.finalizers'));
  const controllers = (meta.ownerReferences ?? []).filter((r) => r.controller);
  if (controllers.length > 1) {
    errors.push(
      invalid(
        'metadata.ownerReferences',
        controllers.map((r) => r.name),
        'only one reference can have controller set to true',
      ),
    );
  }
  (meta.ownerReferences ?? []).forEach((r, i) => {
    const path = `metadata.ownerReferences[${i}]`;
    if (!r.apiVersion) errors.push(required(`${path}.apiVersion`, 'apiVersion must not be empty'));
    if (!r.kind) errors.push(required(`${path}.kind`, 'kind must not be empty'));
    if (!r.name) errors.push(required(`${path}.name`, 'name must not be empty'));
    if (!r.uid) errors.push(required(`${path}.uid`, 'uid must not be empty'));
  });
  return errors;
}

export function validateObjectMetaUpdate(meta: ObjectMeta, old: ObjectMeta): FieldError[] {
  const errors: FieldError[] = [];
  if (meta.name !== old.name) errors.push(invalid('metadata.name', meta.name, 'field is immutable'));
  if (meta.namespace !== old.namespace)
    errors.push(invalid('metadata.namespace', meta.namespace, 'field is immutable'));
  // Once deletion began, no new finalizer may hold the object back.
  if (old.deletionTimestamp) {
    const before = new Set(old.finalizers ?? []);
    for (const f of meta.finalizers ?? []) {
      if (!before.has(f))
        errors.push(
          forbidden(
            'metadata.finalizers',
            `no new finalizers can be added if the object is being deleted, found new finalizer ${f}`,
          ),
        );
    }
  }
  return errors;
}
