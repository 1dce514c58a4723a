/**
 * The runtime of hollow (simulated) nodes: containers "run" without processes, so thousands
 * of pods fit in one test process. A container is running after `startDelayMs`; it exits
 * only when stopped, unless its env scripts an exit: KUBELAB_HOLLOW_RUN_SECONDS (how long it
 * runs) and KUBELAB_HOLLOW_EXIT_CODE (how it ends, default 0).
 *
 * With a state file, the simulated containers outlive the agent the way processes do: what runs
 * is written there (at most once a second, and on close), and a restarted agent adopts it
 * through recover() instead of starting every pod again.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
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
  /** A scripted exit: when (clock ms) and with which code. */
  endsAt?: number;
  exitCode?: number;
}

/** One running container as the state file keeps it. */
interface SavedContainer {
  podUid: string;
  name: string;
  restartCount: number;
  startedAt: number;
  endsAt?: number;
  exitCode?: number;
}

/** How long changes wait to be written together. */
const SAVE_DELAY_MS = 1000;

export class HollowRuntime implements Runtime, LogSource {
  private readonly instances = new Map<string, Instance>();
  private saveScheduled = false;
  private closed = false;

  /** `stateFile`: where what runs is kept across agent restarts (none: nothing outlives the agent). */
  constructor(
    private readonly clock: Clock,
    private readonly startDelayMs = 0,
    private readonly stateFile?: string,
  ) {}

  async start(spec: ContainerSpec): Promise<RunningContainer> {
    if (this.startDelayMs > 0) await new Promise<void>((r) => this.clock.setTimeout(r, this.startDelayMs));
    const runSeconds = Number(spec.env[HOLLOW_RUN_SECONDS_ENV]);
    const scripted =
      Number.isFinite(runSeconds) && runSeconds >= 0 && spec.env[HOLLOW_RUN_SECONDS_ENV] !== undefined;
    const startedAt = this.clock.now();
    const instance = this.track({
      podUid: spec.podUid,
      name: spec.name,
      restartCount: spec.restartCount,
      startedAt,
      ...(scripted
        ? {
            endsAt: startedAt + runSeconds * 1000,
            exitCode: Number(spec.env[HOLLOW_EXIT_CODE_ENV] ?? 0) || 0,
          }
        : {}),
    });
    this.scheduleSave();
    return instance.container;
  }

  /**
   * Registers a running container (started now, or adopted from the state file: what was read
   * back is not written again, so a restarted fleet does not rewrite every node's file).
   */
  private track(saved: SavedContainer): Instance {
    const id = `${saved.podUid}/${saved.name}/${saved.restartCount}`;
    let resolveExit!: (exit: ContainerExit) => void;
    const exited = new Promise<ContainerExit>((r) => (resolveExit = r));
    const container: RunningContainer = {
      id,
      podUid: saved.podUid,
      name: saved.name,
      restartCount: saved.restartCount,
      pid: 0,
      startedAt: saved.startedAt,
      exited,
    };
    const instance: Instance = {
      container,
      ended: false,
      endsAt: saved.endsAt,
      exitCode: saved.exitCode,
      end: (exit) => {
        if (instance.ended) return;
        instance.ended = true;
        resolveExit({ ...exit, finishedAt: this.clock.now() });
        this.scheduleSave();
      },
    };
    this.instances.set(id, instance);
    if (saved.endsAt !== undefined) {
      const exitCode = saved.exitCode ?? 0;
      this.clock.setTimeout(
        () => instance.end({ exitCode, reason: exitCode === 0 ? 'Completed' : 'Error' }),
        Math.max(0, saved.endsAt - this.clock.now()),
      );
    }
    return instance;
  }

  async stop(container: RunningContainer): Promise<ContainerExit> {
    // A simulated process honours SIGTERM at once.
    this.instances.get(container.id)?.end({ exitCode: 143, signal: 'SIGTERM', reason: 'Error' });
    return container.exited;
  }

  /** The containers the state file says were running when the last agent stopped. */
  async recover(): Promise<RunningContainer[]> {
    if (!this.stateFile) return [];
    let saved: SavedContainer[];
    try {
      saved = JSON.parse(readFileSync(this.stateFile, 'utf8')) as SavedContainer[];
    } catch {
      return []; // none yet, or cut short by a crash: the pods start again
    }
    if (!Array.isArray(saved)) return [];
    return saved
      .filter(
        (c) =>
          typeof c?.podUid === 'string' && typeof c.name === 'string' && Number.isInteger(c.restartCount),
      )
      .filter((c) => !this.instances.has(`${c.podUid}/${c.name}/${c.restartCount}`))
      .map((c) => this.track(c).container);
  }

  async removePod(podUid: string): Promise<void> {
    for (const [id, i] of this.instances) if (i.container.podUid === podUid) this.instances.delete(id);
    this.scheduleSave();
  }

  /** Writes what runs now and stops writing (the agent stops; the containers "run on"). */
  close(): void {
    if (this.closed) return;
    this.save();
    this.closed = true;
  }

  private scheduleSave(): void {
    if (!this.stateFile || this.saveScheduled || this.closed) return;
    this.saveScheduled = true;
    this.clock.setTimeout(() => {
      this.saveScheduled = false;
      if (!this.closed) this.save();
    }, SAVE_DELAY_MS);
  }

  private save(): void {
    if (!this.stateFile || this.closed) return;
    const running: SavedContainer[] = [];
    for (const { container: c, ended, endsAt, exitCode } of this.instances.values()) {
      if (ended) continue;
      running.push({
        podUid: c.podUid,
        name: c.name,
        restartCount: c.restartCount,
        startedAt: c.startedAt,
        ...(endsAt !== undefined ? { endsAt, exitCode } : {}),
      });
    }
    // Written whole and renamed into place: a crash leaves the old file or the new one.
    const tmp = `${this.stateFile}.tmp`;
    writeFileSync(tmp, JSON.stringify(running));
    renameSync(tmp, this.stateFile);
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
