/**
 * Retries for transient failures only, with exponential backoff and jitter. Whether a failed
 * call may be sent again is resend.ts's rule, shared with the failover between replicas: reads
 * retry on an unavailable server or a timeout; writes only when repeating them cannot apply a
 * change twice; a request refused before anything happened (rate limited, or no connection
 * could be made) always retries.
 */
import { ApiError } from './api/errors.js';
import { mayResend, type RetryMode } from './resend.js';

export type { RetryMode } from './resend.js';

export interface RetryPolicy {
  /** Attempts in all (default 5). */
  attempts?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** The shared rule under its older name. */
export const isTransient = mayResend;

export async function retrying<T>(
  fn: () => Promise<T>,
  mode: RetryMode,
  policy: RetryPolicy = {},
): Promise<T> {
  const attempts = policy.attempts ?? 5;
  const sleep = policy.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let delay = policy.initialDelayMs ?? 100;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !mayResend(err, mode)) throw err;
      // The server's hint is a floor, spread over up to twice it: thousands of clients refused
      // together (a fleet reconnecting after an outage) must not all come back in the same second.
      const retryAfter =
        err instanceof ApiError && err.details.retryAfterSeconds
          ? err.details.retryAfterSeconds * 1000 * (1 + Math.random())
          : 0;
      await sleep(Math.max(retryAfter, delay * (0.5 + Math.random() / 2)));
      delay = Math.min(delay * 2, policy.maxDelayMs ?? 3000);
    }
  }
}
