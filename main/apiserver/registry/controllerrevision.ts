/** ControllerRevisions: immutable snapshots of a controller's pod template. */
import { kindInfo } from '../../../client/api/kinds.js';
import type { ControllerRevision } from '../../../client/api/types.js';
import { deepEqual } from '../../../client/util/objects.js';
import { invalid, type FieldError } from '../../../client/api/validation.js';
import { validateMin } from '../validation/common.js';
import type { Strategy } from './strategy.js';

export const controllerRevisionStrategy: Strategy<ControllerRevision> = {
  info: kindInfo('ControllerRevision'),
  nameRule: 'subdomain',
  tracksGeneration: false,
  validate(cr) {
    const errors: FieldError[] = [];
    validateMin(cr.revision, 'revision', 0, errors);
    return errors;
  },
  validateUpdate(cr, old) {
    return deepEqual(cr.data, old.data) ? [] : [invalid('data', '', 'field is immutable')];
  },
};
