/**
 * The real kubectl with Deployments, Jobs and CronJobs on a kubelab cluster of hollow nodes, as
 * a Kubernetes user works: `create deployment|cronjob|job` (protobuf from kubectl 1.31 on), `create
 * job --from=cronjob/…`, get, `scale` through the scale
 * subresource (a merge patch, and a PUT with --current-replicas), `set image`, `rollout
 * status|history|undo|restart|pause|resume`, describe — asserting on what kubectl prints and on
 * the cluster's state.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventually } from '../support/wait.js';
import { startCliCluster, type CliCluster } from '../cli/support.js';
import { checkKubectls, KUBECTLS, kubectlRunner, mergedKubeconfig, type Kubectl } from './support.js';

vi.setConfig({ testTimeout: 120_000 });

let c: CliCluster;
let kubectl: Kubectl;

beforeAll(async () => {
  checkKubectls();
  c = await startCliCluster({ hollowNodes: 2, prefix: 'kw' });
  kubectl = kubectlRunner(c, await mergedKubeconfig(c));
}, 90_000);

afterAll(async () => {
  await c?.close();
});

describe.each(KUBECTLS.map((k) => k.minor))('kubectl %s', (minor) => {
  const name = `web-${minor.replace('.', '-')}`;
  const run = (args: string[]) => kubectl(args, { minor });
  const deployment = () => c.admin.get('Deployment', name, { namespace: 'default' });

  it('creates a Deployment with its generator and waits for its rollout', async () => {
    const created = await run(['create', 'deployment', name, '--image=nginx:1', '--replicas=2', '--port=80']);
    expect(created, created.stderr).toMatchObject({ code: 0, stdout: `deployment.apps/${name} created\n` });
    const status = await run(['rollout', 'status', `deployment/${name}`, '--timeout=60s']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`deployment "${name}" successfully rolled out\\n$`));
    const d = await deployment();
    expect(d.spec?.template?.spec?.containers?.[0]).toMatchObject({
      name: 'nginx',
      image: 'nginx:1',
      ports: [{ containerPort: 80, protocol: 'TCP' }],
    });
    const table = await run(['get', 'deployment', name]);
    expect(table.stdout.split('\n')[0].split(/\s{2,}/)).toEqual([
      'NAME',
      'READY',
      'UP-TO-DATE',
      'AVAILABLE',
      'AGE',
    ]);
    expect(table.stdout.split('\n')[1].split(/\s+/).slice(0, 4)).toEqual([name, '2/2', '2', '2']);
    const rs = await run(['get', 'rs', '-l', `app=${name}`, '-o', 'name']);
    expect(rs.stdout).toMatch(new RegExp(`^replicaset.apps/${name}-[a-z0-9]+\\n$`));
  });

  it('scales through the scale subresource, with and without a precondition', async () => {
    expect((await run(['scale', `deployment/${name}`, '--replicas=3'])).stdout).toBe(
      `deployment.apps/${name} scaled\n`,
    );
    expect((await deployment()).spec?.replicas).toBe(3);
    const refused = await run(['scale', `deployment/${name}`, '--replicas=1', '--current-replicas=2']);
    expect(refused).toMatchObject({ code: 1, stderr: 'error: Expected replicas to be 2, was 3\n' });
    expect((await run(['scale', `deployment/${name}`, '--replicas=2', '--current-replicas=3'])).code).toBe(0);
    expect((await deployment()).spec?.replicas).toBe(2);
    const scale = await run(['get', '--raw', `/apis/apps/v1/namespaces/default/deployments/${name}/scale`]);
    expect(JSON.parse(scale.stdout)).toMatchObject({
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      spec: { replicas: 2 },
      status: { selector: `app=${name}` },
    });
  });

  it('rolls out a new image, shows the history, undoes it, restarts, pauses and resumes', async () => {
    expect((await run(['set', 'image', `deployment/${name}`, 'nginx=nginx:2'])).stdout).toBe(
      `deployment.apps/${name} image updated\n`,
    );
    expect((await run(['rollout', 'status', `deployment/${name}`, '--timeout=60s'])).code).toBe(0);
    const history = await run(['rollout', 'history', `deployment/${name}`]);
    expect(history.stdout).toBe(
      `deployment.apps/${name} \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n`,
    );
    expect((await run(['rollout', 'undo', `deployment/${name}`])).stdout).toBe(
      `deployment.apps/${name} rolled back\n`,
    );
    expect((await deployment()).spec?.template?.spec?.containers?.[0]?.image).toBe('nginx:1');
    expect((await run(['rollout', 'status', `deployment/${name}`, '--timeout=60s'])).code).toBe(0);
    const rss = (await c.admin.list('ReplicaSet', { namespace: 'default', labelSelector: `app=${name}` }))
      .items;
    expect(rss.map((rs) => rs.metadata?.annotations?.['deployment.kubernetes.io/revision']).sort()).toEqual([
      '2',
      '3',
    ]);

    expect((await run(['rollout', 'restart', `deployment/${name}`])).stdout).toBe(
      `deployment.apps/${name} restarted\n`,
    );
    expect((await run(['rollout', 'status', `deployment/${name}`, '--timeout=60s'])).code).toBe(0);
    expect((await run(['rollout', 'pause', `deployment/${name}`])).stdout).toBe(
      `deployment.apps/${name} paused\n`,
    );
    await eventually(
      async () =>
        (await deployment()).status?.conditions?.some((x) => x.reason === 'DeploymentPaused') ?? false,
      'the paused condition',
    );
    expect((await run(['rollout', 'resume', `deployment/${name}`])).stdout).toBe(
      `deployment.apps/${name} resumed\n`,
    );
    const described = await run(['describe', 'deployment', name]);
    expect(described.stdout).toMatch(
      /Replicas:\s+2 desired \| 2 updated \| 2 total \| 2 available \| 0 unavailable/,
    );
    expect(described.stdout).toMatch(/NewReplicaSet:\s+web-[\w-]+ \(2\/2 replicas created\)/);
    expect(described.stdout).toMatch(/ScalingReplicaSet\s+.*deployment-controller\s+Scaled up replica set/);
  });

  it('creates a CronJob and Jobs with its generators (protobuf), one from the CronJob, and runs them', async () => {
    const cj = `nightly-${minor.replace('.', '-')}`;
    const created = await run([
      'create',
      'cronjob',
      cj,
      '--image=restic:1',
      '--schedule=0 3 * * *',
      '--',
      'restic',
      'backup',
    ]);
    expect(created, created.stderr).toMatchObject({ code: 0, stdout: `cronjob.batch/${cj} created\n` });
    const table = await run(['get', 'cronjob', cj]);
    expect(table.stdout.split('\n')[0].split(/\s{2,}/)).toEqual([
      'NAME',
      'SCHEDULE',
      'TIMEZONE',
      'SUSPEND',
      'ACTIVE',
      'LAST SCHEDULE',
      'AGE',
    ]);
    expect(
      table.stdout
        .split('\n')[1]
        .split(/\s{2,}/)
        .slice(0, 6),
    ).toEqual([cj, '0 3 * * *', '<none>', 'False', '0', '<none>']);
    const now = await run(['create', 'job', `${cj}-now`, `--from=cronjob/${cj}`]);
    expect(now, now.stderr).toMatchObject({ code: 0, stdout: `job.batch/${cj}-now created\n` });
    const job = await c.admin.get('Job', `${cj}-now`, { namespace: 'default' });
    expect(job.metadata?.annotations?.['cronjob.kubernetes.io/instantiate']).toBe('manual');
    expect(job.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'CronJob', name: cj });
    expect(job.spec?.template?.spec?.containers?.[0]).toMatchObject({
      image: 'restic:1',
      command: ['restic', 'backup'],
    });
    const hello = `hello-${minor.replace('.', '-')}`;
    expect((await run(['create', 'job', hello, '--image=busybox', '--', 'echo', 'hi'])).code).toBe(0);
    // Hollow containers run until stopped: the Jobs are Running with their one pod.
    await eventually(
      async () => (await c.admin.get('Job', hello, { namespace: 'default' })).status?.active === 1,
      'the Job to run its pod',
    );
    const jobs = await run(['get', 'job', hello]);
    expect(jobs.stdout.split('\n')[0].split(/\s{2,}/)).toEqual([
      'NAME',
      'STATUS',
      'COMPLETIONS',
      'DURATION',
      'AGE',
    ]);
    expect(jobs.stdout.split('\n')[1].split(/\s+/).slice(0, 3)).toEqual([hello, 'Running', '0/1']);
  });

  it('deletes the Deployment and, through the garbage collector, its ReplicaSets and pods', async () => {
    expect((await run(['delete', 'deployment', name])).code).toBe(0);
    await eventually(
      async () =>
        (await c.admin.list('Pod', { namespace: 'default', labelSelector: `app=${name}` })).items.length ===
        0,
      'the pods to go',
    );
    expect(
      (await c.admin.list('ReplicaSet', { namespace: 'default', labelSelector: `app=${name}` })).items,
    ).toEqual([]);
  });
});
