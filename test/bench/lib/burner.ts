/**
 * CPU burners: child processes that spin until stopped, so that a case runs on a machine whose
 * cores are shared with other work, the same for every system measured while they run.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface Burners {
  readonly count: number;
  /** Process ids, for CPU meters. */
  readonly pids: number[];
  stop(): Promise<void>;
}

// Spins in slices so that the process still answers SIGTERM promptly.
const SPIN =
  'const spin = () => { const end = Date.now() + 50; while (Date.now() < end); setImmediate(spin); }; spin();';

export function startBurners(count: number): Burners {
  const children: ChildProcess[] = Array.from({ length: count }, () =>
    spawn(process.execPath, ['-e', SPIN], { stdio: 'ignore' }),
  );
  return {
    count,
    pids: children.map((c) => c.pid ?? 0).filter((p) => p > 0),
    async stop() {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null || c.signalCode !== null) return resolve();
              c.once('exit', () => resolve());
              c.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
