/**
 * Retries for transient failures only, with exponential backoff and jitter. Reads retry on
 * an unavailable server or a timeout; writes only when repeating them cannot apply a change
 * twice; a rate-limited request (refused before anything happened) always retries.
 */
import { ApiError } from './api/errors.js';

export interface RetryPolicy {
  /** Attempts in all (default 5). */
  attempts?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export type RetryMode = 'read' | 'idempotent' | 'once';

export function isTransient(err: unknown, mode: RetryMode): boolean {
  if (!(err instanceof ApiError)) return false;
  if (err.reason === 'TooManyRequests') return true;
  if (mode === 'once') return false;
  if (err.reason === 'Unavailable') return true;
  return mode === 'read' && err.reason === 'Timeout';
}

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
      if (attempt >= attempts || !isTransient(err, mode)) throw err;
      const retryAfter =
        err instanceof ApiError && err.details.retryAfterSeconds ? err.details.retryAfterSeconds * 1000 : 0;
      await sleep(Math.max(retryAfter, delay * (0.5 + Math.random() / 2)));
      delay = Math.min(delay * 2, policy.maxDelayMs ?? 3000);
    }
  }
}
