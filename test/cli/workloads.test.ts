/**
 * labctl with Deployments against a real control plane with hollow nodes: apply, get (kubectl's
 * columns for deployments and replicasets), scale, rollout status, history, undo, pause and
 * resume — asserting on what labctl prints and on what the cluster then holds.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { eventually } from '../support/wait.js';
import { isAligned, startCliCluster, tableCells, type CliCluster } from './support.js';

vi.setConfig({ testTimeout: 120_000 });

let c: CliCluster;

const manifest = (image: string, cause?: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default${cause ? `\n  annotations:\n    kubernetes.io/change-cause: ${cause}` : ''}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: ${image}
`;

const get = () => c.admin.get('Deployment', 'web', { namespace: 'default' });
const image = async () => (await get()).spec?.template?.spec?.containers?.[0]?.image;

beforeAll(async () => {
  c = await startCliCluster({ hollowNodes: 2, prefix: 'wl' });
}, 60_000);

afterAll(async () => {
  await c?.close();
});

it('applies a Deployment, waits for its rollout and lists it with its ReplicaSet', async () => {
  const applied = await c.run(['apply', '-f', '-'], { input: manifest('web:1', 'first') });
  expect(applied).toMatchObject({ code: 0, stdout: 'deployment.apps/web created\n' });
  const status = await c.run(['rollout', 'status', 'deployment/web', '--timeout=60s']);
  expect(status.code).toBe(0);
  expect(status.stdout).toMatch(
    /^(Waiting for deployment (spec update to be observed|"web" rollout to finish: .*)\.\.\.\n)*deployment "web" successfully rolled out\n$/,
  );
  const [deploys, rss] = await Promise.all([c.run(['get', 'deploy']), c.run(['get', 'rs', '-o', 'wide'])]);
  expect(tableCells(deploys.stdout)[0]).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE']);
  expect(tableCells(deploys.stdout)[1].slice(0, 4)).toEqual(['web', '2/2', '2', '2']);
  expect(isAligned(deploys.stdout)).toBe(true);
  const rsRows = tableCells(rss.stdout);
  expect(rsRows[0]).toEqual([
    'NAME',
    'DESIRED',
    'CURRENT',
    'READY',
    'AGE',
    'CONTAINERS',
    'IMAGES',
    'SELECTOR',
  ]);
  expect(rsRows[1][0]).toMatch(/^web-[a-z0-9]+$/);
  expect(rsRows[1].slice(1, 4)).toEqual(['2', '2', '2']);
  expect(rsRows[1].slice(5, 7)).toEqual(['web', 'web:1']);
  expect(rsRows[1][7]).toMatch(/^app=web,pod-template-hash=[a-z0-9]+$/);
});

it('scales, refusing when --current-replicas does not match', async () => {
  expect((await c.run(['scale', 'deployment/web', '--replicas=3'])).stdout).toBe(
    'deployment.apps/web scaled\n',
  );
  await eventually(async () => (await get()).status?.availableReplicas === 3, 'three available replicas');
  const refused = await c.run(['scale', 'deploy', 'web', '--replicas=1', '--current-replicas=5']);
  expect(refused).toMatchObject({
    code: 1,
    stderr: 'error: Expected replicas to be 5, was 3: deployments.apps/web not scaled\n',
  });
  expect((await get()).spec?.replicas).toBe(3);
  const notScalable = await c.run(['scale', 'ds/x', '--replicas=1']);
  expect(notScalable.stderr).toBe(
    'error: cannot scale daemonsets: labctl scales deployments and replicasets\n',
  );
});

it('rolls out a new image, lists the history, undoes to the previous revision', async () => {
  expect((await c.run(['apply', '-f', '-'], { input: manifest('web:2', 'second') })).stdout).toBe(
    'deployment.apps/web configured\n',
  );
  expect((await c.run(['rollout', 'status', 'deploy/web', '--timeout=60s'])).code).toBe(0);
  const history = await c.run(['rollout', 'history', 'deployment/web']);
  expect(history.stdout).toBe(
    'deployment.apps/web \nREVISION   CHANGE-CAUSE\n1          first\n2          second\n\n',
  );
  const revision1 = await c.run(['rollout', 'history', 'deployment/web', '--revision=1']);
  expect(revision1.stdout).toMatch(
    /^deployment\.apps\/web with revision #1\nPod Template:\n {2}Labels: +app=web\n/,
  );
  expect(revision1.stdout).toContain('web:1');

  expect((await c.run(['rollout', 'undo', 'deployment/web'])).stdout).toBe(
    'deployment.apps/web rolled back\n',
  );
  expect(await image()).toBe('web:1');
  expect((await get()).metadata?.annotations?.['kubernetes.io/change-cause']).toBe('first');
  expect((await c.run(['rollout', 'status', 'deploy/web', '--timeout=60s'])).code).toBe(0);
  const pods = (await c.admin.list('Pod', { namespace: 'default', labelSelector: 'app=web' })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );
  // The manifest's replicas: 2 won over the scale to 3, as with kubectl apply.
  expect(pods.map((p) => p.spec?.containers?.[0]?.image)).toEqual(['web:1', 'web:1']);
  expect((await c.run(['rollout', 'undo', 'deployment/web', '--to-revision=3'])).stdout).toBe(
    'deployment.apps/web skipped rollback (current template already matches revision 3)\n',
  );
});

it('describes a Deployment, its ReplicaSet and a Job as kubectl does', async () => {
  const d = await c.run(['describe', 'deployment', 'web']);
  expect(d.code).toBe(0);
  expect(d.stdout).toMatch(/^Name:\s+web\nNamespace:\s+default\n/);
  expect(d.stdout).toMatch(/Replicas:\s+2 desired \| 2 updated \| 2 total \| 2 available \| 0 unavailable\n/);
  expect(d.stdout).toMatch(/StrategyType:\s+RollingUpdate\n/);
  expect(d.stdout).toMatch(/RollingUpdateStrategy:\s+25% max unavailable, 25% max surge\n/);
  expect(d.stdout).toMatch(/Conditions:\n\s+Type\s+Status\s+Reason\n/);
  expect(d.stdout).toMatch(/NewReplicaSet:\s+web-[a-z0-9]+ \(2\/2 replicas created\)\n/);
  expect(d.stdout).toMatch(/OldReplicaSets:\s+<none>\n/);
  expect(d.stdout).toMatch(/Events:\n[\s\S]*ScalingReplicaSet/);
  const rs = await c.run(['describe', 'rs', '-l', 'app=web']);
  expect(rs.stdout).toMatch(/Controlled By:\s+Deployment\/web\n/);
  expect(rs.stdout).toMatch(/Pods Status:\s+2 Running \/ 0 Waiting \/ 0 Succeeded \/ 0 Failed\n/);
});

it('pauses and resumes: a paused Deployment holds its template change until resumed', async () => {
  expect((await c.run(['rollout', 'pause', 'deployment/web'])).stdout).toBe('deployment.apps/web paused\n');
  expect((await c.run(['rollout', 'pause', 'deployment/web'])).stderr).toBe(
    'error: deployments.apps "web" is already paused\n',
  );
  const undoPaused = await c.run(['rollout', 'undo', 'deployment/web']);
  expect(undoPaused.stderr).toContain('you cannot rollback a paused deployment');
  await c.admin.patch(
    'Deployment',
    'web',
    { spec: { template: { spec: { containers: [{ name: 'web', image: 'web:3' }] } } } },
    { namespace: 'default' },
  );
  await eventually(
    async () => (await get()).status?.conditions?.some((x) => x.reason === 'DeploymentPaused') ?? false,
    'the paused condition',
  );
  const rsCount = async () => (await c.admin.list('ReplicaSet', { namespace: 'default' })).items.length;
  expect(await rsCount()).toBe(2);
  expect((await c.run(['rollout', 'resume', 'deploy/web'])).stdout).toBe('deployment.apps/web resumed\n');
  expect((await c.run(['rollout', 'status', 'deploy/web', '--timeout=60s'])).code).toBe(0);
  expect(await rsCount()).toBe(3);
});

it('runs a CronJob now with create job --from', async () => {
  await c.admin.create({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'nightly', namespace: 'default' },
    spec: {
      schedule: '0 3 * * *',
      jobTemplate: {
        metadata: { labels: { app: 'backup' } },
        spec: {
          template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'restic:1' }] } },
        },
      },
    },
  });
  expect((await c.run(['create', 'job', 'backup-now', '--from=cronjob/nightly'])).stdout).toBe(
    'job.batch/backup-now created\n',
  );
  const job = await c.admin.get('Job', 'backup-now', { namespace: 'default' });
  expect(job.metadata?.labels).toMatchObject({ app: 'backup' });
  expect(job.metadata?.annotations?.['cronjob.kubernetes.io/instantiate']).toBe('manual');
  expect(job.metadata?.ownerReferences?.[0]).toMatchObject({
    kind: 'CronJob',
    name: 'nightly',
    controller: true,
  });
  const described = await c.run(['describe', 'job', 'backup-now']);
  expect(described.stdout).toMatch(/Controlled By:\s+CronJob\/nightly\n/);
  expect(described.stdout).toMatch(/Completions:\s+1\n/);
  expect(described.stdout).toMatch(/Pods Statuses:\s+\d Active \(\d Ready\) \/ 0 Succeeded \/ 0 Failed\n/);
  const cron = await c.run(['describe', 'cronjob', 'nightly']);
  expect(cron.stdout).toMatch(/Schedule:\s+0 3 \* \* \*\n/);
  expect(cron.stdout).toMatch(/Concurrency Policy:\s+Allow\n/);
  const wrong = await c.run(['create', 'job', 'x', '--from=deployment/web']);
  expect(wrong).toMatchObject({ code: 1, stderr: 'error: give the CronJob to run: --from=cronjob/NAME\n' });
  const table = await c.run(['get', 'cronjobs']);
  expect(tableCells(table.stdout)[1].slice(0, 5)).toEqual(['nightly', '0 3 * * *', '<none>', 'False', '0']);
});

it('creates ConfigMaps and Secrets from literals and files', async () => {
  const file = join(c.home, 'app.conf');
  writeFileSync(file, 'mode=fast\n');
  const cm = await c.run(['create', 'configmap', 'app', '--from-literal=LEVEL=info', `--from-file=${file}`]);
  expect(cm).toMatchObject({ code: 0, stdout: 'configmap/app created\n' });
  expect((await c.admin.get('ConfigMap', 'app', { namespace: 'default' })).data).toEqual({
    LEVEL: 'info',
    'app.conf': 'mode=fast\n',
  });
  const secret = await c.run([
    'create',
    'secret',
    'generic',
    'db',
    '--from-literal=password=s3cret',
    `--from-file=conf=${file}`,
  ]);
  expect(secret).toMatchObject({ code: 0, stdout: 'secret/db created\n' });
  const stored = await c.admin.get('Secret', 'db', { namespace: 'default' });
  expect(stored.type).toBe('Opaque');
  expect(Buffer.from(stored.data!.password, 'base64').toString()).toBe('s3cret');
  const table = await c.run(['get', 'secrets']);
  expect(tableCells(table.stdout)[1].slice(0, 3)).toEqual(['db', 'Opaque', '2']);
  const twice = await c.run(['create', 'configmap', 'x', '--from-literal=a=1', '--from-literal=a=2']);
  expect(twice.stderr).toBe('error: cannot add key "a", another key by that name already exists\n');
});
