/**
 * The runtimes a node runs its pods with, chosen once at start: on a real machine, processes
 * (and images when docker or podman answers), with their logs on disk; on a hollow node, the
 * hollow runtime, which is its own log source.
 */
import { join } from 'node:path';
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
  /** Absent when neither docker nor podman answers: pods naming an image then wait or fail, saying why. */
  images?: RuntimeChoice;
  /** Why `images` is absent, and how to look again (a daemon may be started later). */
  imagesMissing?: ImagesMissing;
  logs: LogSource;
  /** Where pod volumes are kept (`<dataDir>/volumes`); absent on hollow nodes. */
  volumesDir?: string;
  close(): void;
}

/** No image runtime answered when the agent started. */
export interface ImagesMissing {
  /** What docker and podman said. */
  reason: string;
  /** Installed, with a daemon that did not answer: starting it makes images work. */
  installed: Array<'docker' | 'podman'>;
  /** Looks again: the runtime once a daemon answers, else why not. */
  lookAgain(): Promise<RuntimeChoice | ImagesMissing>;
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
  const findImages = async (): Promise<RuntimeChoice | ImagesMissing> => {
    const cli = await detectImageCli();
    if ('error' in cli) return { reason: cli.error, installed: cli.installed, lookAgain: findImages };
    logger.info({ cli: cli.name }, 'containers with an image run through %s', cli.name);
    return { runtime: new ImageRuntime(processes, cli), scheme: cli.name };
  };
  const images = options.images === false ? undefined : await findImages();
  if (images && 'reason' in images) {
    logger.info({ reason: images.reason }, 'containers with an image cannot run on this node');
  }
  return {
    processes: { runtime: processes, scheme: 'process' },
    ...(images && 'runtime' in images ? { images } : {}),
    ...(images && 'reason' in images ? { imagesMissing: images } : {}),
    logs,
    volumesDir: join(dataDir, 'volumes'),
    close() {
      processes.close();
      logs.close();
    },
  };
}

/**
 * `startDelayMs`: how long a hollow container takes to start; `stateFile`: where its simulated
 * containers are kept so that a restarted agent adopts them.
 */
export function hollowRuntimes(clock: Clock, startDelayMs = 0, stateFile?: string): PodRuntimes {
  const runtime = new HollowRuntime(clock, startDelayMs, stateFile);
  // Hollow containers run nothing, so an image is as good as a command.
  const choice: RuntimeChoice = { runtime, scheme: 'hollow' };
  return {
    processes: choice,
    images: choice,
    logs: runtime,
    close: () => runtime.close(),
  };
}
