/**
 * Jobs: defaults, the generated selector and labels, and validation (Kubernetes' batch/v1 Job
 * strategy). Unless spec.manualSelector is set, a Job's pods are selected by its uid:
 * batch.kubernetes.io/controller-uid, with the job-name labels beside it.
 */
import { kindInfo } from '../../../client/api/kinds.js';
import type { Job, JobSpec } from '../../../client/api/types.js';
import { forbidden, invalid, required, type FieldError } from '../../../client/api/validation.js';
import { deepEqual } from '../../../client/util/objects.js';
import { validateEnum, validateMin } from '../validation/common.js';
import { validatePodTemplate, validateSelector } from '../validation/template.js';
import { applyPodSpecDefaults } from './pod.js';
import type { Strategy } from './strategy.js';

export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
const LEGACY_JOB_NAME_LABEL = 'job-name';

/** The selector and template labels of a Job that does not choose its own (generateSelector). */
function generateSelector(job: Job): void {
  const spec = (job.spec ??= {});
  if (spec.manualSelector) return;
  const uid = job.metadata!.uid!;
  const name = job.metadata?.name;
  const template = (spec.template ??= {});
  const meta = (template.metadata ??= {});
  meta.labels = {
    ...meta.labels,
    [CONTROLLER_UID_LABEL]: uid,
    [LEGACY_CONTROLLER_UID_LABEL]: uid,
    ...(name ? { [JOB_NAME_LABEL]: name, [LEGACY_JOB_NAME_LABEL]: name } : {}),
  };
  spec.selector ??= { matchLabels: { [CONTROLLER_UID_LABEL]: uid } };
}

export function applyJobSpecDefaults(spec: JobSpec): void {
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  applyPodSpecDefaults(((spec.template ??= {}).spec ??= {}));
}

/** A Job's spec at `prefix` ("spec" for a Job, "spec.jobTemplate.spec" for a CronJob). */
export function validateJobSpec(spec: JobSpec, prefix: string): FieldError[] {
  const errors = validatePodTemplate(spec.template, {
    restartPolicies: ['OnFailure', 'Never'],
    prefix: `${prefix}.template`,
  });
  // Unlike a pod's, a Job's template must say how its pods end.
  if (!spec.template?.spec?.restartPolicy)
    errors.push(
      required(
        `${prefix}.template.spec.restartPolicy`,
        'a Job runs pods to completion: use "OnFailure" or "Never"',
      ),
    );
  validateMin(spec.parallelism, `${prefix}.parallelism`, 0, errors);
  validateMin(spec.completions, `${prefix}.completions`, 0, errors);
  validateMin(spec.backoffLimit, `${prefix}.backoffLimit`, 0, errors);
  validateMin(spec.activeDeadlineSeconds, `${prefix}.activeDeadlineSeconds`, 1, errors);
  validateMin(spec.ttlSecondsAfterFinished, `${prefix}.ttlSecondsAfterFinished`, 0, errors);
  validateEnum(spec.completionMode, `${prefix}.completionMode`, ['NonIndexed', 'Indexed'], errors);
  if (spec.completionMode === 'Indexed' && spec.completions === undefined)
    errors.push(required(`${prefix}.completions`, 'when completion mode is Indexed'));
  return errors;
}

export const jobStrategy: Strategy<Job> = {
  info: kindInfo('Job'),
  nameRule: 'subdomain',
  tracksGeneration: true,
  prepareForCreate(job) {
    delete job.status;
    generateSelector(job);
  },
  applyDefaults(job) {
    applyJobSpecDefaults((job.spec ??= {}));
  },
  validate(job) {
    const spec = job.spec ?? {};
    const errors: FieldError[] = [];
    if (spec.manualSelector && !spec.selector)
      errors.push(required('spec.selector', 'when manualSelector is true'));
    errors.push(...validateSelector('job', spec.selector, spec.template?.metadata?.labels));
    errors.push(...validateJobSpec(spec, 'spec'));
    const st = job.status ?? {};
    for (const f of ['active', 'succeeded', 'failed', 'ready'] as const)
      validateMin(st[f], `status.${f}`, 0, errors);
    return errors;
  },
  validateUpdate(job, old) {
    const errors: FieldError[] = [];
    const immutable = (field: string, a: unknown, b: unknown) => {
      if (!deepEqual(a, b)) errors.push(invalid(field, a ?? null, 'field is immutable'));
    };
    immutable('spec.selector', job.spec?.selector, old.spec?.selector);
    immutable('spec.completions', job.spec?.completions, old.spec?.completions);
    immutable('spec.completionMode', job.spec?.completionMode, old.spec?.completionMode);
    // A template may change only while the Job is suspended and has never started, as in Kubernetes.
    if (!deepEqual(job.spec?.template, old.spec?.template) && !(old.spec?.suspend && !old.status?.startTime))
      errors.push(invalid('spec.template', '', 'field is immutable; delete the Job and create it again'));
    if (job.spec?.manualSelector !== old.spec?.manualSelector)
      errors.push(forbidden('spec.manualSelector', 'field is immutable'));
    return errors;
  },
};
