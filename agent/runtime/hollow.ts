/**
 * The runtime of hollow (simulated) nodes: containers "run" without processes, so thousands
 * of pods fit in one test process. A container is running after `startDelayMs`; it exits
 * only when stopped, unless its env scripts an exit: KUBELAB_HOLLOW_RUN_SECONDS (how long it
 * runs) and KUBELAB_HOLLOW_EXIT_CODE (how it ends, default 0).
 */
import type { Clock } from '../../client/util/clock.js';
import { rfc3339Micro } from '../../client/util/clock.js';
import type {
  ContainerExit,
  ContainerSpec,
  LogRequest,
  LogSource,
  RunningContainer,
  Runtime,
} from './types.js';

export const HOLLOW_RUN_SECONDS_ENV = 'KUBELAB_HOLLOW_RUN_SECONDS';
export const HOLLOW_EXIT_CODE_ENV = 'KUBELAB_HOLLOW_EXIT_CODE';

interface Instance {
  container: RunningContainer;
  end(exit: Omit<ContainerExit, 'finishedAt'>): void;
  ended: boolean;
}

export class HollowRuntime implements Runtime, LogSource {
  private readonly instances = new Map<string, Instance>();

  constructor(
    private readonly clock: Clock,
    private readonly startDelayMs = 0,
  ) {}

  async start(spec: ContainerSpec): Promise<RunningContainer> {
    if (this.startDelayMs > 0) await new Promise<void>((r) => this.clock.setTimeout(r, this.startDelayMs));
    const id = `${spec.podUid}/${spec.name}/${spec.restartCount}`;
    let resolveExit!: (exit: ContainerExit) => void;
    const exited = new Promise<ContainerExit>((r) => (resolveExit = r));
    const container: RunningContainer = {
      id,
      podUid: spec.podUid,
      name: spec.name,
      restartCount: spec.restartCount,
      pid: 0,
      startedAt: this.clock.now(),
      exited,
    };
    const instance: Instance = {
      container,
      ended: false,
      end: (exit) => {
        if (instance.ended) return;
        instance.ended = true;
        resolveExit({ ...exit, finishedAt: this.clock.now() });
      },
    };
    this.instances.set(id, instance);
    const runSeconds = Number(spec.env[HOLLOW_RUN_SECONDS_ENV]);
    if (Number.isFinite(runSeconds) && runSeconds >= 0 && spec.env[HOLLOW_RUN_SECONDS_ENV] !== undefined) {
      const exitCode = Number(spec.env[HOLLOW_EXIT_CODE_ENV] ?? 0) || 0;
      this.clock.setTimeout(
        () => instance.end({ exitCode, reason: exitCode === 0 ? 'Completed' : 'Error' }),
        runSeconds * 1000,
      );
    }
    return container;
  }

  async stop(container: RunningContainer): Promise<ContainerExit> {
    // A simulated process honours SIGTERM at once.
    this.instances.get(container.id)?.end({ exitCode: 143, signal: 'SIGTERM', reason: 'Error' });
    return container.exited;
  }

  async recover(): Promise<RunningContainer[]> {
    return [];
  }

  async removePod(podUid: string): Promise<void> {
    for (const [id, i] of this.instances) if (i.container.podUid === podUid) this.instances.delete(id);
  }

  async stream(req: LogRequest, write: (chunk: Buffer) => boolean): Promise<void> {
    const instance = [...this.instances.values()]
      .filter((i) => i.container.podUid === req.podUid && i.container.name === req.container)
      .sort((a, b) => b.container.restartCount - a.container.restartCount)[req.previous ? 1 : 0];
    if (!instance) return;
    const at = rfc3339Micro(instance.container.startedAt);
    write(
      Buffer.from(
        `${req.timestamps ? `${at} ` : ''}hollow container ${req.container} started (simulated, no process)\n`,
      ),
    );
  }
}
