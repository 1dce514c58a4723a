import { describe, expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import { planDrain } from './drain.js';

const pod = (name: string, owner?: string, extra: Partial<Pod> = {}): Pod => ({
  metadata: {
    name,
    namespace: 'default',
    ...(owner
      ? { ownerReferences: [{ kind: owner, name: 'o', uid: 'u', controller: true, apiVersion: 'apps/v1' }] }
      : {}),
  },
  status: { phase: 'Running' },
  ...extra,
});

describe("planDrain (kubectl drain's filters)", () => {
  const pods = [
    pod('ds', 'DaemonSet'),
    pod('managed', 'ReplicaSet'),
    pod('solo'),
    pod('done', undefined, { status: { phase: 'Succeeded' } }),
  ];

  it('refuses DaemonSet pods without --ignore-daemonsets and unmanaged pods without --force', () => {
    const plan = planDrain(pods, { gracePeriod: -1, timeout: 0 });
    expect(plan.errors).toEqual([
      'cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): default/ds',
      'cannot delete Pods that declare no controller (use --force to override): default/solo',
    ]);
  });

  it('leaves DaemonSet pods, evicts the rest with both flags, finished pods always', () => {
    const plan = planDrain(pods, { ignoreDaemonsets: true, force: true, gracePeriod: -1, timeout: 0 });
    expect(plan.errors).toEqual([]);
    expect(plan.ignored.map((p) => p.metadata?.name)).toEqual(['ds']);
    expect(plan.evict.map((p) => p.metadata?.name)).toEqual(['managed', 'solo', 'done']);
  });

  it('keeps pods with emptyDir data unless --delete-emptydir-data', () => {
    const withData = pod('cache', 'ReplicaSet', { spec: { volumes: [{ name: 'c', emptyDir: {} }] } });
    expect(planDrain([withData], { gracePeriod: -1, timeout: 0 }).errors).toEqual([
      'cannot delete Pods with local storage (use --delete-emptydir-data to override): default/cache',
    ]);
    expect(
      planDrain([withData], { deleteEmptydirData: true, gracePeriod: -1, timeout: 0 }).evict,
    ).toHaveLength(1);
  });
});
