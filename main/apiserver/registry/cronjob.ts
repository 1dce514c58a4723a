/** CronJobs: defaults and validation (Kubernetes' batch/v1 CronJob strategy). */
import { isTimeZone, scheduleError } from '../../../client/api/cron.js';
import { kindInfo } from '../../../client/api/kinds.js';
import type { CronJob } from '../../../client/api/types.js';
import { invalid, required, type FieldError } from '../../../client/api/validation.js';
import { validateEnum, validateMin } from '../validation/common.js';
import { applyJobSpecDefaults, validateJobSpec } from './job.js';
import type { Strategy } from './strategy.js';

/** Its Jobs are named NAME-<minutes since the epoch>: 11 characters more, within 63. */
const MAX_NAME = 52;

export const cronJobStrategy: Strategy<CronJob> = {
  info: kindInfo('CronJob'),
  nameRule: 'subdomain',
  tracksGeneration: true,
  prepareForCreate(cj) {
    delete cj.status;
  },
  applyDefaults(cj) {
    const spec = (cj.spec ??= {});
    spec.concurrencyPolicy ??= 'Allow';
    spec.suspend ??= false;
    spec.successfulJobsHistoryLimit ??= 3;
    spec.failedJobsHistoryLimit ??= 1;
    applyJobSpecDefaults(((spec.jobTemplate ??= {}).spec ??= {}));
  },
  validate(cj) {
    const spec = cj.spec ?? {};
    const errors: FieldError[] = [];
    const name = cj.metadata?.name ?? '';
    if (name.length > MAX_NAME)
      errors.push(invalid('metadata.name', name, `must be no more than ${MAX_NAME} characters`));
    if (!spec.schedule)
      errors.push(required('spec.schedule', 'e.g. "0 3 * * *" (03:00 every day) or "@daily"'));
    else {
      const why = scheduleError(
        spec.schedule,
        isTimeZone(spec.timeZone ?? 'UTC') ? spec.timeZone : undefined,
      );
      if (why) errors.push(invalid('spec.schedule', spec.schedule, why));
    }
    if (spec.timeZone !== undefined && !isTimeZone(spec.timeZone))
      errors.push(
        invalid(
          'spec.timeZone',
          spec.timeZone,
          'unknown time zone; use an IANA name such as "Europe/Berlin" or "UTC"',
        ),
      );
    validateEnum(
      spec.concurrencyPolicy,
      'spec.concurrencyPolicy',
      ['Allow', 'Forbid', 'Replace'],
      errors,
      false,
    );
    validateMin(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds', 0, errors);
    validateMin(spec.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit', 0, errors);
    validateMin(spec.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit', 0, errors);
    const jobSpec = spec.jobTemplate?.spec ?? {};
    if (jobSpec.selector && !jobSpec.manualSelector)
      errors.push(
        invalid('spec.jobTemplate.spec.selector', jobSpec.selector, '`selector` will be auto-generated'),
      );
    errors.push(...validateJobSpec(jobSpec, 'spec.jobTemplate.spec'));
    return errors;
  },
};
