/**
 * The real kubectl against kubelab (issue 20), as a user runs it: a kubeconfig from the real
 * `kubelab kubeconfig`, then kubectl's own commands, asserting on what kubectl prints and on the
 * cluster's state. The newest kubectl and an older minor (`npm run fetch:kubectl` puts them in
 * .cache/kubectl; `npm test` runs it first).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound } from '../../client/api/errors.js';
import { startCliCluster, type CliCluster } from '../cli/support.js';
import { eventually } from '../support/wait.js';
import {
  checkKubectls,
  KUBECTLS,
  kubectlRunner,
  mergedKubeconfig,
  printedKubeconfig,
  type Kubectl,
} from './support.js';

let c: CliCluster;
let kubectl: Kubectl;

beforeAll(async () => {
  checkKubectls();
  c = await startCliCluster({ hollowNodes: 2, prefix: 'kc' });
  kubectl = kubectlRunner(c, await mergedKubeconfig(c));
}, 60_000);

afterAll(async () => {
  await c?.close();
});

describe.each(KUBECTLS.map((k) => k.minor))('kubectl %s', (minor) => {
  it('finds the cluster: version and api-resources', async () => {
    const version = await kubectl(['version', '-o', 'json'], { minor });
    expect(version.code, version.stderr).toBe(0);
    const parsed = JSON.parse(version.stdout) as {
      serverVersion: { major: string; minor: string; gitVersion: string };
    };
    expect(parsed.serverVersion).toMatchObject({ major: '1', minor: '33' });
    expect(parsed.serverVersion.gitVersion).toContain('kubelab');

    const resources = await kubectl(['api-resources', '--no-headers'], { minor });
    expect(resources.code, resources.stderr).toBe(0);
    const rows = resources.stdout
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    // NAME SHORTNAMES APIVERSION NAMESPACED KIND (shortnames may be empty)
    expect(rows).toContainEqual(['pods', 'po', 'v1', 'true', 'Pod']);
    expect(rows).toContainEqual(['nodes', 'no', 'v1', 'false', 'Node']);
    expect(rows).toContainEqual(['daemonsets', 'ds', 'apps/v1', 'true', 'DaemonSet']);
    expect(rows).toContainEqual(['leases', 'coordination.k8s.io/v1', 'true', 'Lease']);
    expect(rows).toContainEqual(['services', 'svc', 'v1', 'true', 'Service']);
  });

  it('finds the control plane with cluster-info, through the Service the API keeps for itself', async () => {
    const info = await kubectl(['cluster-info'], { minor });
    expect(info.code, info.stderr).toBe(0);
    // Older kubectls colour the line even when it is not printed to a terminal.
    // eslint-disable-next-line no-control-regex
    const plain = info.stdout.replace(/\u001b\[[0-9;]*m/g, '');
    expect(plain).toContain(`Kubernetes control plane is running at https://127.0.0.1:${c.t.cp.port}\n`);
    const services = await kubectl(['get', 'services', '-A'], { minor });
    expect(services.stdout.split('\n').map((l) => l.split(/\s+/))).toContainEqual([
      'default',
      'kubernetes',
      'ClusterIP',
      '<none>',
      '<none>',
      `${c.t.cp.port}/TCP`,
      expect.stringMatching(/^\d+[smh]$/),
    ]);
    // Read-only: no proxy would route a Service anyone else made.
    const create = await kubectl(['create', 'service', 'clusterip', 'web', '--tcp=80'], { minor });
    expect(create.code).toBe(1);
    expect(create.stderr).toContain('kubelab has no service proxy yet, so Services are read-only');
    const canI = await kubectl(['auth', 'can-i', 'delete', 'services'], { minor });
    expect(canI.stdout).toMatch(/^no - kubelab has no service proxy yet/);
  });

  it('explains a field from the OpenAPI schema', async () => {
    const explained = await kubectl(['explain', 'pod.spec.containers'], { minor });
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout).toMatch(/^KIND:\s+Pod$/m);
    expect(explained.stdout).toMatch(/^FIELD: containers <\[\]Container>$/m);
    expect(explained.stdout).toMatch(/^ {2}image\t<string>$/m);
    // Descriptions come from the comments of the .proto files.
    const described = await kubectl(['explain', 'configmap.immutable'], { minor });
    expect(described.stdout.replace(/\s+/g, ' ')).toContain('Once true, data and binaryData may not change');
    const missing = await kubectl(['explain', 'pod.spec.nosuchfield'], { minor });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('nosuchfield');
  });

  it('gets nodes as names, YAML, JSON, jsonpath and custom columns, with label and field selectors', async () => {
    const names = await kubectl(['get', 'nodes', '-o', 'name'], { minor });
    expect(names.code, names.stderr).toBe(0);
    expect(names.stdout.trim().split('\n').sort()).toEqual(['node/kc-0', 'node/kc-1']);

    const yaml = await kubectl(['get', 'node', 'kc-0', '-o', 'yaml'], { minor });
    expect(yaml.stdout).toMatch(/^apiVersion: v1\nkind: Node\n/);
    expect(yaml.stdout).toContain('name: kc-0');

    const json = await kubectl(['get', 'nodes', '-o', 'json'], { minor });
    const list = JSON.parse(json.stdout) as { kind: string; items: Array<{ metadata: { name: string } }> };
    expect(list.kind).toBe('List');
    expect(list.items.map((n) => n.metadata.name).sort()).toEqual(['kc-0', 'kc-1']);

    const ready = await kubectl(
      ['get', 'node', 'kc-1', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'],
      { minor },
    );
    expect(ready.stdout).toBe('True');

    const columns = await kubectl(
      [
        'get',
        'nodes',
        '-l',
        'kubelab.io/pool=kc',
        '--field-selector',
        'metadata.name=kc-1',
        '-o',
        'custom-columns=NAME:.metadata.name,POOL:.metadata.labels.kubelab\\.io/pool',
      ],
      { minor },
    );
    expect(columns.code, columns.stderr).toBe(0);
    expect(
      columns.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)),
    ).toEqual([
      ['NAME', 'POOL'],
      ['kc-1', 'kc'],
    ]);

    const none = await kubectl(['get', 'nodes', '-l', 'kubelab.io/pool=elsewhere'], { minor });
    expect(none.stderr).toContain('No resources found');
  });

  it('prints the tables a cluster prints: get nodes, -o wide, -A, --show-labels', async () => {
    const nodes = await kubectl(['get', 'nodes'], { minor });
    expect(nodes.code, nodes.stderr).toBe(0);
    const rows = nodes.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(/\s{2,}/));
    expect(rows[0]).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
    expect(rows.slice(1).map((r) => r.slice(0, 3))).toEqual([
      ['kc-0', 'Ready', '<none>'],
      ['kc-1', 'Ready', '<none>'],
    ]);

    const wide = await kubectl(['get', 'nodes', '-o', 'wide'], { minor });
    expect(wide.stdout.split('\n')[0].split(/\s{2,}/)).toEqual([
      'NAME',
      'STATUS',
      'ROLES',
      'AGE',
      'VERSION',
      'INTERNAL-IP',
      'EXTERNAL-IP',
      'OS-IMAGE',
      'KERNEL-VERSION',
      'CONTAINER-RUNTIME',
    ]);

    const labels = await kubectl(['get', 'node', 'kc-0', '--show-labels'], { minor });
    expect(labels.stdout.split('\n')[0]).toMatch(/\sLABELS$/);
    expect(labels.stdout).toContain('kubelab.io/pool=kc');

    const leases = await kubectl(['get', 'leases', '-A'], { minor });
    expect(leases.code, leases.stderr).toBe(0);
    expect(leases.stdout.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s/);
    expect(leases.stdout).toMatch(/kube-node-lease\s+kc-0\s/);
  });

  it('creates from a manifest, sees the change with get -w, replaces, patches and deletes', async () => {
    const ns = `kc-${minor.replace('.', '-')}`;
    const manifest = `apiVersion: v1
kind: Namespace
metadata:
  name: ${ns}
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: ${ns}
  labels: { app: web }
spec:
  nodeName: kc-0
  containers:
    - name: c
      image: nginx:1.27
`;
    const file = join(c.home, `manifest-${minor}.yaml`);
    writeFileSync(file, manifest);
    const created = await kubectl(['create', '-f', file], { minor });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain(`namespace/${ns} created`);
    expect(created.stdout).toContain('pod/web created');
    expect((await c.admin.get('Pod', 'web', { namespace: ns })).spec?.containers?.[0]?.image).toBe(
      'nginx:1.27',
    );

    // A watch started now sees the merge patch below.
    const watch = kubectl.start(
      ['get', 'pod', 'web', '-n', ns, '-w', '-o', 'jsonpath={.metadata.labels.tier}{"\\n"}'],
      { minor },
    );
    try {
      // kubectl prints the pod as it is (no tier yet: an empty line) once its watch is open.
      await eventually(() => watch.stdout.includes('\n'), 'kubectl get -w to print the pod as it is');
      const patched = await kubectl(
        [
          'patch',
          'pod',
          'web',
          '-n',
          ns,
          '--type',
          'merge',
          '-p',
          '{"metadata":{"labels":{"tier":"front"}}}',
        ],
        { minor },
      );
      expect(patched.code, patched.stderr).toBe(0);
      expect(patched.stdout).toContain('pod/web patched');
      await eventually(
        () => watch.stdout.includes('front'),
        `kubectl get -w to print the new label (so far ${JSON.stringify(watch.stdout)})`,
      );
    } finally {
      await watch.stop();
    }

    const jsonPatch = await kubectl(
      [
        'patch',
        'pod',
        'web',
        '-n',
        ns,
        '--type',
        'json',
        '-p',
        '[{"op":"add","path":"/metadata/annotations","value":{"note":"hi"}}]',
      ],
      { minor },
    );
    expect(jsonPatch.code, jsonPatch.stderr).toBe(0);
    expect((await c.admin.get('Pod', 'web', { namespace: ns })).metadata?.annotations).toEqual({
      note: 'hi',
    });

    const deleted = await kubectl(['delete', 'namespace', ns, '--wait=true', '--timeout=60s'], { minor });
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain(`namespace "${ns}" deleted`);
    await expect(c.admin.get('Namespace', ns)).rejects.toSatisfy(isNotFound);
  }, 90_000);

  it('applies a manifest, then a change to it (client-side apply: a strategic merge patch), and cordons a node', async () => {
    const ns = `applied-${minor.replace('.', '-')}`;
    const file = join(c.home, `apply-${minor}.yaml`);
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n  labels: { stage: one, keep: "yes" }\n`,
    );
    const first = await kubectl(['apply', '-f', file], { minor });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`namespace/${ns} created`);
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n  labels: { stage: two }\n`,
    );
    const second = await kubectl(['apply', '-f', file], { minor });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(`namespace/${ns} configured`);
    // The label the manifest dropped is gone (three-way merge), the changed one changed.
    expect((await c.admin.get('Namespace', ns)).metadata?.labels).toEqual({ stage: 'two' });
    await c.admin.delete('Namespace', ns);

    const cordoned = await kubectl(['cordon', 'kc-1'], { minor });
    expect(cordoned.code, cordoned.stderr).toBe(0);
    expect(cordoned.stdout).toContain('node/kc-1 cordoned');
    expect((await c.admin.get('Node', 'kc-1')).spec?.unschedulable).toBe(true);
    const status = await kubectl(['get', 'node', 'kc-1', '--no-headers'], { minor });
    expect(status.stdout).toMatch(/^kc-1\s+Ready,SchedulingDisabled\s/);
    const uncordoned = await kubectl(['uncordon', 'kc-1'], { minor });
    expect(uncordoned.code, uncordoned.stderr).toBe(0);
    expect((await c.admin.get('Node', 'kc-1')).spec?.unschedulable).toBeFalsy();
  });

  it('prints errors as a Kubernetes apiserver does, and changes nothing', async () => {
    const missing = await kubectl(['get', 'pod', 'nope', '-n', 'default'], { minor });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Error from server (NotFound): pods "nope" not found');

    const file = join(c.home, `invalid-${minor}.yaml`);
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n  namespace: default\nspec:\n  containers:\n    - name: c\n',
    );
    const invalid = await kubectl(['create', '-f', file], { minor });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('The Pod "bad" is invalid');
    expect(invalid.stderr).toContain('spec.containers[0].command: Required value');
    await expect(c.admin.get('Pod', 'bad', { namespace: 'default' })).rejects.toSatisfy(isNotFound);

    // Unknown fields: refused by default (kubectl sends fieldValidation=Strict), dropped with a
    // warning under --validate=warn, dropped silently under --validate=false.
    const typo = join(c.home, `typo-${minor}.yaml`);
    const typoNs = `typo-${minor.replace('.', '-')}`;
    writeFileSync(typo, `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${typoNs}, lables: {a: b}}\n`);
    const strict = await kubectl(['create', '-f', typo], { minor });
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain(
      'metadata.lables: Unknown field: ObjectMeta has no field "lables"; did you mean "labels"?',
    );
    await expect(c.admin.get('Namespace', typoNs)).rejects.toSatisfy(isNotFound);
    const warned = await kubectl(['create', '-f', typo, '--validate=warn'], { minor });
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stderr).toContain('Warning: unknown field "metadata.lables"');
    expect((await c.admin.get('Namespace', typoNs)).metadata?.labels).toBeUndefined();
    await c.admin.delete('Namespace', typoNs);
    await eventually(
      async () => (await c.admin.get('Namespace', typoNs).then(() => false, isNotFound)) === true,
      'the namespace to be gone',
    );
    const ignored = await kubectl(['create', '-f', typo, '--validate=false'], { minor });
    expect(ignored, ignored.stderr).toMatchObject({ code: 0, stderr: '' });

    const viewer = await printedKubeconfig(c, join(c.home, `viewer-${minor}`), ['--role', 'viewer']);
    const refused = await kubectl(['create', 'namespace', 'by-viewer'], {
      minor,
      env: { KUBECONFIG: viewer },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Forbidden|forbidden/);
    const readable = await kubectl(['get', 'nodes', '-o', 'name'], { minor, env: { KUBECONFIG: viewer } });
    expect(readable.code, readable.stderr).toBe(0);

    const anonymous = join(c.home, `anonymous-${minor}`);
    writeFileSync(
      anonymous,
      `apiVersion: v1\nkind: Config\nclusters: [{name: k, cluster: {server: "https://127.0.0.1:${c.t.cp.port}", certificate-authority-data: ${Buffer.from(c.t.caPem).toString('base64')}}}]\nusers: [{name: u, user: {token: not-a-token}}]\ncontexts: [{name: k, context: {cluster: k, user: u}}]\ncurrent-context: k\n`,
    );
    const unauthorized = await kubectl(['get', 'pods'], { minor, env: { KUBECONFIG: anonymous } });
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.stderr).toMatch(/Unauthorized|must be logged in/);
  });
});
