/**
 * The runtimes a node runs its pods with, chosen once at start: on a real machine, processes
 * (and images when docker or podman answers), with their logs on disk; on a hollow node, the
 * hollow runtime, which is its own log source.
 */
import type { Clock } from '../../client/util/clock.js';
import type { Logger } from '../logger.js';
import { HollowRuntime } from '../runtime/hollow.js';
import { detectImageCli, ImageRuntime } from '../runtime/image.js';
import { LogStore } from '../runtime/logs.js';
import { ProcessRuntime } from '../runtime/process.js';
import type { LogSource } from '../runtime/types.js';
import type { RuntimeChoice } from './manager.js';

export interface PodRuntimes {
  processes: RuntimeChoice;
  /** Absent when neither docker nor podman answers: pods naming an image then fail, saying so. */
  images?: RuntimeChoice;
  logs: LogSource;
  close(): void;
}

export interface MachineRuntimesOptions {
  dataDir: string;
  logger: Logger;
  clock?: Clock;
  /** Look for docker and podman (default true). */
  images?: boolean;
}

export async function machineRuntimes(options: MachineRuntimesOptions): Promise<PodRuntimes> {
  const { dataDir, logger, clock } = options;
  const logs = new LogStore({ dataDir, clock, logger: logger.child({ component: 'logs' }) });
  const processes = new ProcessRuntime({
    dataDir,
    logs,
    clock,
    logger: logger.child({ component: 'process-runtime' }),
  });
  let images: RuntimeChoice | undefined;
  if (options.images !== false) {
    const cli = await detectImageCli();
    if ('error' in cli) {
      logger.info({ reason: cli.error }, 'containers with an image cannot run on this node');
    } else {
      images = { runtime: new ImageRuntime(processes, cli), scheme: cli.name };
      logger.info({ cli: cli.name }, 'containers with an image run through %s', cli.name);
    }
  }
  return {
    processes: { runtime: processes, scheme: 'process' },
    images,
    logs,
    close() {
      processes.close();
      logs.close();
    },
  };
}

/** `startDelayMs`: how long a hollow container takes to start. */
export function hollowRuntimes(clock: Clock, startDelayMs = 0): PodRuntimes {
  const runtime = new HollowRuntime(clock, startDelayMs);
  // Hollow containers run nothing, so an image is as good as a command.
  const choice: RuntimeChoice = { runtime, scheme: 'hollow' };
  return {
    processes: choice,
    images: choice,
    logs: runtime,
    close: () => undefined,
  };
}
