/**
 * Field ownership as Kubernetes records it: the FieldsV1 a create writes, what an update takes
 * from other managers, and server-side apply's merge, removal and conflicts.
 */
import { describe, expect, it } from 'vitest';
import { kindInfo } from '../../../client/api/kinds.js';
import type { KubeObject } from '../../../client/api/types.js';
import { isApiError } from '../../../client/api/errors.js';
import { FieldSet, printPath } from './fieldset.js';
import {
  apply,
  decodeManagedFields,
  encodeManagedFields,
  LAST_APPLIED_ANNOTATION,
  recordUpdate,
  type ManagerEntry,
  type Writer,
} from './managers.js';

const pods = kindInfo('Pod');
const daemonSets = kindInfo('DaemonSet');
const T1 = '2026-12-06T10:00:00Z';
const T2 = '2026-12-06T10:05:00Z';

function writer(manager: string, now = T1, subresource = ''): Writer {
  return { manager, now, subresource };
}

function pod(spec: Record<string, unknown>, labels?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web',
      namespace: 'default',
      uid: 'u1',
      resourceVersion: '5',
      ...(labels ? { labels } : {}),
    },
    spec,
  } as KubeObject;
}

function fieldsOf(entries: ManagerEntry[], manager: string) {
  return encodeManagedFields(entries).find((e) => e.manager === manager)?.fieldsV1;
}

describe('managed fields', () => {
  it('records a create as Kubernetes does: leaves, list items by key with ".", nothing the server sets', () => {
    const created = pod(
      {
        containers: [{ name: 'nginx', image: 'nginx:1', ports: [{ containerPort: 80 }] }],
        nodeSelector: { disk: 'ssd' },
      },
      { app: 'web' },
    );
    const entries = recordUpdate(pods, undefined, created, [], writer('kubectl-create'));
    expect(encodeManagedFields(entries)).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: T1,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:containers': {
              'k:{"name":"nginx"}': {
                '.': {},
                'f:image': {},
                'f:name': {},
                'f:ports': {
                  'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
                },
              },
            },
            'f:nodeSelector': {},
          },
        },
      },
    ]);
    // The round trip through FieldsV1 keeps every member.
    const back = decodeManagedFields(encodeManagedFields(entries));
    expect(back[0].set.equals(entries[0].set)).toBe(true);
    expect([...back[0].set.members()].map(printPath)).toContain(
      '.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].containerPort',
    );
  });

  it('keeps the stored FieldsV1 of a writer that changes only fields it owns, and of the managers it leaves alone', () => {
    const v1 = pod({ containers: [{ name: 'nginx', image: 'nginx:1' }] }, { app: 'web' });
    let entries = recordUpdate(pods, undefined, v1, [], writer('kubectl-create'));
    const v2 = pod({ containers: [{ name: 'nginx', image: 'nginx:2' }] }, { app: 'web' });
    entries = recordUpdate(pods, v1, v2, entries, writer('kubectl-edit', T1));
    const stored = encodeManagedFields(entries);
    // The next image change by the same writer, read back from the store.
    const v3 = pod({ containers: [{ name: 'nginx', image: 'nginx:3' }] }, { app: 'web' });
    const next = encodeManagedFields(
      recordUpdate(pods, v2, v3, decodeManagedFields(stored, true), writer('kubectl-edit', T2)),
    );
    const byManager = (list: typeof stored, m: string) => list.find((e) => e.manager === m)!;
    expect(byManager(next, 'kubectl-edit').time).toBe(T2);
    expect(byManager(next, 'kubectl-edit').fieldsV1).toBe(byManager(stored, 'kubectl-edit').fieldsV1);
    expect(byManager(next, 'kubectl-create').fieldsV1).toBe(byManager(stored, 'kubectl-create').fieldsV1);
    // A new field for the writer: its set is encoded anew, with the field.
    const v4 = pod({ containers: [{ name: 'nginx', image: 'nginx:3' }] }, { app: 'web', tier: 'front' });
    const grown = encodeManagedFields(
      recordUpdate(pods, v3, v4, decodeManagedFields(next, true), writer('kubectl-edit', T2)),
    );
    expect(byManager(grown, 'kubectl-edit').fieldsV1).toEqual({
      'f:metadata': { 'f:labels': { 'f:tier': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { 'f:image': {} } } },
    });
    expect(byManager(grown, 'kubectl-create').fieldsV1).toBe(byManager(stored, 'kubectl-create').fieldsV1);
    // Taking a field from another manager re-encodes that manager's set without it.
    const v5 = pod({ containers: [{ name: 'nginx', image: 'nginx:3' }] }, { app: 'api', tier: 'front' });
    const taken = encodeManagedFields(
      recordUpdate(pods, v4, v5, decodeManagedFields(grown, true), writer('kubectl-edit', T2)),
    );
    expect(byManager(taken, 'kubectl-create').fieldsV1).not.toHaveProperty(['f:metadata']);
  });

  it('drops an entry that owns nothing at the next write, as it always did', () => {
    const v1 = pod({ containers: [{ name: 'nginx', image: 'nginx:1' }] }, { app: 'web' });
    const entries = recordUpdate(pods, undefined, v1, [], writer('kubectl-create'));
    const sent = [
      ...encodeManagedFields(entries),
      {
        manager: 'empty',
        operation: 'Update' as const,
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: {},
      },
    ];
    const v2 = pod({ containers: [{ name: 'nginx', image: 'nginx:2' }] }, { app: 'web' });
    const next = recordUpdate(pods, v1, v2, decodeManagedFields(sent), writer('kubectl-edit', T2));
    expect(next.map((e) => e.manager).sort()).toEqual(['kubectl-create', 'kubectl-edit']);
  });

  it('gives an updater the fields it changed and takes them from their owner; removed fields leave everyone', () => {
    const v1 = pod({ containers: [{ name: 'nginx', image: 'nginx:1' }] }, { app: 'web', tier: 'front' });
    let entries = recordUpdate(pods, undefined, v1, [], writer('kubectl-create'));
    const v2 = pod({ containers: [{ name: 'nginx', image: 'nginx:2' }] }, { app: 'web' });
    entries = recordUpdate(pods, v1, v2, entries, writer('kubectl-edit', T2));
    expect(fieldsOf(entries, 'kubectl-edit')).toEqual({
      'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { 'f:image': {} } } },
    });
    expect(fieldsOf(entries, 'kubectl-create')).toEqual({
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:name': {} } } },
    });
    // Nothing changed: nothing recorded, not even a time.
    expect(recordUpdate(pods, v2, v2, entries, writer('other', T2))).toBe(entries);
  });

  it('keeps status apart: writers of the object never own status, a status writer owns only status', () => {
    const before = {
      ...pod({ containers: [{ name: 'c', image: 'x' }] }),
      status: { phase: 'Pending' },
    } as KubeObject;
    const after = {
      ...pod({ containers: [{ name: 'c', image: 'y' }] }),
      status: { phase: 'Running' },
    } as KubeObject;
    expect(fieldsOf(recordUpdate(pods, before, after, [], writer('edit')), 'edit')).toEqual({
      'f:spec': { 'f:containers': { 'k:{"name":"c"}': { 'f:image': {} } } },
    });
    const status = recordUpdate(pods, before, after, [], writer('kubelet', T1, 'status'));
    expect(encodeManagedFields(status)).toEqual([
      expect.objectContaining({
        manager: 'kubelet',
        subresource: 'status',
        fieldsV1: { 'f:status': { 'f:phase': {} } },
      }),
    ]);
  });

  it('applies: merges by key, shares fields set to the same value, and names the owner of a field it would change', () => {
    const live = pod({ containers: [{ name: 'nginx', image: 'nginx:1' }] }, { app: 'web' });
    const entries = recordUpdate(pods, undefined, live, [], writer('kubectl-create'));
    // The same values: no conflict, both own them.
    const same = apply(
      pods,
      live,
      pod({ containers: [{ name: 'nginx', image: 'nginx:1' }] }),
      entries,
      writer('ci'),
      false,
    );
    expect(fieldsOf(same.entries, 'kubectl-create')).toBeDefined();
    expect(fieldsOf(same.entries, 'ci')).toEqual({
      'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
    });
    // Another image: a conflict with the creator.
    let err: unknown;
    try {
      apply(
        pods,
        live,
        pod({ containers: [{ name: 'nginx', image: 'nginx:2' }] }),
        same.entries,
        writer('ci'),
        false,
      );
    } catch (e) {
      err = e;
    }
    expect(isApiError(err, 'Conflict')).toBe(true);
    expect((err as Error).message).toBe(
      `Apply failed with 1 conflict: conflict with "kubectl-create" using v1 at ${T1}: .spec.containers[name="nginx"].image`,
    );
    // Forced: the field changes hands.
    const forced = apply(
      pods,
      live,
      pod({ containers: [{ name: 'nginx', image: 'nginx:2' }] }),
      same.entries,
      writer('ci', T2),
      true,
    );
    expect(
      (forced.object as { spec: { containers: Array<{ image: string }> } }).spec.containers[0].image,
    ).toBe('nginx:2');
    expect(fieldsOf(forced.entries, 'kubectl-create')).toEqual({
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:name': {} } } },
    });
  });

  it('removes what an applier no longer applies, unless another applier applies it', () => {
    const config1 = pod(
      {
        containers: [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'y' },
        ],
      },
      { app: 'web', tier: 'front' },
    );
    const first = apply(pods, undefined, config1, [], writer('ci'), false);
    const other = apply(
      pods,
      first.object,
      pod({ containers: [{ name: 'a', image: 'x' }] }, { tier: 'front' }),
      first.entries,
      writer('ops'),
      false,
    );
    const second = apply(
      pods,
      other.object,
      pod({ containers: [{ name: 'b', image: 'y' }] }, { app: 'web' }),
      other.entries,
      writer('ci', T2),
      false,
    );
    const obj = second.object as {
      metadata: { labels: Record<string, string> };
      spec: { containers: Array<{ name: string }> };
    };
    // "tier" and container "a" stay: ops applies them. Nothing else was dropped.
    expect(obj.metadata.labels).toEqual({ app: 'web', tier: 'front' });
    expect(obj.spec.containers.map((c) => c.name)).toEqual(['a', 'b']);
    const third = apply(
      pods,
      second.object,
      pod({ containers: [{ name: 'b', image: 'y' }] }),
      second.entries,
      writer('ci', T2),
      false,
    );
    expect((third.object as typeof obj).metadata.labels).toEqual({ tier: 'front' });
  });

  it('gives what an object held before anyone managed it to "before-first-apply", so a first apply that changes it conflicts', () => {
    const old = pod({ containers: [{ name: 'c', image: 'x' }] }, { app: 'web' });
    const config = pod({ containers: [{ name: 'c', image: 'y' }] });
    expect(() => apply(pods, old, config, [], writer('ci'), false)).toThrow(
      'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .spec.containers[name="c"].image',
    );
    const forced = apply(pods, old, config, [], writer('ci'), true);
    expect(fieldsOf(forced.entries, 'before-first-apply')).toEqual({
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:name': {} } } },
    });
  });

  it('keeps at most 10 Update entries, the oldest merged into "ancient-changes"', () => {
    let obj = pod({ containers: [{ name: 'c', image: 'x' }] });
    let entries: ManagerEntry[] = [];
    for (let i = 0; i < 12; i++) {
      const next = pod({ containers: [{ name: 'c', image: 'x' }] }, { [`k${i}`]: 'v' });
      next.metadata!.labels = { ...obj.metadata?.labels, [`k${i}`]: 'v' };
      entries = recordUpdate(
        pods,
        obj,
        next,
        entries,
        writer(`tool-${i}`, `2026-12-06T10:00:${String(i).padStart(2, '0')}Z`),
      );
      obj = next;
    }
    const managers = encodeManagedFields(entries).map((e) => e.manager);
    expect(managers).toHaveLength(10);
    expect(managers[0]).toBe('ancient-changes');
    expect(managers.at(-1)).toBe('tool-11');
    expect(fieldsOf(entries, 'ancient-changes')).toMatchObject({
      'f:metadata': { 'f:labels': { 'f:k0': {}, 'f:k2': {} } },
    });
  });

  it('lets kubectl take over what its last client-side apply set, but not what changed since', () => {
    const cm = (data: Record<string, string>, lastApplied?: Record<string, string>) =>
      ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'c',
          namespace: 'default',
          ...(lastApplied
            ? { annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify({ data: lastApplied }) } }
            : {}),
        },
        data,
      }) as KubeObject;
    const configMaps = kindInfo('ConfigMap');
    const live = cm({ a: '1', b: '9' }, { a: '1', b: '2' });
    const entries = recordUpdate(configMaps, undefined, live, [], writer('kubectl-client-side-apply'));
    // "a" is as last applied: taken over. "b" was changed since (9, not 2): still a conflict.
    expect(() => apply(configMaps, live, cm({ a: '5', b: '3' }), entries, writer('kubectl'), false)).toThrow(
      /^Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1 at \S+: \.data\.b$/,
    );
    expect(apply(configMaps, live, cm({ a: '5' }), entries, writer('kubectl'), false).object).toMatchObject({
      data: { a: '5', b: '9' },
    });
    // Another manager name gets no such pass.
    expect(() => apply(configMaps, live, cm({ a: '5' }), entries, writer('ci'), false)).toThrow(/conflict/);
  });

  it('treats a label selector as one value and checks the keys of applied list items', () => {
    const ds = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { spec: { containers: [{ image: 'x' }] } },
      },
    } as KubeObject;
    let err: unknown;
    try {
      apply(daemonSets, undefined, ds, [], writer('ci'), false);
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).toContain(
      '.spec.template.spec.containers: an item of this list has no "name"',
    );
    (
      ds as { spec: { template: { spec: { containers: Array<{ name?: string }> } } } }
    ).spec.template.spec.containers[0].name = 'c';
    const done = apply(daemonSets, undefined, ds, [], writer('ci'), false);
    expect(fieldsOf(done.entries, 'ci')).toMatchObject({ 'f:spec': { 'f:selector': {} } });
  });

  it('reads FieldsV1 strictly', () => {
    expect(() => FieldSet.fromFieldsV1({ 'x:y': {} }, 'fieldsV1')).toThrow(/is not a path element/);
    expect(() => FieldSet.fromFieldsV1({ 'k:nope': {} }, 'fieldsV1')).toThrow(/JSON object/);
    expect(FieldSet.fromFieldsV1({ 'f:a': { '.': {}, 'f:b': {} } }, 'fieldsV1').has(['f:a'])).toBe(true);
  });
});
