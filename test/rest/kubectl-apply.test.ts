/**
 * Server-side apply from the real kubectl: `apply --server-side` creates and changes objects,
 * two field managers meet in a conflict that names the other and changes nothing,
 * `--force-conflicts` takes the fields over, a field dropped from a manifest is removed unless
 * someone else manages it, and `get --show-managed-fields` shows who owns what.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { KubeObject, ManagedFieldsEntry } from '../../client/api/types.js';
import { startCliCluster, type CliCluster } from '../cli/support.js';
import { checkKubectls, KUBECTLS, kubectlRunner, mergedKubeconfig, type Kubectl } from './support.js';

vi.setConfig({ testTimeout: 90_000 });

let c: CliCluster;
let kubectl: Kubectl;

beforeAll(async () => {
  checkKubectls();
  c = await startCliCluster({ hollowNodes: 1, prefix: 'ka' });
  kubectl = kubectlRunner(c, await mergedKubeconfig(c));
}, 90_000);

afterAll(async () => {
  await c?.close();
});

function managers(obj: KubeObject): Array<Pick<ManagedFieldsEntry, 'manager' | 'operation' | 'subresource'>> {
  return (obj.metadata?.managedFields ?? []).map((e) => ({
    manager: e.manager,
    operation: e.operation,
    ...(e.subresource ? { subresource: e.subresource } : {}),
  }));
}

function fieldsOf(obj: KubeObject, manager: string): unknown {
  return obj.metadata?.managedFields?.find((e) => e.manager === manager)?.fieldsV1;
}

describe.each(KUBECTLS.map((k) => k.minor))('kubectl %s apply --server-side', (minor) => {
  const ns = `ssa-${minor.replace('.', '-')}`;
  const file = (name: string, text: string) => {
    const p = join(c.home, `${ns}-${name}.yaml`);
    writeFileSync(p, text);
    return p;
  };
  const configMap = (data: Record<string, string>, labels: Record<string, string> = { app: 'web' }) =>
    file(
      'cm',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', namespace: ns, labels },
        data,
      }),
    );

  beforeAll(async () => {
    await c.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });

  it('creates, then changes, and records kubectl as the manager of what it applied', async () => {
    const created = await kubectl(['apply', '--server-side', '-f', configMap({ a: '1', b: '2' })], { minor });
    expect(created, created.stderr).toMatchObject({
      code: 0,
      stdout: 'configmap/settings serverside-applied\n',
    });
    const obj = await c.admin.get('ConfigMap', 'settings', { namespace: ns });
    expect(managers(obj)).toEqual([{ manager: 'kubectl', operation: 'Apply' }]);
    expect(fieldsOf(obj, 'kubectl')).toEqual({
      'f:data': { 'f:a': {}, 'f:b': {} },
      'f:metadata': { 'f:labels': { 'f:app': {} } },
    });
    // kubectl hides managedFields unless asked.
    const plain = await kubectl(['get', 'configmap', 'settings', '-n', ns, '-o', 'yaml'], { minor });
    expect(plain.stdout).not.toContain('managedFields');
    const shown = await kubectl(
      ['get', 'configmap', 'settings', '-n', ns, '-o', 'yaml', '--show-managed-fields'],
      { minor },
    );
    expect(shown.stdout).toContain('manager: kubectl\n');
    expect(shown.stdout).toContain('operation: Apply\n');

    const again = await kubectl(['apply', '--server-side', '-f', configMap({ a: '1', b: '3' })], { minor });
    expect(again.code, again.stderr).toBe(0);
    expect((await c.admin.get('ConfigMap', 'settings', { namespace: ns })).data).toEqual({ a: '1', b: '3' });
  });

  it('refuses to change a field another manager owns, names it, and changes nothing; --force-conflicts takes it', async () => {
    const before = await c.admin.get('ConfigMap', 'settings', { namespace: ns });
    const clash = await kubectl(
      ['apply', '--server-side', '--field-manager=ci', '-f', configMap({ b: '4', c: '5' })],
      { minor },
    );
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain('error: Apply failed with 1 conflict: conflict with "kubectl": .data.b\n');
    expect(clash.stderr).toContain('re-run the apply\n  command with the `--force-conflicts` flag');
    expect((await c.admin.get('ConfigMap', 'settings', { namespace: ns })).metadata?.resourceVersion).toBe(
      before.metadata?.resourceVersion,
    );

    // The same value is shared, not fought over.
    const shared = await kubectl(
      ['apply', '--server-side', '--field-manager=ci', '-f', configMap({ b: '3', c: '5' })],
      { minor },
    );
    expect(shared.code, shared.stderr).toBe(0);
    let obj = await c.admin.get('ConfigMap', 'settings', { namespace: ns });
    expect(fieldsOf(obj, 'ci')).toEqual({
      'f:data': { 'f:b': {}, 'f:c': {} },
      'f:metadata': { 'f:labels': { 'f:app': {} } },
    });
    expect(fieldsOf(obj, 'kubectl')).toMatchObject({ 'f:data': { 'f:b': {} } });

    const forced = await kubectl(
      [
        'apply',
        '--server-side',
        '--field-manager=ci',
        '--force-conflicts',
        '-f',
        configMap({ b: '4', c: '5' }),
      ],
      { minor },
    );
    expect(forced.code, forced.stderr).toBe(0);
    obj = await c.admin.get('ConfigMap', 'settings', { namespace: ns });
    expect(obj.data).toEqual({ a: '1', b: '4', c: '5' });
    expect(fieldsOf(obj, 'kubectl')).toEqual({
      'f:data': { 'f:a': {} },
      'f:metadata': { 'f:labels': { 'f:app': {} } },
    });
  });

  it('removes what a manager stops applying, unless another manager applies it', async () => {
    // kubectl stops applying "a" (its alone) and the label (ci applies it too).
    const applied = await kubectl(['apply', '--server-side', '-f', configMap({}, {})], { minor });
    expect(applied.code, applied.stderr).toBe(0);
    const obj = await c.admin.get('ConfigMap', 'settings', { namespace: ns });
    expect(obj.data).toEqual({ b: '4', c: '5' });
    expect(obj.metadata?.labels).toEqual({ app: 'web' });
  });

  it('names an Update manager in a conflict, and keeps a label another tool added', async () => {
    const patched = await kubectl(
      ['patch', 'configmap', 'settings', '-n', ns, '--type=merge', '-p', '{"data":{"c":"6"}}'],
      { minor },
    );
    expect(patched.code, patched.stderr).toBe(0);
    const labelled = await kubectl(['label', 'configmap', 'settings', '-n', ns, 'team=ops'], { minor });
    expect(labelled.code, labelled.stderr).toBe(0);
    const clash = await kubectl(
      ['apply', '--server-side', '--field-manager=ci', '-f', configMap({ b: '4', c: '7' })],
      { minor },
    );
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(
      /error: Apply failed with 1 conflict: conflict with "kubectl-patch" using v1 at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: \.data\.c\n/,
    );
    const dryRun = await kubectl(
      [
        'apply',
        '--server-side',
        '--field-manager=ci',
        '--force-conflicts',
        '--dry-run=server',
        '-f',
        configMap({ b: '4', c: '7' }),
      ],
      { minor },
    );
    expect(dryRun).toMatchObject({
      code: 0,
      stdout: 'configmap/settings serverside-applied (server dry run)\n',
    });
    const obj = await c.admin.get('ConfigMap', 'settings', { namespace: ns });
    expect(obj.data?.c).toBe('6');
    expect(obj.metadata?.labels).toEqual({ app: 'web', team: 'ops' });
    // Appliers first, then updaters by time (the same second here: then by name).
    expect(managers(obj)[0]).toEqual({ manager: 'ci', operation: 'Apply' });
    expect(managers(obj).slice(1)).toEqual(
      expect.arrayContaining([
        { manager: 'kubectl-patch', operation: 'Update' },
        { manager: 'kubectl-label', operation: 'Update' },
      ]),
    );
    expect(managers(obj)).toHaveLength(3);
  });

  it('moves a client-side applied object to server-side apply without conflicts, and back', async () => {
    const manifest = (b: string) =>
      file(
        'migrate',
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'migrated', namespace: ns },
          data: { a: '1', b },
        }),
      );
    const clientSide = await kubectl(['apply', '-f', manifest('2')], { minor });
    expect(clientSide).toMatchObject({ code: 0, stdout: 'configmap/migrated created\n' });
    // kubectl-client-side-apply owns "b", but kubectl's last client-side apply set it: no conflict.
    const serverSide = await kubectl(['apply', '--server-side', '-f', manifest('3')], { minor });
    expect(serverSide, serverSide.stderr).toMatchObject({
      code: 0,
      stdout: 'configmap/migrated serverside-applied\n',
    });
    const obj = await c.admin.get('ConfigMap', 'migrated', { namespace: ns });
    expect(obj.data).toEqual({ a: '1', b: '3' });
    expect(fieldsOf(obj, 'kubectl')).toMatchObject({ 'f:data': { 'f:a': {}, 'f:b': {} } });
    // The client-side annotation followed, so going back starts from the last apply.
    const back = await kubectl(['apply', '-f', manifest('4')], { minor });
    expect(back.code, back.stderr).toBe(0);
    expect((await c.admin.get('ConfigMap', 'migrated', { namespace: ns })).data).toEqual({ a: '1', b: '4' });
  });

  it('merges a DaemonSet by container and env name, and removes the container no longer applied', async () => {
    const ds = (containers: unknown[]) =>
      file(
        'ds',
        JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          metadata: { name: 'exporter', namespace: ns },
          spec: {
            selector: { matchLabels: { app: 'exporter' } },
            template: { metadata: { labels: { app: 'exporter' } }, spec: { containers } },
          },
        }),
      );
    const main = {
      name: 'main',
      image: 'exporter:1',
      env: [{ name: 'A', value: '1' }],
      ports: [{ containerPort: 9100 }],
    };
    const created = await kubectl(
      ['apply', '--server-side', '-f', ds([main, { name: 'side', image: 'side:1' }])],
      { minor },
    );
    expect(created, created.stderr).toMatchObject({
      code: 0,
      stdout: 'daemonset.apps/exporter serverside-applied\n',
    });
    let obj = (await c.admin.get('DaemonSet', 'exporter', { namespace: ns })) as KubeObject & {
      spec: {
        template: { spec: { containers: Array<{ name: string; image: string; imagePullPolicy?: string }> } };
      };
    };
    expect(fieldsOf(obj, 'kubectl')).toMatchObject({
      'f:spec': {
        'f:selector': {},
        'f:template': {
          'f:spec': {
            'f:containers': {
              'k:{"name":"main"}': {
                '.': {},
                'f:ports': {
                  'k:{"containerPort":9100,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
                },
              },
              'k:{"name":"side"}': { '.': {}, 'f:image': {}, 'f:name': {} },
            },
          },
        },
      },
    });
    const changed = await kubectl(['apply', '--server-side', '-f', ds([{ ...main, image: 'exporter:2' }])], {
      minor,
    });
    expect(changed.code, changed.stderr).toBe(0);
    obj = (await c.admin.get('DaemonSet', 'exporter', { namespace: ns })) as typeof obj;
    expect(obj.spec.template.spec.containers.map((x) => [x.name, x.image])).toEqual([['main', 'exporter:2']]);
    // Defaults the server filled in stay: no one applied them.
    expect(obj.spec.template.spec.containers[0].imagePullPolicy).toBe('IfNotPresent');
    await c.admin.delete('DaemonSet', 'exporter', { namespace: ns });
  });
});
