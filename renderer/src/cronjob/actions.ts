/** What the CronJob views do through the bridge: run one now, suspend or resume one. */
import type { CronJob, Job } from '../../../client/api/types.js';
import type { BridgeClient } from '../bridge/client.js';
import { runNowJob, suspendPatch } from './runnow.js';

/** Creates the Job "Run now" makes, and answers it as the server stored it. */
export function runNow(bridge: BridgeClient, cj: CronJob, nowMs = Date.now()): Promise<Job> {
  return bridge.request<Job>({ op: 'create', object: runNowJob(cj, nowMs) });
}

export function setSuspended(bridge: BridgeClient, cj: CronJob, suspend: boolean): Promise<CronJob> {
  return bridge.request<CronJob>({
    op: 'patch',
    kind: 'CronJob',
    name: cj.metadata!.name!,
    patch: suspendPatch(suspend),
    options: { namespace: cj.metadata?.namespace },
  });
}
