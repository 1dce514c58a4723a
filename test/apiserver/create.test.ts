import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { DaemonSet, Pod } from '../../client/api/types.js';
import { ADMIN, startTestApiServer, type TestApiServer } from '../support/apiserver.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer({ maxObjectBytes: 64 * 1024 });
});
afterEach(async () => t.close());

const pod = (name: string, extra: Partial<Pod> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...extra.metadata },
  spec: { containers: [{ name: 'main', command: ['sleep', '3600'] }], ...extra.spec },
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected the request to fail');
}

describe('create', () => {
  it('sets uid, creationTimestamp, generation and resourceVersion, and fills defaults', async () => {
    const created = await t.admin.create(pod('web'));
    expect(created.metadata).toMatchObject({
      name: 'web',
      namespace: 'default',
      generation: 1,
      creationTimestamp: '2026-11-29T10:00:00Z',
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(0);
    expect(created.spec).toMatchObject({
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
    });
    expect(created.spec?.tolerations).toEqual([
      {
        key: 'node.kubernetes.io/not-ready',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
      {
        key: 'node.kubernetes.io/unreachable',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
    ]);
    expect(created.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
  });

  it('ignores a status sent with a new pod and refuses a resourceVersion', async () => {
    const withStatus = await t.admin.create({ ...pod('a'), status: { phase: 'Running' } });
    expect(withStatus.status?.phase).toBe('Pending');
    const err = await rejection(
      t.admin.create({ ...pod('b'), metadata: { name: 'b', resourceVersion: '5' } }),
    );
    expect(err.reason).toBe('Invalid');
    expect(err.causes[0].field).toBe('metadata.resourceVersion');
  });

  it('generates names from generateName', async () => {
    const a = await t.admin.create<Pod>({ ...pod(''), metadata: { generateName: 'job-' } });
    const b = await t.admin.create<Pod>({ ...pod(''), metadata: { generateName: 'job-' } });
    expect(a.metadata?.name).toMatch(/^job-[a-z0-9]{5}$/);
    expect(b.metadata?.name).not.toBe(a.metadata?.name);
  });

  it('reports AlreadyExists for a taken name', async () => {
    await t.admin.create(pod('web'));
    const err = await rejection(t.admin.create(pod('web')));
    expect(err.reason).toBe('AlreadyExists');
    expect(err.message).toContain('pods "web" already exists in namespace "default"');
  });

  it('reports every failing field with its path', async () => {
    const err = await rejection(
      t.admin.create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'Bad_Name', labels: { 'bad key!': 'x', ok: 'not a valid value' } },
        spec: {
          restartPolicy: 'Sometimes',
          containers: [
            { name: 'c', command: ['x'], ports: [{ containerPort: 70000 }] },
            { name: 'c', command: ['y'], resources: { requests: { cpu: 'lots' } } },
          ],
          tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }],
        },
      }),
    );
    expect(err.reason).toBe('Invalid');
    expect(err.code).toBe(3);
    const fields = err.causes.map((c) => c.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'metadata.name',
        'metadata.labels',
        'spec.restartPolicy',
        'spec.containers[0].ports[0].containerPort',
        'spec.containers[1].name',
        'spec.containers[1].resources.requests[cpu]',
        'spec.tolerations[0].operator',
      ]),
    );
    expect(err.message).toContain('Pod "Bad_Name" is invalid');
    expect(err.message).toContain('spec.restartPolicy: Unsupported value: "Sometimes"');
    expect((await t.admin.list('Pod')).items).toHaveLength(0);
  });

  it('accepts configMap, secret, projected and downwardAPI volumes, and names each mistake in them', async () => {
    const ok = await t.admin.create(
      pod('volumes', {
        spec: {
          containers: [
            {
              name: 'main',
              command: ['sleep', '3600'],
              volumeMounts: [
                { name: 'config', mountPath: '/etc/app' },
                { name: 'all', mountPath: '/etc/all', subPath: 'sub' },
              ],
            },
          ],
          volumes: [
            {
              name: 'config',
              configMap: { name: 'settings', items: [{ key: 'a.conf', path: 'conf/a', mode: 0o600 }] },
            },
            {
              name: 'all',
              projected: {
                defaultMode: 0o440,
                sources: [
                  { secret: { name: 'db' } },
                  {
                    downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] },
                  },
                ],
              },
            },
          ],
        },
      }),
    );
    expect(ok.spec?.volumes?.[1].projected?.sources).toHaveLength(2);

    const err = await rejection(
      t.admin.create(
        pod('bad-volumes', {
          spec: {
            containers: [
              {
                name: 'main',
                command: ['sleep', '3600'],
                volumeMounts: [
                  { name: 'config', mountPath: 'relative' },
                  { name: 'secret', mountPath: '/s', subPath: '../up' },
                ],
              },
            ],
            volumes: [
              { name: 'config', configMap: { name: 'settings', items: [{ key: 'k', path: '../escape' }] } },
              { name: 'secret', secret: { defaultMode: 0o1777 } },
              {
                name: 'fields',
                downwardAPI: { items: [{ path: 'x', fieldRef: { fieldPath: 'spec.nodeName' } }] },
              },
              { name: 'both', projected: { sources: [{ configMap: { name: 'a' }, secret: { name: 'b' } }] } },
            ],
          },
        }),
      ),
    );
    expect(err.causes.map((c) => c.field)).toEqual(
      expect.arrayContaining([
        'spec.volumes[0].configMap.items[0].path',
        'spec.volumes[1].secret.secretName',
        'spec.volumes[1].secret.defaultMode',
        'spec.volumes[2].downwardAPI.items[0].fieldRef.fieldPath',
        'spec.volumes[3].projected.sources[0]',
        'spec.containers[0].volumeMounts[0].mountPath',
        'spec.containers[0].volumeMounts[1].subPath',
      ]),
    );
    expect(err.message).toContain(
      `spec.volumes[0].configMap.items[0].path: Invalid value: "../escape": must not contain '..'`,
    );
    expect((await t.admin.list('Pod')).items.map((p) => p.metadata?.name)).toEqual(['volumes']);
  });

  it('rejects unknown fields in a manifest, naming them, and stores nothing', async () => {
    const manifest = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: typo',
      'spec:',
      '  containers:',
      '  - name: main',
      '    command: [sleep, "1"]',
      '    imagePullPolicyy: Always',
      '  nodeSelectr: {}',
    ].join('\n');
    const err = await rejection(t.admin.createManifest(manifest));
    expect(err.reason).toBe('Invalid');
    expect(err.causes.map((c) => c.field).sort()).toEqual([
      'spec.containers[0].imagePullPolicyy',
      'spec.nodeSelectr',
    ]);
    expect(err.message).toContain('did you mean "imagePullPolicy"');
    await expect(t.admin.get('Pod', 'typo')).rejects.toMatchObject({ reason: 'NotFound' });
  });

  it('accepts a Kubernetes manifest unchanged', async () => {
    const created = await t.admin.createManifest(`
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: node-exporter
  namespace: kube-system
  labels: {app: node-exporter}
spec:
  selector:
    matchLabels: {app: node-exporter}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate: {maxUnavailable: "30%"}
  template:
    metadata:
      labels: {app: node-exporter}
    spec:
      containers:
      - name: exporter
        image: prom/node-exporter:v1.8.0
        args: ["--web.listen-address=:9100"]
        ports: [{containerPort: 9100, name: metrics}]
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {memory: 128Mi}
`);
    const ds = created as DaemonSet;
    expect(ds.metadata?.namespace).toBe('kube-system');
    expect(ds.spec?.updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: '30%', maxSurge: 0 },
    });
    expect(ds.spec?.revisionHistoryLimit).toBe(10);
    expect(ds.spec?.template?.spec?.containers?.[0].resources?.requests).toEqual({
      cpu: '100m',
      memory: '64Mi',
    });
    expect(ds.metadata?.generation).toBe(1);
  });

  it('refuses wrong kinds, versions and mistyped values', async () => {
    expect(
      (await rejection(t.admin.createManifest('apiVersion: v1\nkind: Deploymentz\nmetadata: {name: x}\n')))
        .message,
    ).toMatch(/unknown kind "Deploymentz"/);
    expect(
      (await rejection(t.admin.createManifest('apiVersion: v2\nkind: Pod\nmetadata: {name: x}\n'))).message,
    ).toMatch(/use apiVersion "v1"/);
    const typed = await rejection(
      t.admin.createManifest(
        'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {terminationGracePeriodSeconds: "thirty", containers: [{name: c, command: [x]}]}\n',
      ),
    );
    expect(typed.causes[0]).toMatchObject({
      field: 'spec.terminationGracePeriodSeconds',
      type: 'FieldValueTypeInvalid',
    });
    const notYaml = await rejection(t.admin.createManifest('kind: Pod\n  : : :\n'));
    expect(notYaml.reason).toBe('BadRequest');
  });

  it('requires the namespace to exist and not be terminating', async () => {
    const missing = await rejection(t.admin.create(pod('x'), { namespace: 'nowhere' }));
    expect(missing.reason).toBe('NotFound');
    expect(missing.message).toContain('namespace "nowhere" not found');
    await t.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } });
    await t.admin.create(pod('x'), { namespace: 'lab' });
    await t.admin.delete('Namespace', 'lab');
    const terminating = await rejection(t.admin.create(pod('y'), { namespace: 'lab' }));
    expect(terminating.reason).toBe('Forbidden');
    expect(terminating.message).toContain('being terminated');
  });

  it('has default, kube-system, kube-public and kube-node-lease from the start, and protects them', async () => {
    const names = (await t.admin.list('Namespace')).items.map((n) => n.metadata?.name);
    expect(names).toEqual(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    for (const name of ['default', 'kube-system']) {
      expect((await rejection(t.admin.delete('Namespace', name))).reason).toBe('Forbidden');
    }
  });

  it('bounds the size of objects', async () => {
    const big = pod('big', { metadata: { name: 'big', annotations: { blob: 'x'.repeat(70 * 1024) } } });
    const err = await rejection(t.admin.create(big));
    expect(err.reason).toBe('RequestEntityTooLarge');
    expect(err.code).toBe(8);
    expect(err.message).toMatch(/over the limit of 65536 bytes/);
  });

  it('stores ownerReferences and validates them', async () => {
    const owner = await t.admin.create(pod('owner'));
    const ref = {
      apiVersion: 'v1',
      kind: 'Pod',
      name: 'owner',
      uid: owner.metadata!.uid!,
      controller: true,
      blockOwnerDeletion: true,
    };
    const child = await t.admin.create(pod('child', { metadata: { name: 'child', ownerReferences: [ref] } }));
    expect((await t.admin.get('Pod', 'child')).metadata?.ownerReferences).toEqual([ref]);
    expect(child.metadata?.ownerReferences).toEqual([ref]);
    const twoControllers = await rejection(
      t.admin.create(
        pod('c2', { metadata: { name: 'c2', ownerReferences: [ref, { ...ref, name: 'other', uid: 'u2' }] } }),
      ),
    );
    expect(twoControllers.causes[0].message).toContain('only one reference can have controller set to true');
  });

  it('supports dry runs', async () => {
    const dry = await t.admin.create(pod('dry'), { dryRun: true });
    expect(dry.metadata?.uid).toBeTruthy();
    await expect(t.admin.get('Pod', 'dry')).rejects.toMatchObject({ reason: 'NotFound' });
  });

  it('lets a viewer read but not write', async () => {
    await t.admin.create(pod('web'));
    const viewer = t.as({ name: 'alice', role: 'viewer' });
    expect((await viewer.list('Pod')).items).toHaveLength(1);
    const err = await rejection(viewer.create(pod('mine')));
    expect(err.reason).toBe('Forbidden');
    expect(err.code).toBe(7);
    expect(err.message).toContain('user "alice" cannot create resource "pods" in namespace "default"');
    expect((await rejection(viewer.delete('Pod', 'web'))).reason).toBe('Forbidden');
    expect(ADMIN.role).toBe('admin');
  });
});

describe('free-form data in manifests', () => {
  it('bounds the nesting of raw JSON fields', async () => {
    const deep = '{"d":'.repeat(40) + '1' + '}'.repeat(40);
    const err = await rejection(
      t.admin.createManifest(
        `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"deep"},"revision":1,"data":${deep}}`,
      ),
    );
    expect(err.causes[0]).toMatchObject({ field: 'data', message: 'must not nest deeper than 32 levels' });
  });
});
