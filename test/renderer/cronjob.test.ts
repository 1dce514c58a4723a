/**
 * Jobs and CronJobs as the GUI shows and drives them: a Job's status, completions and duration
 * as decision tables; "Run now" — its name, and a Job made exactly as `labctl create job
 * --from=cronjob/NAME` makes it (checked against labctl itself on a real apiserver, through
 * the GUI's own bridge); suspend and resume; a CronJob's history, newest first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CronJob, Job } from '../../client/api/types.js';
import type { BridgeClient } from '../../renderer/src/bridge/client.js';
import { runNow, setSuspended } from '../../renderer/src/cronjob/actions.js';
import {
  historyOf,
  INSTANTIATE_ANNOTATION,
  manualJobName,
  MAX_NAME,
  runNowJob,
  suspendPatch,
  timeZoneText,
} from '../../renderer/src/cronjob/runnow.js';
import {
  completionsText,
  cronJobOwner,
  durationText,
  failure,
  jobState,
  podSummary,
  stateHealth,
} from '../../renderer/src/job/status.js';
import { cleanEnv, runLabctl, writeConfig } from '../cli/support.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { loopbackBridge } from './loopback.js';

const T0 = Date.parse('2026-05-01T10:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

const job = (status: Job['status'] = {}, spec: Job['spec'] = {}, meta: Job['metadata'] = {}): Job => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'backup', namespace: 'default', ...meta },
  spec: { completions: 1, parallelism: 1, ...spec },
  status,
});
const cond = (type: string, lastTransitionTime?: string, reason?: string) => ({
  type,
  status: 'True',
  lastTransitionTime,
  reason,
});

describe('a Job at a glance', () => {
  const states: Array<[string, Job, string, string | undefined]> = [
    ['no condition yet', job({ active: 1 }), 'Running', undefined],
    ['complete', job({ conditions: [cond('Complete')] }), 'Complete', 'good'],
    ['failed', job({ conditions: [cond('Failed')] }), 'Failed', 'bad'],
    ['suspended', job({ conditions: [cond('Suspended')] }), 'Suspended', 'warn'],
    [
      'a condition that no longer holds',
      job({ conditions: [{ type: 'Suspended', status: 'False' }] }),
      'Running',
      undefined,
    ],
    ['being deleted', job({ active: 1 }, {}, { deletionTimestamp: at(0) }), 'Terminating', 'warn'],
    [
      'finished, then deleted',
      job({ conditions: [cond('Complete')] }, {}, { deletionTimestamp: at(0) }),
      'Complete',
      'good',
    ],
  ];
  it.each(states)('status: %s', (_what, j, state, health) => {
    expect(jobState(j)).toBe(state);
    expect(stateHealth(jobState(j))).toBe(health);
  });

  it('counts completions as kubectl get jobs does', () => {
    expect(completionsText(job({ succeeded: 2 }, { completions: 3 }))).toBe('2/3');
    expect(completionsText(job({}, { completions: undefined, parallelism: 1 }))).toBe('0/1');
    expect(completionsText(job({ succeeded: 1 }, { completions: undefined, parallelism: 4 }))).toBe(
      '1/1 of 4',
    );
  });

  it('measures how long it ran: to completion, to failure, or until now', () => {
    const now = T0 + 3_600_000;
    const table: Array<[Job, string]> = [
      [job(), '—'],
      [job({ startTime: at(0), completionTime: at(75) }), '75s'],
      [job({ startTime: at(0), completionTime: at(310) }), '5m10s'],
      [job({ startTime: at(0), conditions: [cond('Failed', at(42), 'BackoffLimitExceeded')] }), '42s'],
      [job({ startTime: at(0), active: 1 }), '60m'],
    ];
    for (const [j, text] of table) expect(durationText(j, now)).toBe(text);
  });

  it('says what its pods did, why it failed, and which CronJob made it', () => {
    expect(podSummary(job())).toBe('no pods');
    expect(podSummary(job({ active: 1 }))).toBe('1 active');
    expect(podSummary(job({ succeeded: 3, failed: 1 }))).toBe('3 succeeded, 1 failed');
    const failed = job({
      conditions: [
        { ...cond('Failed', at(1), 'DeadlineExceeded'), message: 'Job was active longer than allowed' },
      ],
    });
    expect(failure(failed)).toEqual({
      reason: 'DeadlineExceeded',
      message: 'Job was active longer than allowed',
    });
    expect(failure(job())).toBeUndefined();
    const owned = job(
      {},
      {},
      {
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Pod', name: 'not-a-controller', uid: 'x' },
          { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'cj', controller: true },
        ],
      },
    );
    expect(cronJobOwner(owned)).toBe('nightly');
    expect(cronJobOwner(job())).toBeUndefined();
  });
});

describe('run now', () => {
  it('names the Job <cronjob>-manual-<unix seconds>, never past 63 characters', () => {
    expect(manualJobName('nightly', T0 + 999)).toBe(`nightly-manual-${T0 / 1000}`);
    // A CronJob may be 52 characters long: the seconds survive, so each run has a name of its own.
    const long = 'a'.repeat(52);
    const name = manualJobName(long, T0);
    expect(name).toHaveLength(MAX_NAME);
    expect(name).toBe(`${'a'.repeat(63 - 18)}-manual-${T0 / 1000}`);
    expect(manualJobName(long, T0 + 1000)).not.toBe(name);
    // What is cut never leaves a dash or dot before the suffix.
    const dashed = `${'b'.repeat(44)}-.x${'c'.repeat(5)}`;
    expect(manualJobName(dashed, T0)).toBe(`${'b'.repeat(44)}-manual-${T0 / 1000}`);
  });

  it('copies the template, marks the Job manual and makes the CronJob its controller', () => {
    const cj: CronJob = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly', namespace: 'lab', uid: 'cj-uid' },
      spec: {
        schedule: '0 3 * * *',
        jobTemplate: {
          metadata: { labels: { app: 'backup' }, annotations: { note: 'x' } },
          spec: { backoffLimit: 2, template: { spec: { containers: [{ name: 'c', image: 'restic' }] } } },
        },
      },
    };
    const made = runNowJob(cj, T0);
    expect(made).toEqual({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: `nightly-manual-${T0 / 1000}`,
        namespace: 'lab',
        labels: { app: 'backup' },
        annotations: { note: 'x', [INSTANTIATE_ANNOTATION]: 'manual' },
        ownerReferences: [
          { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'cj-uid', controller: true },
        ],
      },
      spec: cj.spec!.jobTemplate!.spec,
    });
    // A copy: editing the Job leaves the CronJob as it was.
    made.spec!.backoffLimit = 9;
    expect(cj.spec!.jobTemplate!.spec!.backoffLimit).toBe(2);
  });

  it('suspends and resumes with a merge patch; the time zone defaults to the control plane’s', () => {
    expect(suspendPatch(true)).toEqual({ spec: { suspend: true } });
    expect(suspendPatch(false)).toEqual({ spec: { suspend: false } });
    expect(timeZoneText({ spec: { timeZone: 'Europe/Berlin' } })).toBe('Europe/Berlin');
    expect(timeZoneText({ spec: {} })).toBe("the control plane's");
  });
});

describe('history', () => {
  it("lists the CronJob's own Jobs, newest first, with outcome, duration and trigger", () => {
    const cj: CronJob = { metadata: { name: 'nightly', namespace: 'default', uid: 'cj-uid' } };
    const owned = (name: string, created: number, status: Job['status'], manual = false): Job =>
      job(
        status,
        {},
        {
          name,
          creationTimestamp: at(created),
          annotations: manual ? { [INSTANTIATE_ANNOTATION]: 'manual' } : {},
          ownerReferences: [
            { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'cj-uid', controller: true },
          ],
        },
      );
    const jobs = [
      owned('nightly-1', 0, { startTime: at(0), completionTime: at(30), conditions: [cond('Complete')] }),
      owned('nightly-3', 120, { startTime: at(121), active: 1 }),
      owned('nightly-manual-2', 60, { startTime: at(60), conditions: [cond('Failed', at(65))] }, true),
      {
        ...owned('elsewhere', 200, {}),
        metadata: { ...owned('elsewhere', 200, {}).metadata, namespace: 'other' },
      },
      job({}, {}, { name: 'unowned', creationTimestamp: at(300) }),
    ];
    const rows = historyOf(cj, jobs, T0 + 181_000);
    expect(rows.map((r) => [r.name, r.state, r.health, r.duration, r.manual, r.started])).toEqual([
      ['nightly-3', 'Running', undefined, '60s', false, at(121)],
      ['nightly-manual-2', 'Failed', 'bad', '5s', true, at(60)],
      ['nightly-1', 'Complete', 'good', '30s', false, at(0)],
    ]);
  });
});

describe('against the apiserver, through the GUI bridge', () => {
  let t: TestControlPlane;
  let bridge: BridgeClient;
  let home: string;
  const nightly: CronJob = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'nightly', namespace: 'default' },
    spec: {
      schedule: '0 3 * * *',
      jobTemplate: {
        metadata: { labels: { app: 'backup' }, annotations: { 'lab/owner': 'ops' } },
        spec: {
          backoffLimit: 2,
          template: {
            metadata: { labels: { app: 'backup' } },
            spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'restic:1' }] },
          },
        },
      },
    },
  };

  beforeAll(async () => {
    t = await startTestControlPlane({ controllers: false });
    ({ bridge } = loopbackBridge(t));
    home = mkdtempSync(join(tmpdir(), 'gui-cronjob-'));
    writeConfig(home, `https://127.0.0.1:${t.cp.port}`, t.caPem, t.cp.adminToken);
  });
  afterAll(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('Run now makes the Job labctl create job --from makes', async () => {
    const admin = t.cp.client();
    const cj = await admin.create(nightly);
    const fromGui = await runNow(bridge, cj, T0);
    expect(fromGui.metadata?.name).toBe(`nightly-manual-${T0 / 1000}`);
    const cli = await runLabctl(
      ['create', 'job', 'from-cli', '--from=cronjob/nightly', '-n', 'default'],
      cleanEnv(home),
    );
    expect(cli).toMatchObject({ code: 0, stdout: 'job.batch/from-cli created\n' });
    const fromCli = await admin.get('Job', 'from-cli', { namespace: 'default' });

    // Alike but for what names each Job: its name, uid, and the selector made from its uid.
    const shape = (j: Job) => {
      const {
        name: _n,
        uid: _u,
        resourceVersion: _r,
        creationTimestamp: _c,
        managedFields: _m,
        generation: _g,
        labels,
        ...meta
      } = j.metadata!;
      const { selector: _s, template, ...spec } = j.spec!;
      const own = (l: Record<string, string> = {}) =>
        Object.fromEntries(Object.entries(l).filter(([k]) => !/(^|\/)(controller-uid|job-name)$/.test(k)));
      return {
        meta: { ...meta, labels: own(labels) },
        spec,
        template: {
          ...template,
          metadata: { ...template?.metadata, labels: own(template?.metadata?.labels) },
        },
      };
    };
    expect(shape(fromGui)).toEqual(shape(fromCli));
    expect(fromGui.metadata?.ownerReferences).toEqual([
      { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: cj.metadata?.uid, controller: true },
    ]);
    expect(fromGui.metadata?.annotations).toEqual({ 'lab/owner': 'ops', [INSTANTIATE_ANNOTATION]: 'manual' });
    expect(fromGui.metadata?.labels).toMatchObject({ app: 'backup' });
  }, 60_000);

  it('suspends and resumes a CronJob', async () => {
    const cj = await t.cp.client().get('CronJob', 'nightly', { namespace: 'default' });
    expect((await setSuspended(bridge, cj, true)).spec?.suspend).toBe(true);
    expect((await setSuspended(bridge, cj, false)).spec?.suspend).toBe(false);
  });
});
