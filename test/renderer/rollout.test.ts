/**
 * DaemonSet rollouts as the GUI shows and drives them: progress from the status, `rollout
 * restart` as a template annotation, and `rollout undo` to a revision — checked against a
 * real apiserver, which must accept the patches and end with the revision's template.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControllerRevision, DaemonSet } from '../../client/api/types.js';
import {
  isCurrent,
  RESTARTED_AT_ANNOTATION,
  restartPatch,
  revisionsOf,
  revisionSummary,
  rollbackPatch,
  rolloutState,
  templateOf,
} from '../../renderer/src/daemonset/rollout.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

const daemonSet: DaemonSet = {
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: 'exporter', namespace: 'default' },
  spec: {
    selector: { matchLabels: { app: 'exporter' } },
    template: {
      metadata: { labels: { app: 'exporter' } },
      spec: { containers: [{ name: 'exporter', image: 'exporter:1' }] },
    },
  },
};

const revision = (n: number, uid: string, template: object): ControllerRevision => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  metadata: {
    name: `exporter-${n}`,
    namespace: 'default',
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'exporter', uid, controller: true }],
  },
  data: { spec: { template: { ...template, $patch: 'replace' } } },
  revision: n,
});

describe('rollout state', () => {
  const withStatus = (status: DaemonSet['status'], generation = 2): DaemonSet => ({
    ...daemonSet,
    metadata: { ...daemonSet.metadata, generation },
    status,
  });

  it('is done when every desired pod is updated and available and the controller saw the spec', () => {
    expect(
      rolloutState(
        withStatus({
          observedGeneration: 2,
          desiredNumberScheduled: 3,
          updatedNumberScheduled: 3,
          numberAvailable: 3,
        }),
      ),
    ).toMatchObject({ done: true, fraction: 1, short: 'done', text: 'all 3 pods updated and available' });
    expect(
      rolloutState(
        withStatus({
          observedGeneration: 2,
          desiredNumberScheduled: 4,
          updatedNumberScheduled: 1,
          numberAvailable: 3,
        }),
      ),
    ).toMatchObject({ done: false, fraction: 0.25, short: '1/4', text: '1 of 4 updated, 3 available' });
    expect(
      rolloutState(
        withStatus({
          observedGeneration: 1,
          desiredNumberScheduled: 3,
          updatedNumberScheduled: 3,
          numberAvailable: 3,
        }),
      ),
    ).toMatchObject({ done: false, text: 'waiting for the controller to see the change' });
  });
});

describe('revisions', () => {
  it("lists the DaemonSet's own revisions, newest first, and tells which one is current", () => {
    const ds = { ...daemonSet, metadata: { ...daemonSet.metadata, uid: 'ds-uid' } };
    const old = revision(1, 'ds-uid', {
      ...daemonSet.spec!.template,
      metadata: { labels: { app: 'exporter' } },
    });
    const current = revision(2, 'ds-uid', daemonSet.spec!.template!);
    const other = revision(3, 'someone-else', daemonSet.spec!.template!);
    old.data!.spec.template.spec = { containers: [{ name: 'exporter', image: 'exporter:0' }] };
    expect(revisionsOf(ds, [old, other, current]).map((r) => r.revision)).toEqual([2, 1]);
    expect(isCurrent(ds, current)).toBe(true);
    expect(isCurrent(ds, old)).toBe(false);
    expect(templateOf(current)).toEqual(daemonSet.spec!.template);
    expect(revisionSummary(old)).toEqual({ containers: ['exporter: exporter:0'], restartedAt: undefined });
  });
});

describe('restart and undo against the apiserver', () => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ controllers: false });
  });
  afterAll(() => t.close());

  it('a restart sets the restartedAt annotation; undo puts the old template back whole', async () => {
    const admin = t.cp.client();
    const created = await admin.create(daemonSet);
    const original = revision(1, created.metadata!.uid!, created.spec!.template!);

    const at = new Date('2026-05-01T10:00:00Z');
    const restarted = await admin.patch('DaemonSet', 'exporter', restartPatch(at), { namespace: 'default' });
    expect(restarted.spec?.template?.metadata?.annotations).toEqual({
      [RESTARTED_AT_ANNOTATION]: '2026-05-01T10:00:00Z',
    });
    expect(restarted.metadata?.generation).toBe((created.metadata?.generation ?? 0) + 1);
    expect(isCurrent(restarted, original)).toBe(false);

    const undone = await admin.patch('DaemonSet', 'exporter', rollbackPatch(original), {
      namespace: 'default',
      type: 'json',
    });
    expect(undone.spec?.template).toEqual(created.spec?.template);
    expect(isCurrent(undone, original)).toBe(true);
  });
});
