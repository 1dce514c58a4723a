/**
 * Services: read-only in kubelab (client/api/kinds.ts says why); the apiserver keeps
 * default/kubernetes. What it writes is still validated as Kubernetes validates a Service
 * (pkg/apis/core/validation ValidateService): its type, and ports that are numbered,
 * named when there are several, and unique.
 */
import { kindInfo } from '../../../client/api/kinds.js';
import type { Service } from '../../../client/api/types.js';
import {
  duplicate,
  invalid,
  isDNS1123Label,
  notSupported,
  required,
  validateLabels,
  type FieldError,
} from '../../../client/api/validation.js';
import type { Strategy } from './strategy.js';

const TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];

export const serviceStrategy: Strategy<Service> = {
  info: kindInfo('Service'),
  nameRule: 'label',
  tracksGeneration: false,
  applyDefaults(svc) {
    const spec = (svc.spec ??= {});
    spec.type ??= 'ClusterIP';
    spec.sessionAffinity ??= 'None';
    spec.internalTrafficPolicy ??= 'Cluster';
    for (const p of spec.ports ?? []) {
      p.protocol ??= 'TCP';
      p.targetPort ??= p.port;
    }
  },
  validate(svc) {
    const errors: FieldError[] = [];
    const spec = svc.spec ?? {};
    if (spec.type && !TYPES.includes(spec.type)) errors.push(notSupported('spec.type', spec.type, TYPES));
    const ports = spec.ports ?? [];
    if (ports.length === 0 && spec.type !== 'ExternalName' && spec.clusterIP !== 'None')
      errors.push(required('spec.ports'));
    const names = new Set<string>();
    const keys = new Set<string>();
    for (const [i, p] of ports.entries()) {
      const at = `spec.ports[${i}]`;
      if (ports.length > 1 && !p.name) errors.push(required(`${at}.name`));
      if (p.name) {
        for (const m of isDNS1123Label(p.name)) errors.push(invalid(`${at}.name`, p.name, m));
        if (names.has(p.name)) errors.push(duplicate(`${at}.name`, p.name));
        names.add(p.name);
      }
      if (p.port === undefined) errors.push(required(`${at}.port`));
      else if (!Number.isInteger(p.port) || p.port < 1 || p.port > 65535)
        errors.push(invalid(`${at}.port`, p.port, 'must be between 1 and 65535, inclusive'));
      if (p.protocol && !PROTOCOLS.includes(p.protocol))
        errors.push(notSupported(`${at}.protocol`, p.protocol, PROTOCOLS));
      const key = `${p.port}/${p.protocol ?? 'TCP'}`;
      if (keys.has(key)) errors.push(duplicate(at, key));
      keys.add(key);
    }
    errors.push(...validateLabels(spec.selector, 'spec.selector'));
    return errors;
  },
};
