/**
 * Namespaces: created Active with the "kubernetes" finalizer; a delete marks them
 * Terminating, and they leave the store once the namespace controller has removed their
 * content and cleared spec.finalizers.
 */
import { kindInfo } from '../../../client/api/kinds.js';
import type { Namespace } from '../../../client/api/types.js';
import { validateFinalizerName, type FieldError } from '../../../client/api/validation.js';
import { validateEnum } from '../validation/common.js';
import type { Strategy } from './strategy.js';

export const NAMESPACE_FINALIZER = 'kubernetes';

export const namespaceStrategy: Strategy<Namespace> = {
  info: kindInfo('Namespace'),
  nameRule: 'label',
  tracksGeneration: false,
  selectableFields: { 'status.phase': (ns) => ns.status?.phase ?? '' },
  prepareForCreate(ns) {
    ns.spec = { ...ns.spec, finalizers: [...new Set([...(ns.spec?.finalizers ?? []), NAMESPACE_FINALIZER])] };
    ns.status = { phase: 'Active' };
  },
  applyDefaults(ns) {
    ns.status ??= {};
    ns.status.phase ??= ns.metadata?.deletionTimestamp ? 'Terminating' : 'Active';
  },
  validate(ns) {
    const errors: FieldError[] = [];
    (ns.spec?.finalizers ?? []).forEach((f, i) =>
      errors.push(...validateFinalizerName(f, `spec.finalizers[${i}]`)),
    );
    validateEnum(ns.status?.phase, 'status.phase', ['Active', 'Terminating'], errors);
    return errors;
  },
  beginDeletion(ns) {
    ns.status = { ...ns.status, phase: 'Terminating' };
    return (ns.spec?.finalizers?.length ?? 0) > 0;
  },
  readyToDelete(ns) {
    return !ns.spec?.finalizers?.length;
  },
};
