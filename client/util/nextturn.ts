/**
 * Resolves on a later turn of the event loop, after the I/O waiting now: long loops over
 * thousands of items await it every so often so that the calls, watches and timers of
 * everyone else are not held up meanwhile.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
