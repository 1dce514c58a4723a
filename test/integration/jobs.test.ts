/**
 * Jobs inside a real control plane with the real scheduler and hollow nodes whose containers
 * exit when told (KUBELAB_HOLLOW_RUN_SECONDS / KUBELAB_HOLLOW_EXIT_CODE): a Job runs its pods
 * to completion and counts each once; a Job whose pods fail stops at backoffLimit with
 * BackoffLimitExceeded; ttlSecondsAfterFinished deletes a finished Job with its pods.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../agent/config.js';
import { HollowFleet } from '../../agent/hollow.js';
import { quietLogger } from '../../agent/logger.js';
import { HOLLOW_EXIT_CODE_ENV, HOLLOW_RUN_SECONDS_ENV } from '../../agent/runtime/hollow.js';
import { isNotFound } from '../../client/api/errors.js';
import type { Job } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { createJoinToken } from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

let t: TestControlPlane;
let admin: Client;
let dir: string;
let fleet: HollowFleet;

beforeAll(async () => {
  t = await startTestControlPlane();
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-jobs-'));
  fleet = new HollowFleet({
    count: 3,
    prefix: 'jb',
    servers: [`https://127.0.0.1:${t.cp.port}`],
    dataDir: join(dir, 'fleet'),
    joinToken: await createJoinToken(t),
    config: (name) => defaultConfig(name),
    logger: quietLogger(),
    spreadMs: 50,
  });
  await fleet.start();
  await eventually(
    async () =>
      (await admin.list('Node')).items.filter((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length === 3,
    'the hollow nodes to be Ready',
  );
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

function job(
  name: string,
  spec: Partial<NonNullable<Job['spec']>>,
  runSeconds: number,
  exitCode: number,
): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default' },
    spec: {
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'work',
              image: 'work:1',
              env: [
                { name: HOLLOW_RUN_SECONDS_ENV, value: String(runSeconds) },
                { name: HOLLOW_EXIT_CODE_ENV, value: String(exitCode) },
              ],
            },
          ],
        },
      },
      ...spec,
    },
  };
}

const get = (name: string) => admin.get('Job', name, { namespace: 'default' });
const condition = async (name: string, type: string) =>
  (await get(name)).status?.conditions?.find((c) => c.type === type && c.status === 'True');
const podsOf = async (name: string) =>
  (await admin.list('Pod', { namespace: 'default', labelSelector: `batch.kubernetes.io/job-name=${name}` }))
    .items;

it('runs its pods to completion, parallelism at a time, and counts each exactly once', async () => {
  await admin.create(job('count', { completions: 4, parallelism: 2 }, 1, 0));
  await eventually(async () => !!(await condition('count', 'Complete')), 'the Job to complete', 60_000);
  const st = (await get('count')).status!;
  expect(st).toMatchObject({ succeeded: 4, failed: 0 });
  expect(st.uncountedTerminatedPods?.succeeded ?? []).toEqual([]);
  const pods = await podsOf('count');
  expect(pods.filter((p) => p.status?.phase === 'Succeeded')).toHaveLength(4);
  expect(pods.every((p) => !p.metadata?.finalizers?.length)).toBe(true);
}, 90_000);

it('stops at backoffLimit when its pods fail, with BackoffLimitExceeded', async () => {
  await admin.create(job('flaky', { backoffLimit: 1 }, 0, 3));
  await eventually(async () => !!(await condition('flaky', 'Failed')), 'the Job to fail', 60_000);
  expect(await condition('flaky', 'Failed')).toMatchObject({
    reason: 'BackoffLimitExceeded',
    message: 'Job has reached the specified backoff limit',
  });
  expect((await get('flaky')).status).toMatchObject({ failed: 2 });
  // No pod after the failure, and none left running.
  await new Promise((r) => setTimeout(r, 1_000));
  const pods = await podsOf('flaky');
  expect(pods).toHaveLength(2);
  expect(pods.every((p) => p.status?.phase === 'Failed')).toBe(true);
}, 90_000);

it('deletes a finished Job and its pods after ttlSecondsAfterFinished', async () => {
  await admin.create(job('brief', { ttlSecondsAfterFinished: 1 }, 0, 0));
  await eventually(
    async () => {
      try {
        await get('brief');
        return false;
      } catch (err) {
        return isNotFound(err);
      }
    },
    'the Job to be deleted',
    60_000,
  );
  await eventually(async () => (await podsOf('brief')).length === 0, 'its pods to be deleted');
}, 90_000);
