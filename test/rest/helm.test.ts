/**
 * Helm against kubelab, as a user runs it: a small chart that creates a DaemonSet and a
 * Deployment, installed (with --wait), listed, upgraded and uninstalled with the real helm
 * binaries of `npm run fetch:kubectl` — Helm 3 and Helm 4 — keeping their releases where Helm
 * keeps them by default, in Secrets (protobuf from Helm, encrypted at rest). Helm 4 installs and
 * upgrades with server-side apply, its default; Helm 3 with creates and three-way patches.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isNotFound } from '../../client/api/errors.js';
import { startCliCluster, type CliCluster } from '../cli/support.js';
import { eventually } from '../support/wait.js';
import { checkKubectls, mergedKubeconfig, ROOT, run } from './support.js';

vi.setConfig({ testTimeout: 120_000 });

let c: CliCluster;
let kubeconfig: string;
let chart: string;

beforeAll(async () => {
  checkKubectls();
  c = await startCliCluster({ hollowNodes: 2, prefix: 'hm' });
  kubeconfig = await mergedKubeconfig(c);
  chart = join(c.home, 'exporter');
  mkdirSync(join(chart, 'templates'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: exporter\nversion: 0.1.0\n');
  writeFileSync(join(chart, 'values.yaml'), 'image: exporter:1\n');
  writeFileSync(
    join(chart, 'templates', 'daemonset.yaml'),
    `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ .Release.Name }}-exporter
  labels: {app.kubernetes.io/managed-by: {{ .Release.Service }}}
spec:
  selector: {matchLabels: {app: {{ .Release.Name }}-exporter}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}-exporter}}
    spec:
      containers: [{name: exporter, image: "{{ .Values.image }}"}]
`,
  );
  writeFileSync(
    join(chart, 'templates', 'deployment.yaml'),
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  replicas: 2
  selector: {matchLabels: {app: {{ .Release.Name }}-web}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}-web}}
    spec:
      containers: [{name: web, image: "web:1"}]
`,
  );
}, 60_000);

afterAll(async () => {
  await c?.close();
});

describe.each([
  { helm: 3, minor: '1.30', operation: 'Update' },
  { helm: 4, minor: '1.33', operation: 'Apply' },
])('Helm $helm', ({ helm, minor, operation }) => {
  const release = `h${helm}`;
  const helmRun = (args: string[]) =>
    run(join(ROOT, '.cache', 'kubectl', minor, 'helm'), args, {
      env: { PATH: process.env.PATH, HOME: c.home, KUBECONFIG: kubeconfig },
    });

  it('installs a chart, lists it, upgrades it and uninstalls it', async () => {
    const installed = await helmRun(['install', release, chart, '--wait', '--timeout', '90s']);
    expect(installed.stdout).toContain('STATUS: deployed');
    const ds = await c.admin.get('DaemonSet', `${release}-exporter`, { namespace: 'default' });
    expect(ds.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('Helm');
    expect(ds.status?.numberReady).toBe(2);
    expect(ds.metadata?.managedFields?.find((e) => e.operation === operation)?.manager).toMatch(/^helm$/i);
    const web = await c.admin.get('Deployment', `${release}-web`, { namespace: 'default' });
    expect(web.status?.availableReplicas).toBe(2);
    // The release itself, in a Secret of Helm's own.
    const stored = await c.admin.list('Secret', {
      namespace: 'default',
      labelSelector: `owner=helm,name=${release}`,
    });
    expect(stored.items.map((s) => [s.metadata?.name, s.type])).toEqual([
      [`sh.helm.release.v1.${release}.v1`, 'helm.sh/release.v1'],
    ]);
    expect((await helmRun(['list', '--short'])).stdout.split('\n')).toContain(release);

    const upgraded = await helmRun(['upgrade', release, chart, '--set', 'image=exporter:2']);
    expect(upgraded.stdout).toContain('REVISION: 2');
    const after = await c.admin.get('DaemonSet', `${release}-exporter`, { namespace: 'default' });
    expect(after.spec?.template?.spec?.containers?.[0]?.image).toBe('exporter:2');

    const uninstalled = await helmRun(['uninstall', release, '--wait']);
    expect(uninstalled.stdout).toContain(`release "${release}" uninstalled`);
    await eventually(
      async () =>
        (await c.admin
          .get('DaemonSet', `${release}-exporter`, { namespace: 'default' })
          .then(() => false, isNotFound)) === true,
      'the DaemonSet to be gone',
    );
    const left = await c.admin.list('Secret', {
      namespace: 'default',
      labelSelector: `owner=helm,name=${release}`,
    });
    expect(left.items).toEqual([]);
  });
});
