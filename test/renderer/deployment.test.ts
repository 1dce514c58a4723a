/**
 * Deployments as the GUI shows and drives them: kubectl's rollout status messages as decision
 * tables, the history of ReplicaSets by revision, what a person may type as replicas, and the
 * patches of scale, pause/resume, restart and undo — checked against a real apiserver, which
 * must accept them and end with what kubectl would leave.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment, Pod, ReplicaSet } from '../../client/api/types.js';
import { RESTARTED_AT_ANNOTATION, restartPatch } from '../../renderer/src/daemonset/rollout.js';
import {
  conditionHealth,
  historyOf,
  isCurrent,
  MAX_REPLICAS,
  parseReplicas,
  pausePatch,
  podRevision,
  readyText,
  refuseRestart,
  refuseRollback,
  rollbackPatch,
  rolloutState,
  scalePatch,
} from '../../renderer/src/deployment/rollout.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

const template = (image: string, extra: Record<string, string> = {}) => ({
  metadata: { labels: { app: 'web', ...extra } },
  spec: { containers: [{ name: 'web', image }] },
});

const deployment: Deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: template('web:2') },
};

const withStatus = (
  status: Deployment['status'],
  { generation = 2, replicas = 3, paused = false } = {},
): Deployment => ({
  ...deployment,
  metadata: { ...deployment.metadata, generation },
  spec: { ...deployment.spec, replicas, paused },
  status: { observedGeneration: 2, ...status },
});

const replicaSet = (
  revision: number,
  hash: string,
  image: string,
  ownerUid: string,
  status: ReplicaSet['status'] = {},
  annotations: Record<string, string> = {},
): ReplicaSet => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: {
    name: `web-${hash}`,
    namespace: 'default',
    uid: `rs-${hash}`,
    labels: { app: 'web', 'pod-template-hash': hash },
    annotations: { 'deployment.kubernetes.io/revision': String(revision), ...annotations },
    ownerReferences: [
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: ownerUid, controller: true },
    ],
    creationTimestamp: `2026-05-01T10:0${revision}:00Z`,
  },
  spec: { replicas: status.replicas ?? 0, template: template(image, { 'pod-template-hash': hash }) },
  status,
});

describe('rollout status (kubectl rollout status deployment/web)', () => {
  const rows: Array<[string, Deployment, Partial<ReturnType<typeof rolloutState>>]> = [
    [
      'the controller has not seen the change yet',
      withStatus({ observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3 }),
      { done: false, failed: false, message: 'Waiting for deployment spec update to be observed...' },
    ],
    [
      'the deadline passed',
      withStatus({
        replicas: 4,
        updatedReplicas: 1,
        conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
      }),
      {
        done: false,
        failed: true,
        short: 'failed',
        message: 'deployment "web" exceeded its progress deadline',
      },
    ],
    [
      'new pods are still being made',
      withStatus({ replicas: 4, updatedReplicas: 1, availableReplicas: 3 }),
      {
        done: false,
        short: '1/3',
        fraction: 1 / 3,
        message:
          'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...',
      },
    ],
    [
      'old pods are still stopping',
      withStatus({ replicas: 5, updatedReplicas: 3, availableReplicas: 3 }),
      {
        done: false,
        short: '3/3',
        message: 'Waiting for deployment "web" rollout to finish: 2 old replicas are pending termination...',
      },
    ],
    [
      'new pods are not available yet',
      withStatus({ replicas: 3, updatedReplicas: 3, availableReplicas: 1 }),
      {
        done: false,
        message: 'Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas are available...',
      },
    ],
    [
      'every pod is new and available',
      withStatus({ replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 }),
      { done: true, short: 'done', fraction: 1, message: 'deployment "web" successfully rolled out' },
    ],
    [
      'paused halfway',
      withStatus({ replicas: 3, updatedReplicas: 1, availableReplicas: 3 }, { paused: true }),
      { done: false, paused: true, short: 'paused' },
    ],
    [
      'scaled to zero',
      withStatus({}, { replicas: 0 }),
      { done: true, fraction: 1, replicas: 0, message: 'deployment "web" successfully rolled out' },
    ],
  ];
  it.each(rows)('%s', (_what, d, expected) => {
    expect(rolloutState(d)).toMatchObject(expected);
  });

  it('counts READY as kubectl get deployments does', () => {
    expect(readyText(withStatus({ readyReplicas: 2 }))).toBe('2/3');
    expect(readyText({ ...deployment, spec: { ...deployment.spec, replicas: 0 } })).toBe('0/0');
  });

  it('colours conditions: Available/Progressing true good, ReplicaFailure true bad', () => {
    const table: Array<[string, string, string]> = [
      ['Available', 'True', 'good'],
      ['Available', 'False', 'bad'],
      ['Progressing', 'True', 'good'],
      ['Progressing', 'False', 'bad'],
      ['ReplicaFailure', 'True', 'bad'],
      ['ReplicaFailure', 'False', 'good'],
      ['Available', 'Unknown', 'unknown'],
    ];
    for (const [type, status, health] of table) expect(conditionHealth({ type, status })).toBe(health);
  });
});

describe('history', () => {
  const d: Deployment = { ...deployment, metadata: { ...deployment.metadata, uid: 'd-uid' } };
  const old = replicaSet(1, 'aaa', 'web:1', 'd-uid', { replicas: 1, readyReplicas: 1, availableReplicas: 1 });
  const current = replicaSet(2, 'bbb', 'web:2', 'd-uid', {
    replicas: 3,
    readyReplicas: 2,
    availableReplicas: 2,
  });
  const stranger = replicaSet(7, 'ccc', 'web:2', 'someone-else');

  it("lists the Deployment's own ReplicaSets, newest revision first, with their pods and the current one", () => {
    const rows = historyOf(d, [old, stranger, current]);
    expect(rows.map((r) => [r.revision, r.current, r.desired, r.pods, r.ready, r.available])).toEqual([
      [2, true, 3, 3, 2, 2],
      [1, false, 1, 1, 1, 1],
    ]);
    expect(rows[1].containers).toEqual(['web: web:1']);
    expect(isCurrent(d, current)).toBe(true);
    expect(isCurrent(d, old)).toBe(false);
  });

  it('finds the revision of a pod by its pod-template-hash', () => {
    const rows = historyOf(d, [old, current]);
    const pod = (hash?: string): Pod => ({ metadata: { labels: hash ? { 'pod-template-hash': hash } : {} } });
    expect(podRevision(pod('aaa'), rows)).toBe(1);
    expect(podRevision(pod('bbb'), rows)).toBe(2);
    expect(podRevision(pod('zzz'), rows)).toBeUndefined();
    expect(podRevision(pod(), rows)).toBeUndefined();
  });

  it('refuses what kubectl refuses: a restart or undo while paused, an undo to the current template', () => {
    const paused = { ...d, spec: { ...d.spec, paused: true } };
    const [currentRow, oldRow] = historyOf(d, [old, current]);
    expect(refuseRestart(d)).toBeUndefined();
    expect(refuseRestart(paused)).toBe('cannot restart the paused deployment "web": resume it first');
    expect(refuseRollback(d, oldRow)).toBeUndefined();
    expect(refuseRollback(paused, oldRow)).toBe(
      'cannot roll back the paused deployment "web": resume it first',
    );
    expect(refuseRollback(d, currentRow)).toBe(
      'skipped rollback (current template already matches revision 2)',
    );
  });
});

describe('replicas typed into the scale box', () => {
  const table: Array<[string, number | RegExp]> = [
    ['3', 3],
    [' 12 ', 12],
    ['0', 0],
    ['+2', 2],
    ['-0', 0],
    ['', /^Enter the number of replicas/],
    ['-1', /^-1 is negative: replicas must be a whole number, 0 or more\.$/],
    ['-2.5', /is negative/],
    ['1.5', /^1\.5 is not a whole number: replicas must be a whole number, 0 or more\.$/],
    ['three', /^"three" is not a number/],
    ['1e3', /^"1e3" is not a number/],
    ['0x10', /is not a number/],
    [String(MAX_REPLICAS), MAX_REPLICAS],
    [String(MAX_REPLICAS + 1), /is too many/],
  ];
  it.each(table)('%j', (text, expected) => {
    const parsed = parseReplicas(text);
    if (typeof expected === 'number') expect(parsed).toEqual({ ok: true, value: expected });
    else expect(parsed.ok ? 'accepted' : parsed.error).toMatch(expected);
  });
});

describe('scale, pause, restart and undo against the apiserver', () => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ controllers: false });
  });
  afterAll(() => t.close());

  it('each patch lands as kubectl would leave the Deployment', async () => {
    const admin = t.cp.client();
    const created = await admin.create<Deployment>({
      ...deployment,
      metadata: {
        ...deployment.metadata,
        annotations: { 'deployment.kubernetes.io/revision': '2', team: 'lab' },
      },
    });

    const scaled = await admin.patch('Deployment', 'web', scalePatch(5), { namespace: 'default' });
    expect(scaled.spec?.replicas).toBe(5);
    expect(scaled.spec?.template).toEqual(created.spec?.template);

    expect(
      (await admin.patch('Deployment', 'web', pausePatch(true), { namespace: 'default' })).spec?.paused,
    ).toBe(true);
    expect(
      (await admin.patch('Deployment', 'web', pausePatch(false), { namespace: 'default' })).spec?.paused,
    ).toBe(false);

    const restarted = await admin.patch('Deployment', 'web', restartPatch(new Date('2026-05-01T10:00:00Z')), {
      namespace: 'default',
    });
    expect(restarted.spec?.template?.metadata?.annotations).toEqual({
      [RESTARTED_AT_ANNOTATION]: '2026-05-01T10:00:00Z',
    });

    // Undo to revision 1: its template without the hash label, its change-cause, and the
    // Deployment's own revision bookkeeping kept; the Deployment's other annotations go, as
    // with kubectl.
    const rs1 = replicaSet(
      1,
      'aaa',
      'web:1',
      created.metadata!.uid!,
      {},
      { 'kubernetes.io/change-cause': 'v1' },
    );
    const undone = await admin.patch('Deployment', 'web', rollbackPatch(restarted, rs1), {
      namespace: 'default',
      type: 'json',
    });
    expect(undone.spec?.template?.metadata).toEqual({ labels: { app: 'web' } });
    expect(undone.spec?.template?.spec?.containers?.[0].image).toBe('web:1');
    expect(undone.metadata?.annotations).toEqual({
      'deployment.kubernetes.io/revision': '2',
      'kubernetes.io/change-cause': 'v1',
    });
    expect(undone.spec?.replicas).toBe(5);
  });

  it('undo works on a Deployment that has no annotations at all', async () => {
    const admin = t.cp.client();
    const created = await admin.create<Deployment>({
      ...deployment,
      metadata: { name: 'bare', namespace: 'default' },
    });
    const rs = replicaSet(1, 'aaa', 'web:1', created.metadata!.uid!);
    const undone = await admin.patch('Deployment', 'bare', rollbackPatch(created, rs), {
      namespace: 'default',
      type: 'json',
    });
    expect(undone.spec?.template?.spec?.containers?.[0].image).toBe('web:1');
    expect(undone.metadata?.annotations ?? {}).toEqual({});
  });

  it('the apiserver refuses a negative size too, should one get past the box', async () => {
    const admin = t.cp.client();
    await expect(admin.patch('Deployment', 'web', scalePatch(-1), { namespace: 'default' })).rejects.toThrow(
      /spec\.replicas/,
    );
  });
});
