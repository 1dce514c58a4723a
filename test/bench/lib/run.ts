/**
 * Running a benchmark: progress lines on stderr, everything started stopped in reverse order
 * (on success, failure, Ctrl-C or timeout), and CPU profiles of this process on demand.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

export function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** Everything started is stopped in reverse order, on success, failure, Ctrl-C or timeout. */
export class Cleanup {
  private readonly steps: Array<{ what: string; run: () => unknown }> = [];
  private running: Promise<void> | undefined;

  add(what: string, run: () => unknown): void {
    this.steps.push({ what, run });
  }

  /** Runs and forgets the most recent step named `what` (for things stopped mid-run). */
  async now(what: string): Promise<void> {
    const i = this.steps.findLastIndex((s) => s.what === what);
    if (i < 0) return;
    const [step] = this.steps.splice(i, 1);
    await step.run();
  }

  runAll(): Promise<void> {
    this.running ??= (async () => {
      while (this.steps.length) {
        const step = this.steps.pop()!;
        try {
          await step.run();
        } catch (err) {
          console.error(`cleanup: ${step.what} failed: ${(err as Error).message}`);
        }
      }
    })();
    return this.running;
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

/**
 * Starts the V8 sampling profiler in this process (for a window of a run, unlike --cpu-prof);
 * the returned function stops it, writes `path` (open it in Chrome DevTools or VS Code) and
 * returns the functions with the most self time.
 */
export async function profileThisProcess(
  path: string,
): Promise<() => Promise<Array<{ fn: string; selfPct: number }>>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
    session.disconnect();
    writeFileSync(path, JSON.stringify(profile));
    return topSelfTime(profile, 20);
  };
}

/** The functions with the most samples of their own (not their callees'), in percent. */
export function topSelfTime(profile: Profile, n: number): Array<{ fn: string; selfPct: number }> {
  const byFn = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    total += hits;
    const f = node.callFrame;
    const where = f.url
      ? `${f.url.replace(/^.*\/(node_modules|work\/main)\//, '')}:${f.lineNumber + 1}:${f.columnNumber + 1}`
      : '';
    const name = `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    byFn.set(name, (byFn.get(name) ?? 0) + hits);
  }
  return [...byFn.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([fn, hits]) => ({ fn, selfPct: total ? (100 * hits) / total : 0 }));
}
