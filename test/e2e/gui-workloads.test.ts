/**
 * Deployments, Jobs and CronJobs in headless Chromium against browser mode on a real control
 * plane with hollow agents: a Deployment made through the API shows READY 2/2, is scaled to 3
 * from its page (a negative or fractional size is refused there, with the reason), restarted,
 * rolled back to its first revision, paused and resumed; a CronJob is suspended and resumed
 * from the list, and "Run now" makes a Job the CronJob owns, which runs to completion and shows
 * in its history and in the Jobs list. Screenshots go to test-artifacts/.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CronJob, Deployment, Job } from '../../client/api/types.js';
import { eventually } from '../support/wait.js';
import { startGui, type Gui } from './support.js';

let gui: Gui;

beforeAll(async () => {
  gui = await startGui();
  await gui.startFleet('wl', 2);
  await gui.page.click('[data-view="nodes"]');
  await eventually(
    async () => (await gui.text('[data-node="wl-1"] [data-col="status"]')) === 'Ready',
    'wl-1 Ready',
    60_000,
  );
}, 90_000);

afterAll(async () => {
  await gui?.close();
});

const getDeployment = () =>
  gui.admin.get('Deployment', 'web', { namespace: 'default' }) as Promise<Deployment>;

it('shows a Deployment READY 2/2 and scales it to 3 from its page', async () => {
  const { page, text, admin } = gui;
  await admin.create<Deployment>({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'nginx:1' }] },
      },
    },
  });
  await page.click('[data-view="deployments"]');
  await expect
    .poll(() => text('[data-deployment="web"] [data-col="ready"]'), { timeout: 60_000 })
    .toBe('2/2');
  await expect.poll(() => text('[data-deployment="web"] [data-col="updated"]')).toBe('2');
  await expect
    .poll(() => text('[data-deployment="web"] [data-col="rollout"]'), { timeout: 30_000 })
    .toBe('done');
  await gui.shot('deployments');

  await page.click('[data-deployment="web"] [data-col="name"] button');
  await expect.poll(() => text('[data-testid="deployment-page"] h2')).toContain('web');
  await expect
    .poll(() => text('[data-testid="rollout-text"]'), { timeout: 30_000 })
    .toBe('deployment "web" successfully rolled out');
  const revisions = () =>
    page
      .locator('[data-testid="history"] [data-revision]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-revision')));
  await expect.poll(revisions, { timeout: 30_000 }).toEqual(['1']);
  await expect.poll(() => text('[data-revision="1"] [data-col="pods"]')).toContain('2/2');
  await expect.poll(() => page.locator('[data-testid="deployment-pods"] [data-pod]').count()).toBe(2);
  await expect.poll(() => text('[data-condition="Available"] [data-col="status"]')).toBe('True');

  // What is not a size is refused in the page, and nothing is sent.
  const replicas = page.locator('input[name="replicas"]');
  await replicas.fill('-1');
  await page.click('[data-testid="scale"] button[type="submit"]');
  await expect.poll(() => text('[data-testid="scale-error"]')).toContain('-1 is negative');
  expect(await replicas.getAttribute('aria-invalid')).toBe('true');
  await replicas.fill('2.5');
  await page.click('[data-testid="scale"] button[type="submit"]');
  await expect.poll(() => text('[data-testid="scale-error"]')).toContain('2.5 is not a whole number');
  expect((await getDeployment()).spec?.replicas).toBe(2);

  await replicas.fill('3');
  await page.click('[data-testid="scale"] button[type="submit"]');
  await expect.poll(async () => (await getDeployment()).spec?.replicas, { timeout: 10_000 }).toBe(3);
  expect(await page.locator('[data-testid="scale-error"]').count()).toBe(0);
  await expect.poll(() => text('[data-count="ready"]'), { timeout: 60_000 }).toBe('3');
  await expect.poll(() => page.locator('[data-testid="deployment-pods"] [data-pod]').count()).toBe(3);
  await gui.shot('deployment');
  await page.click('[data-view="deployments"]');
  await expect
    .poll(() => text('[data-deployment="web"] [data-col="ready"]'), { timeout: 30_000 })
    .toBe('3/3');
}, 150_000);

it('restarts the Deployment, rolls it back to its first revision, and pauses and resumes it', async () => {
  const { page, text } = gui;
  await page.click('[data-deployment="web"] [data-col="name"] button');
  await expect.poll(() => text('[data-testid="deployment-page"] h2')).toContain('web');
  const revisions = () =>
    page
      .locator('[data-testid="history"] [data-revision]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-revision')));
  const podRevisions = () =>
    page
      .locator('[data-testid="deployment-pods"] [data-col="revision"]')
      .evaluateAll((cells) => cells.map((c) => c.textContent?.trim()));

  await page.click('[data-testid="restart"]');
  await expect
    .poll(async () => (await getDeployment()).spec?.template?.metadata?.annotations ?? {})
    .toHaveProperty(['kubectl.kubernetes.io/restartedAt']);
  await expect.poll(revisions, { timeout: 30_000 }).toEqual(['2', '1']);
  await expect.poll(podRevisions, { timeout: 90_000 }).toEqual(['2', '2', '2']);
  await expect.poll(() => text('[data-testid="rollout-chip"]'), { timeout: 30_000 }).toBe('rolled out');
  expect(await text('[data-revision="2"]')).toContain('current');

  await page.click('[data-revision="1"] [data-testid="rollback"]');
  await expect
    .poll(async () => (await getDeployment()).spec?.template?.metadata?.annotations ?? {})
    .toEqual({});
  // As in Kubernetes: the old ReplicaSet is the newest again, numbered 3.
  await expect.poll(revisions, { timeout: 30_000 }).toEqual(['3', '2']);
  await expect.poll(podRevisions, { timeout: 90_000 }).toEqual(['3', '3', '3']);
  await expect.poll(() => text('[data-testid="rollout-chip"]'), { timeout: 30_000 }).toBe('rolled out');
  expect(await text('[data-revision="3"]')).toContain('current');

  await page.click('[data-testid="pause"]');
  await expect.poll(async () => (await getDeployment()).spec?.paused).toBe(true);
  await expect.poll(() => page.locator('[data-testid="paused-chip"]').count()).toBe(1);
  expect(await page.locator('[data-testid="restart"]').isDisabled()).toBe(true);
  await gui.shot('deployment-paused');
  await page.click('[data-testid="resume"]');
  await expect.poll(async () => (await getDeployment()).spec?.paused).toBe(false);
  await expect.poll(() => page.locator('[data-testid="paused-chip"]').count()).toBe(0);
}, 240_000);

it('suspends and resumes a CronJob from the list, and Run now starts a Job it owns', async () => {
  const { page, text, admin } = gui;
  const cj = await admin.create<CronJob>({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'nightly', namespace: 'default' },
    spec: {
      // Once a day (a schedule further off than 24.8 days overflows the controller's timer):
      // the test counts only the Jobs run by hand, should 03:00 in Berlin come meanwhile.
      schedule: '0 3 * * *',
      timeZone: 'Europe/Berlin',
      jobTemplate: {
        metadata: { labels: { app: 'backup' } },
        spec: {
          backoffLimit: 1,
          template: {
            metadata: { labels: { app: 'backup' } },
            spec: {
              restartPolicy: 'Never',
              // A hollow container that runs a second and exits 0.
              containers: [
                {
                  name: 'backup',
                  image: 'restic:1',
                  env: [{ name: 'KUBELAB_HOLLOW_RUN_SECONDS', value: '1' }],
                },
              ],
            },
          },
        },
      },
    },
  });
  await page.click('[data-view="cronjobs"]');
  await expect.poll(() => text('[data-cronjob="nightly"] [data-col="schedule"]')).toBe('0 3 * * *');
  expect(await text('[data-cronjob="nightly"] [data-col="timezone"]')).toBe('Europe/Berlin');
  expect(await text('[data-cronjob="nightly"] [data-col="suspend"]')).toBe('No');

  const suspended = async () =>
    (await admin.get('CronJob', 'nightly', { namespace: 'default' })).spec?.suspend;
  await page.click('[data-cronjob="nightly"] [data-testid="toggle-suspend"]');
  await expect.poll(suspended).toBe(true);
  await expect.poll(() => text('[data-cronjob="nightly"] [data-col="suspend"]')).toBe('Yes');
  await page.click('[data-cronjob="nightly"] [data-testid="toggle-suspend"]');
  await expect.poll(suspended).toBe(false);
  await expect.poll(() => text('[data-cronjob="nightly"] [data-col="suspend"]')).toBe('No');

  await page.click('[data-cronjob="nightly"] [data-col="name"] button');
  await expect.poll(() => text('[data-testid="cronjob-page"] h2')).toContain('nightly');
  expect(await text('[data-fact="timezone"]')).toBe('Europe/Berlin');
  const before = Math.floor(Date.now() / 1000);
  await page.click('[data-testid="run-now"]');
  const owned = async () =>
    (await admin.list('Job', { namespace: 'default' })).items.filter(
      (j: Job) =>
        j.metadata?.name?.startsWith('nightly-manual-') &&
        j.metadata.ownerReferences?.some(
          (o) => o.controller && o.kind === 'CronJob' && o.uid === cj.metadata?.uid,
        ),
    );
  await expect.poll(async () => (await owned()).length, { timeout: 10_000 }).toBe(1);
  const [job] = await owned();
  const seconds = Number(/^nightly-manual-(\d+)$/.exec(job.metadata!.name!)?.[1]);
  expect(seconds).toBeGreaterThanOrEqual(before);
  expect(seconds).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
  expect(job.metadata?.annotations?.['cronjob.kubernetes.io/instantiate']).toBe('manual');
  expect(job.metadata?.labels).toMatchObject({ app: 'backup' });
  await expect.poll(() => text('[data-testid="notice"]')).toBe(`Started Job ${job.metadata?.name}.`);

  // It shows in the history, runs to completion there, and is marked as run by hand.
  const row = `[data-testid="cronjob-history"] [data-job="${job.metadata?.name}"]`;
  await expect.poll(() => text(`${row} [data-col="trigger"]`)).toBe('manual');
  await expect.poll(() => text(`${row} [data-col="outcome"]`), { timeout: 60_000 }).toBe('Complete');
  await expect.poll(() => text(`${row} [data-col="duration"]`)).toMatch(/^\d+s$/);
  await gui.shot('cronjob');

  await page.click(`${row} button`);
  await expect.poll(() => text('[data-testid="job-page"] h2')).toContain(job.metadata!.name!);
  expect(await text('[data-testid="job-state"]')).toBe('Complete');
  await expect.poll(() => text('[data-fact="completions"]')).toBe('1/1');
  await expect.poll(() => page.locator('[data-testid="job-pods"] [data-pod]').count()).toBe(1);
  expect(await text('[data-testid="owner"]')).toBe('CronJob nightly');
  await gui.shot('job');

  await page.click('[data-view="jobs"]');
  await expect.poll(() => text(`[data-job="${job.metadata?.name}"] [data-col="status"]`)).toBe('Complete');
  await expect.poll(() => text(`[data-job="${job.metadata?.name}"] [data-col="completions"]`)).toBe('1/1');
  expect(await text(`[data-job="${job.metadata?.name}"] [data-col="owner"]`)).toBe('nightly');
  await gui.shot('jobs');
}, 150_000);
