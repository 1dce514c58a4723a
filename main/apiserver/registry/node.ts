/** Nodes: cluster-scoped, registered by their agent with status (Kubernetes keeps it on create). */
import { kindInfo } from '../../../client/api/kinds.js';
import type { Node } from '../../../client/api/types.js';
import {
  duplicate,
  invalid,
  isQualifiedName,
  isValidLabelValue,
  required,
  type FieldError,
} from '../../../client/api/validation.js';
import { validateEnum, validateQuantities, validateTimestamp } from '../validation/common.js';
import { TAINT_EFFECTS } from '../validation/podspec.js';
import type { Strategy } from './strategy.js';

export const nodeStrategy: Strategy<Node> = {
  info: kindInfo('Node'),
  nameRule: 'subdomain',
  tracksGeneration: false,
  selectableFields: { 'spec.unschedulable': (n) => String(n.spec?.unschedulable ?? false) },
  validate(node) {
    const errors: FieldError[] = [];
    const seen = new Set<string>();
    (node.spec?.taints ?? []).forEach((t, i) => {
      const p = `spec.taints[${i}]`;
      if (!t.key) errors.push(required(`${p}.key`));
      else for (const m of isQualifiedName(t.key)) errors.push(invalid(`${p}.key`, t.key, m));
      if (t.value) for (const m of isValidLabelValue(t.value)) errors.push(invalid(`${p}.value`, t.value, m));
      if (!t.effect) errors.push(required(`${p}.effect`));
      validateEnum(t.effect, `${p}.effect`, TAINT_EFFECTS, errors);
      validateTimestamp(t.timeAdded, `${p}.timeAdded`, errors);
      const id = `${t.key}:${t.effect}`;
      if (seen.has(id)) errors.push(duplicate(p, `${t.key}:${t.effect}`));
      seen.add(id);
    });
    validateQuantities(node.status?.capacity, 'status.capacity', errors);
    validateQuantities(node.status?.allocatable, 'status.allocatable', errors);
    (node.status?.conditions ?? []).forEach((c, i) => {
      const p = `status.conditions[${i}]`;
      if (!c.type) errors.push(required(`${p}.type`));
      validateEnum(c.status, `${p}.status`, ['True', 'False', 'Unknown'], errors, false);
      validateTimestamp(c.lastHeartbeatTime, `${p}.lastHeartbeatTime`, errors);
      validateTimestamp(c.lastTransitionTime, `${p}.lastTransitionTime`, errors);
    });
    (node.status?.addresses ?? []).forEach((a, i) => {
      if (!a.type) errors.push(required(`status.addresses[${i}].type`));
      if (!a.address) errors.push(required(`status.addresses[${i}].address`));
    });
    return errors;
  },
};
