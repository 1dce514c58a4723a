/**
 * Heap measurements: a full garbage collection before reading the heap, so that what is
 * counted is what is still referenced. Uses `gc` from `node --expose-gc` when present;
 * otherwise turns the flag on at run time (the same collector, exposed through a new context).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sleep } from './stats.js';

let gcFn: (() => void) | undefined;

export function forceGc(): void {
  if (!gcFn) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (typeof exposed === 'function') gcFn = exposed;
    else {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
    }
  }
  gcFn();
}

export interface HeapReading {
  /** V8 heap in use (JS objects, strings, code), bytes. */
  heapUsed: number;
  /** Memory of ArrayBuffers and Buffers outside the V8 heap, bytes. */
  arrayBuffers: number;
  /** Resident set size of the process, bytes. */
  rss: number;
}

/** The heap after full collections (a few, with turns of the event loop between for finalizers). */
export async function settledHeap(): Promise<HeapReading> {
  for (let i = 0; i < 3; i++) {
    forceGc();
    await sleep(30);
  }
  forceGc();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers, rss: m.rss };
}
