/**
 * Creates in "slow start" batches (syncNodes): 1, then 2, 4, … at once, stopping after a batch
 * with a failure — so a DaemonSet whose pods are all refused (a quota, a bad template) costs
 * one failed request, not hundreds, and one event, not hundreds.
 */
export const SLOW_START_INITIAL_BATCH_SIZE = 1;

export interface SlowStartResult {
  /** The size of each batch tried. */
  batches: number[];
  errors: Error[];
  /** Creates never tried because a batch failed. */
  skipped: number;
}

export async function slowStartBatches(
  count: number,
  create: (index: number) => Promise<void>,
  initialBatchSize = SLOW_START_INITIAL_BATCH_SIZE,
): Promise<SlowStartResult> {
  const result: SlowStartResult = { batches: [], errors: [], skipped: 0 };
  let pos = 0;
  let batch = Math.min(count, initialBatchSize);
  while (pos < count) {
    result.batches.push(batch);
    const outcomes = await Promise.allSettled(Array.from({ length: batch }, (_, i) => create(pos + i)));
    const failed = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as Error] : []));
    result.errors.push(...failed);
    pos += batch;
    if (failed.length) {
      result.skipped = count - pos;
      break;
    }
    batch = Math.min(2 * batch, count - pos);
  }
  return result;
}
