/**
 * Where a command reads and writes: the terminal in production, buffers in unit tests. Time
 * comes from an injectable clock so ages and waits can be tested without sleeping.
 */
import type { Clock, TimerHandle } from '../client/util/clock.js';

export interface Io {
  out(text: string | Uint8Array): void;
  err(text: string): void;
  stdin: NodeJS.ReadableStream;
  /** Whether a person is typing on stdin (so a question can be asked). */
  stdinIsTTY: boolean;
  env: NodeJS.ProcessEnv;
  clock: Clock;
}

let nextTimer = 1;

/**
 * Real time whose timers keep the process alive: a CLI waiting for a deletion has nothing else
 * running (client-go-style unref'd timers would let it exit mid-wait).
 */
export const cliClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    return { id: nextTimer++, t: setTimeout(fn, ms) } as TimerHandle & { t: NodeJS.Timeout };
  },
  clearTimeout(handle) {
    clearTimeout((handle as TimerHandle & { t: NodeJS.Timeout }).t);
  },
};

export function processIo(): Io {
  // `labctl get pods | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(0);
  });
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    stdin: process.stdin,
    stdinIsTTY: Boolean(process.stdin.isTTY),
    env: process.env,
    clock: cliClock,
  };
}

/** Reads all of stdin (for `-f -`). */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** Sleeps on the injected clock. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}
