import { describe, expect, it } from 'vitest';
import { ApiError } from './api/errors.js';
import { ConnectionError } from './grpc/connection.js';
import { retrying } from './retry.js';

const noSleep = { sleep: async () => undefined };

function failing(errors: ApiError[], value = 'ok') {
  let calls = 0;
  return {
    fn: async () => {
      const err = errors[calls++];
      if (err) throw err;
      return value;
    },
    get calls() {
      return calls;
    },
  };
}

describe('retrying', () => {
  it('retries reads through an unavailable server and timeouts', async () => {
    const f = failing([new ApiError('Unavailable', 'down'), new ApiError('Timeout', 'slow')]);
    expect(await retrying(f.fn, 'read', noSleep)).toBe('ok');
    expect(f.calls).toBe(3);
  });

  it('never retries what a retry cannot fix', async () => {
    for (const reason of [
      'Invalid',
      'NotFound',
      'Conflict',
      'Forbidden',
      'Unauthorized',
      'Expired',
    ] as const) {
      const f = failing([new ApiError(reason, 'no')]);
      await expect(retrying(f.fn, 'read', noSleep)).rejects.toMatchObject({ reason });
      expect(f.calls).toBe(1);
    }
  });

  it('does not retry a non-idempotent write on an unavailable server, but does on rate limiting', async () => {
    const down = failing([new ApiError('Unavailable', 'down')]);
    await expect(retrying(down.fn, 'once', noSleep)).rejects.toMatchObject({ reason: 'Unavailable' });
    expect(down.calls).toBe(1);
    const limited = failing([new ApiError('TooManyRequests', 'slow down', { retryAfterSeconds: 1 })]);
    const waits: number[] = [];
    expect(await retrying(limited.fn, 'once', { sleep: async (ms) => void waits.push(ms) })).toBe('ok');
    expect(waits[0]).toBeGreaterThanOrEqual(1000);
  });

  it('spreads retries after a rate limit over one to two times the hint, so refused clients do not return together', async () => {
    const waits: number[] = [];
    for (let i = 0; i < 200; i++) {
      const limited = failing([new ApiError('TooManyRequests', 'slow down', { retryAfterSeconds: 1 })]);
      await retrying(limited.fn, 'read', { sleep: async (ms) => void waits.push(ms) });
    }
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(1000);
    expect(Math.max(...waits)).toBeLessThanOrEqual(2000);
    // Spread: the fastest and slowest fifth are far apart (all 1,000 ms before).
    const sorted = [...waits].sort((a, b) => a - b);
    expect(sorted[160] - sorted[40]).toBeGreaterThan(300);
  });

  it('retries any write that never reached the server, but no write after a timeout', async () => {
    const refused = failing([new ConnectionError('refused', 'nothing answers')]);
    expect(await retrying(refused.fn, 'once', noSleep)).toBe('ok');
    expect(refused.calls).toBe(2);
    // A dropped connection or a timeout may come after the server applied the write.
    const dropped = failing([new ConnectionError('unreachable', 'Connection dropped')]);
    await expect(retrying(dropped.fn, 'once', noSleep)).rejects.toMatchObject({ reason: 'Unavailable' });
    expect(dropped.calls).toBe(1);
    const late = failing([new ApiError('Timeout', 'slow')]);
    await expect(retrying(late.fn, 'idempotent', noSleep)).rejects.toMatchObject({ reason: 'Timeout' });
    expect(late.calls).toBe(1);
  });

  it('gives up after the configured attempts with backoff between them', async () => {
    const f = failing(Array.from({ length: 10 }, () => new ApiError('Unavailable', 'down')));
    const waits: number[] = [];
    await expect(
      retrying(f.fn, 'idempotent', {
        attempts: 4,
        initialDelayMs: 100,
        sleep: async (ms) => void waits.push(ms),
      }),
    ).rejects.toMatchObject({
      reason: 'Unavailable',
    });
    expect(f.calls).toBe(4);
    expect(waits).toHaveLength(3);
    expect(waits[2]).toBeGreaterThan(waits[0]);
  });
});
