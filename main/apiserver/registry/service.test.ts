/**
 * Services are written by the apiserver alone, and validated as Kubernetes validates a
 * Service's ports and type.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ApiError } from '../../../client/api/errors.js';
import type { Service } from '../../../client/api/types.js';
import { formatFieldError } from '../../../client/api/validation.js';
import { startTestApiServer, type TestApiServer } from '../../../test/support/apiserver.js';
import { serviceStrategy } from './service.js';

const service = (port: number): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'default' },
  spec: { ports: [{ port }] },
});

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer();
});
afterEach(async () => t.close());

it('lets no one but the apiserver write a Service, saying why', async () => {
  const err = await t.admin.create(service(80)).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).reason).toBe('Forbidden');
  expect((err as ApiError).message).toContain('kubelab has no service proxy yet, so Services are read-only');
});

it('validates ports: numbered, in range, named when several, unique', () => {
  const svc = (ports: NonNullable<Service['spec']>['ports']): Service => ({
    ...service(1),
    spec: { type: 'ClusterIP', ports },
  });
  const errorsOf = (s: Service) => serviceStrategy.validate(s).map(formatFieldError);
  expect(errorsOf(svc([{ port: 80 }]))).toEqual([]);
  expect(errorsOf(svc([{ port: 0 }, { name: 'b', port: 80, protocol: 'QUIC' }]))).toEqual([
    'spec.ports[0].name: Required value',
    'spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
    'spec.ports[1].protocol: Unsupported value: "QUIC": supported values: "TCP", "UDP", "SCTP"',
  ]);
  expect(
    errorsOf(
      svc([
        { name: 'a', port: 80 },
        { name: 'a', port: 80 },
      ]),
    ),
  ).toEqual(['spec.ports[1].name: Duplicate value: "a"', 'spec.ports[1]: Duplicate value: "80/TCP"']);
  expect(errorsOf({ ...svc([{ port: 80 }]), spec: { type: 'Magic', ports: [{ port: 80 }] } })).toEqual([
    'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "NodePort", "LoadBalancer", "ExternalName"',
  ]);
});
