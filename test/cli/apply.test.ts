/**
 * labctl's writing verbs against a real control plane with hollow nodes: apply (created,
 * unchanged, configured; files, folders, stdin, several documents; field errors), create,
 * label and annotate, edit through $EDITOR (a rejected edit reopens with the errors), and
 * delete by name, file and selector with cascade policies, waiting until objects are gone.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { eventually } from '../support/wait.js';
import { startCliCluster, type CliCluster } from './support.js';

// Every labctl run is a fresh Node process: 1–3 s each on a busy machine, several per test.
vi.setConfig({ testTimeout: 90_000 });

let c: CliCluster;

beforeAll(async () => {
  c = await startCliCluster({ hollowNodes: 2, prefix: 'app' });
}, 60_000);

afterAll(async () => {
  await c?.close();
});

const pod = (name: string, labels: Record<string, string> = {}, extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: ${JSON.stringify(labels)}
spec:
  nodeName: app-0
  containers:
    - name: app
      image: web:1${extra}
`;

const daemonSet = (name: string, image = 'exporter:1') => `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ${name}
spec:
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
        - name: agent
          image: ${image}
`;

function file(name: string, text: string): string {
  const path = join(c.home, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

it('applies a file, a folder and stdin: created, then unchanged, then configured', async () => {
  const web = file('web.yaml', pod('web', { app: 'web' }));
  const first = await c.run(['apply', '-f', web]);
  expect(first).toMatchObject({ code: 0, stdout: 'pod/web created\n' });
  const again = await c.run(['apply', '-f', web]);
  expect(again).toMatchObject({ code: 0, stdout: 'pod/web unchanged\n' });

  // Several documents in one file, a folder, and stdin.
  file('dir/multi.yaml', `${daemonSet('exporter')}---\n${pod('db', { app: 'db' })}`);
  file('dir/ignored.txt', 'not a manifest');
  const folder = await c.run(['apply', '-f', join(c.home, 'dir')]);
  expect(folder).toMatchObject({ code: 0, stdout: 'daemonset.apps/exporter created\npod/db created\n' });
  const stdin = await c.run(['apply', '-f', '-'], { input: daemonSet('exporter', 'exporter:2') });
  expect(stdin).toMatchObject({ code: 0, stdout: 'daemonset.apps/exporter configured\n' });
  const ds = await c.admin.get('DaemonSet', 'exporter', { namespace: 'default' });
  expect(ds.spec?.template?.spec?.containers?.[0].image).toBe('exporter:2');
  expect((await c.run(['apply', '-f', '-'], { input: daemonSet('exporter', 'exporter:2') })).stdout).toBe(
    'daemonset.apps/exporter unchanged\n',
  );

  // A label the manifest drops is removed; one a user added by hand stays.
  await c.admin.patch('Pod', 'web', { metadata: { labels: { hand: 'made' } } }, { namespace: 'default' });
  expect((await c.run(['apply', '-f', file('web2.yaml', pod('web', {}))])).stdout).toBe(
    'pod/web configured\n',
  );
  expect((await c.admin.get('Pod', 'web', { namespace: 'default' })).metadata?.labels).toEqual({
    hand: 'made',
  });
});

it('rejects an invalid manifest with every field at fault, and a typo instead of dropping it', async () => {
  const typo = await c.run(['apply', '-f', '-'], {
    input: pod('typo', {}).replace('image: web:1', 'imagee: web:1'),
  });
  expect(typo.code).toBe(1);
  expect(typo.stderr).toContain('The Pod "typo" is invalid: spec.containers[0].imagee: Unknown field');
  expect(typo.stderr).toContain('did you mean "image"?');
  const bad = await c.run(['create', '-f', '-'], {
    input: 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: Bad_Name\nspec:\n  containers:\n    - image: x\n',
  });
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(
    /^The Pod "Bad_Name" is invalid: \n\* metadata\.name: Invalid value: "Bad_Name"/,
  );
  expect(bad.stderr).toContain('* spec.containers[0].name: Required value');
});

it('creates, and refuses to create what exists', async () => {
  const created = await c.run(['create', '-f', '-'], { input: pod('made', { app: 'made' }) });
  expect(created).toMatchObject({ code: 0, stdout: 'pod/made created\n' });
  const again = await c.run(['create', '-f', '-'], { input: pod('made', { app: 'made' }) });
  expect(again.code).toBe(1);
  expect(again.stderr).toBe('Error from server (AlreadyExists): pods "made" already exists\n');
  expect((await c.run(['create', 'namespace', 'lab'])).stdout).toBe('namespace/lab created\n');
});

it('labels and annotates, refusing to overwrite without --overwrite', async () => {
  expect((await c.run(['label', 'pod', 'web', 'tier=front'])).stdout).toBe('pod/web labeled\n');
  const refused = await c.run(['label', 'pod', 'web', 'tier=back']);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toBe("error: 'tier' already has a value (front), and --overwrite is false\n");
  expect((await c.run(['label', 'pods', '-l', 'app=db', 'tier=back', '--overwrite'])).stdout).toBe(
    'pod/db labeled\n',
  );
  expect((await c.run(['label', 'pod/web', 'tier-'])).stdout).toBe('pod/web labeled\n');
  expect((await c.admin.get('Pod', 'web', { namespace: 'default' })).metadata?.labels).toEqual({
    hand: 'made',
  });
  expect((await c.run(['annotate', 'ds', 'exporter', 'owner=ops team'])).stdout).toBe(
    'daemonset.apps/exporter annotated\n',
  );
  expect(
    (await c.admin.get('DaemonSet', 'exporter', { namespace: 'default' })).metadata?.annotations?.owner,
  ).toBe('ops team');
  const badLabel = await c.run(['label', 'pod', 'web', 'bad key=x']);
  expect(badLabel.code).toBe(1);
});

it('edits through $EDITOR, and reopens a rejected edit with the errors at the top', async () => {
  // The editor: a small script that records what it was shown, then changes the image (first
  // an invalid change, then, when it sees the error comment, a valid one).
  const editor = file(
    'editor.mjs',
    `import { readFileSync, writeFileSync, appendFileSync } from 'node:fs';
const path = process.argv[2];
const text = readFileSync(path, 'utf8');
appendFileSync(${JSON.stringify(join(c.home, 'editor.log'))}, text + '\\n=====\\n');
if (text.includes('was not valid')) writeFileSync(path, text.replace(/^( +)restartPolicy: .*$/m, '$1restartPolicy: Always').replace(/^( +)image: .*$/m, '$1image: exporter:3'));
else writeFileSync(path, text.replace(/^( +)restartPolicy: .*$/m, '$1restartPolicy: Sometimes'));
`,
  );
  const edited = await c.run(['edit', 'ds', 'exporter'], {
    env: { EDITOR: `${process.execPath} ${editor}` },
  });
  expect(edited.stderr).toBe('');
  expect(edited).toMatchObject({ code: 0, stdout: 'daemonset.apps/exporter edited\n' });
  const log = (await import('node:fs')).readFileSync(join(c.home, 'editor.log'), 'utf8').split('=====\n');
  expect(log[0]).toMatch(/^# Please edit the object below\./);
  expect(log[1]).toMatch(
    /#\n# daemonsets "exporter" was not valid:\n# \* spec\.template\.spec\.restartPolicy: Unsupported value: "Sometimes"/,
  );
  expect(
    (await c.admin.get('DaemonSet', 'exporter', { namespace: 'default' })).spec?.template?.spec
      ?.containers?.[0].image,
  ).toBe('exporter:3');

  const unchanged = await c.run(['edit', 'pod', 'web'], { env: { EDITOR: 'true' } });
  expect(unchanged).toMatchObject({ code: 0, stdout: 'Edit cancelled, no changes made.\n' });
});

it('deletes by name, by file and by selector, waiting until the objects are gone', async () => {
  const byName = await c.run(['delete', 'pod', 'made']);
  expect(byName).toMatchObject({ code: 0, stdout: 'pod "made" deleted\n' });
  await expect(c.admin.get('Pod', 'made', { namespace: 'default' })).rejects.toThrow(/not found/);

  const missing = await c.run(['delete', 'pod', 'made']);
  expect(missing).toMatchObject({ code: 1, stderr: 'Error from server (NotFound): pods "made" not found\n' });
  expect((await c.run(['delete', 'pod', 'made', '--ignore-not-found'])).code).toBe(0);

  const bySelector = await c.run(['delete', 'pods', '-l', 'app=db']);
  expect(bySelector).toMatchObject({ code: 0, stdout: 'pod "db" deleted\n' });

  // Orphan: the DaemonSet goes, its pods stay (their owner reference removed).
  const orphaned = await c.run([
    'delete',
    '-f',
    join(c.home, 'dir', 'multi.yaml'),
    '--cascade=orphan',
    '--ignore-not-found',
  ]);
  expect(orphaned.stdout).toBe('daemonset.apps "exporter" deleted\n');
  await eventually(async () => {
    const pods = (await c.admin.list('Pod', { namespace: 'default', labelSelector: 'app=exporter' })).items;
    return pods.length === 2 && pods.every((p) => !p.metadata?.ownerReferences?.length);
  }, 'orphaned pods without owner');

  // Foreground: the DaemonSet is gone only after its pods.
  await c.run(['apply', '-f', '-'], { input: daemonSet('fg') });
  await eventually(
    async () =>
      (await c.admin.list('Pod', { namespace: 'default', labelSelector: 'app=fg' })).items.length === 2,
    'fg pods',
  );
  const fg = await c.run(['delete', 'ds', 'fg', '--cascade=foreground', '--timeout=40s']);
  expect(fg).toMatchObject({ code: 0, stdout: 'daemonset.apps "fg" deleted\n' });
  const left = (await c.admin.list('Pod', { namespace: 'default', labelSelector: 'app=fg' })).items;
  expect(left.every((p) => p.metadata?.deletionTimestamp)).toBe(true);

  const usage = await c.run(['delete', 'pods']);
  expect(usage.code).toBe(1);
  expect(usage.stderr).toMatch(/no name was specified/);
});
