/**
 * spec.readinessGates: kept as sent, each gate a condition type that is a qualified name
 * (Kubernetes' validateReadinessGates); a bad one is refused naming its field, storing nothing.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Pod } from '../../client/api/types.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer();
});
afterEach(async () => t.close());

const pod = (conditionType: string | undefined): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'gated', namespace: 'default' },
  spec: {
    containers: [{ name: 'c', image: 'nginx:1' }],
    readinessGates: [conditionType === undefined ? {} : { conditionType }],
  },
});

it('keeps readiness gates as sent', async () => {
  const created = await t.admin.create(pod('example.com/load-balancer'));
  expect(created.spec?.readinessGates).toEqual([{ conditionType: 'example.com/load-balancer' }]);
});

it('refuses a gate without a condition type, or with one that is not a qualified name', async () => {
  for (const [type, message] of [
    [undefined, /must be True for the pod to be Ready/],
    ['not a name!', /must consist of alphanumeric characters/],
  ] as const) {
    const err = await t.admin.create(pod(type)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const causes = (err as ApiError).causes;
    expect(causes.map((c) => c.field)).toEqual(['spec.readinessGates[0].conditionType']);
    expect(causes[0].message).toMatch(message);
  }
  expect((await t.admin.list('Pod', { namespace: 'default' })).items).toHaveLength(0);
});
