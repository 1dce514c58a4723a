/** Polling for what a user would eventually observe, in real time. */

/**
 * Resolves with the milliseconds it took once `check` holds; a check that throws counts as
 * not yet (its last error is in the timeout message).
 */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  what: string,
  ms = 30_000,
  pollMs = 25,
): Promise<number> {
  const start = Date.now();
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return Date.now() - start;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() - start > ms) {
      const why = lastError ? ` (last error: ${(lastError as Error).message})` : '';
      throw new Error(`timed out after ${ms} ms waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
