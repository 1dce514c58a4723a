/**
 * Cached objects of one shape share their hidden classes. A hidden class of its own per cached
 * version (as a spread that adds a key gives in Node 20's V8) costs memory per object, and
 * every mark-compact then clears the dead ones and their registrations one by one, in its pause.
 */
import { expect, it } from 'vitest';
import { parseFieldSelector } from '../../client/api/selectors.js';
import type { KubeObject } from '../../client/api/types.js';
import { ADMIN, startTestApiServer } from '../support/apiserver.js';
import { sameHiddenClass } from '../support/hiddenclass.js';

it('gives the cached versions of objects of one shape one hidden class', async () => {
  const t = await startTestApiServer();
  try {
    const lease = (i: number, renewTime: string): KubeObject => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: `node-${i}`, namespace: 'kube-node-lease' },
      spec: { holderIdentity: `node-${i}`, leaseDurationSeconds: 40, renewTime },
    });
    for (let i = 0; i < 40; i++) await t.admin.create(lease(i, '2026-11-29T10:00:00.000000Z'));
    // Renewals: the cached versions are decoded again, each sharing what did not change.
    for (let round = 1; round <= 2; round++) {
      for (let i = 0; i < 40; i++) {
        const cur = await t.admin.get('Lease', `node-${i}`, { namespace: 'kube-node-lease' });
        await t.admin.update({
          ...cur,
          spec: { ...cur.spec, renewTime: `2026-11-29T10:00:${String(round * 10).padStart(2, '0')}.000000Z` },
        });
      }
    }
    const { items } = await t.api.list(ADMIN, { kind: 'Lease', namespace: 'kube-node-lease' });
    expect(items).toHaveLength(40);
    const [first, ...rest] = items;
    const apart = rest.filter((o) => !sameHiddenClass(o.metadata!, first.metadata!));
    expect(apart.map((o) => o.metadata!.name)).toEqual([]);
    const spec = (o: KubeObject) => (o as { spec?: object }).spec!;
    expect(rest.filter((o) => !sameHiddenClass(spec(o), spec(first)))).toEqual([]);
  } finally {
    await t.close();
  }
});

it('gives the requirements of field selectors one hidden class (a fleet keeps one per node watch)', () => {
  const reqs = Array.from(
    { length: 20 },
    (_, i) => parseFieldSelector(`spec.nodeName=node-${i}`).requirements[0],
  );
  expect(reqs.filter((r) => !sameHiddenClass(r, reqs[0]))).toEqual([]);
});
