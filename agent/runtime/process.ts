/**
 * The process runtime: each container is a plain process on the node, started under the exit
 * wrapper (wrapper.ts) in its own session and process group, with its stdout and stderr going
 * straight to its log file (logs.ts). Processes outlive the agent: a restarted agent re-adopts
 * them by pid + start time (client/util/procfs.ts) and learns how they ended from the wrapper's
 * exit file.
 *
 * Per instance, next to its log (layout.ts): `<n>.json`, written atomically once the process
 * runs — { pid, startTime, startedAt, argv, … } — and rewritten with `exit` once its end is
 * known; `<n>.started` and `<n>.exit`, written by the wrapper. An instance whose `<n>.json` has
 * an `exit` is finished. Only the current and the previous instance of a container are kept
 * (start() deletes older ones).
 *
 * Signals go to the whole process group (stop(), removePod()): the container's main process and
 * everything it started get TERM, then KILL after the grace period. (Kubernetes sends TERM to the
 * main process only; here a shell's children get it too.)
 *
 * Environment: exactly `spec.env`, plus PATH and HOME from the agent's own environment when the
 * spec does not set them (a process needs PATH to find anything; many tools need HOME). Nothing
 * else of the agent's environment leaks into containers (no credentials, no NODE_OPTIONS).
 * Working directory: `spec.workingDir`, `/` when unset (as for a systemd service: the same on
 * every node, whatever directory the agent was started from).
 *
 * When the main process ends, whatever it left in its process group (a daemonized child) is
 * killed, as Kubernetes tears a container down when its main process exits; processes that
 * started their own session or process group escape that.
 */
import { spawn } from 'node:child_process';
import { closeSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { realClock, type Clock, type TimerHandle } from '../../client/util/clock.js';
import type { Logger } from '../logger.js';
import { Cgroups, oomKills } from './cgroup.js';
import { checkCommand, type CommandCheck } from './command.js';
import { findUnshare, mountArgs, underMount } from './mounts.js';
import { findSetpriv, needsPrivilegeDrop, setprivArgs } from './privileges.js';
import {
  containerDir,
  instanceNumbers,
  instancePath,
  isNotFound,
  podDir,
  subdirectories,
  writeFileAtomic,
} from './layout.js';
import type { LogStore } from './logs.js';
import { isSameProcess, processStartTime } from '../../client/util/procfs.js';
import type { ContainerExit, ContainerSpec, RunningContainer, Runtime } from './types.js';
import {
  parseExitFile,
  statusFromCode,
  statusFromSignal,
  wrapperInvocation,
  type WrappedStatus,
} from './wrapper.js';

/** How long start() waits for the wrapper to start the command (normally a few ms). */
const STARTUP_WAIT_MS = 10_000;

/** PATH for containers when neither the spec nor the agent has one. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface ProcessRuntimeOptions {
  /** The agent's data directory: instances live under `<dataDir>/pods/`. */
  dataDir: string;
  /** Opens the log files and is told when instances end. Same dataDir. */
  logs: LogStore;
  clock?: Clock;
  logger: Logger;
  /** How often an adopted container (not the agent's child) is checked for having ended (1 s). */
  recoverPollMs?: number;
  /** The cgroup v2 directory to create container cgroups under (default /sys/fs/cgroup). */
  cgroupRoot?: string;
  /** The shell that runs the wrapper (default /bin/sh). */
  shell?: string;
  /** The uid the agent runs as (default: this process's). */
  agentUid?: number;
}

/** What `<n>.json` holds. */
export interface InstanceState {
  pid: number;
  /** procfs start time of the wrapper: a pid with another start time is not ours. */
  startTime: string;
  startedAt: number;
  argv: string[];
  /** Set when the command was found unable to run before the start: explains a 126/127. */
  cannotRun?: { exitCode: 126 | 127; message: string };
  cgroup?: { path: string; oomKillsBefore: number };
  /** How it ended, once known. */
  exit?: ContainerExit;
}

/** One instance as recorded on disk (see instances()). */
export interface InstanceRecord extends InstanceState {
  id: string;
  podUid: string;
  name: string;
  restartCount: number;
}

interface Tracked {
  container: RunningContainer;
  state: InstanceState;
  /** The wrapper is this agent's child: its 'exit' event tells when it ends. */
  child: boolean;
  /** The wrapper process is known to be gone. */
  gone: boolean;
  finishing: boolean;
  exit?: ContainerExit;
  stopping?: Promise<ContainerExit>;
  pollTimer?: TimerHandle;
  resolveExit: (exit: ContainerExit) => void;
}

export class ProcessRuntime implements Runtime {
  private readonly dataDir: string;
  private readonly logs: LogStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly recoverPollMs: number;
  private readonly shell: string;
  private readonly cgroups: Cgroups;
  /** Instances this runtime started or adopted, by id. */
  private readonly tracked = new Map<string, Tracked>();
  private readonly agentUid: number;

  constructor(opts: ProcessRuntimeOptions) {
    this.dataDir = path.resolve(opts.dataDir);
    this.logs = opts.logs;
    this.clock = opts.clock ?? realClock;
    this.logger = opts.logger;
    this.recoverPollMs = opts.recoverPollMs ?? 1000;
    this.shell = opts.shell ?? '/bin/sh';
    this.cgroups = new Cgroups({ logger: opts.logger, root: opts.cgroupRoot });
    this.agentUid = opts.agentUid ?? process.getuid?.() ?? 0;
  }

  /**
   * Hands the container's log to the user it runs as (fsGroup for the group). Its folder and the
   * status files the wrapper and the agent write stay the agent's: the container must not be
   * able to forge how it ended.
   */
  private async chownContainerFiles(spec: ContainerSpec): Promise<void> {
    const sec = spec.security!;
    const dir = containerDir(this.dataDir, spec.podUid, spec.name);
    for (const name of await fsp.readdir(dir)) {
      if (name.startsWith(`${spec.restartCount}.`) && name.endsWith('.log'))
        await fsp.chown(path.join(dir, name), sec.uid ?? this.agentUid, sec.fileGroup ?? sec.gid ?? -1);
    }
  }

  async start(spec: ContainerSpec): Promise<RunningContainer> {
    const id = containerId(spec.podUid, spec.name, spec.restartCount);
    const what = `container "${spec.name}" of pod ${spec.podKey}`;
    if (spec.argv.length === 0) {
      throw new Error(`${what} has no command: set command (or args) in its spec`);
    }
    const existing = this.tracked.get(id);
    if (existing && !existing.exit) {
      throw new Error(
        `${what} (instance ${spec.restartCount}) is already running: stop it first, or start the next restartCount`,
      );
    }
    if (!existing && (await this.runningFromEarlierRun(spec.podUid, spec.name, spec.restartCount))) {
      throw new Error(
        `${what} (instance ${spec.restartCount}) still runs from an earlier run of the agent: adopt it with recover() instead of starting a copy`,
      );
    }
    const env = containerEnv(spec.env, process.env);
    const dropping = needsPrivilegeDrop(spec.security, this.agentUid);
    const setpriv = dropping ? findSetpriv() : undefined;
    if (dropping && !setpriv)
      throw new Error(
        `${what} runs as another user, which needs setpriv from util-linux; install it (apt install util-linux)`,
      );
    // A process run as another user gets that user's home unless its spec names one.
    if (dropping && spec.security?.home !== undefined && spec.env.HOME === undefined)
      env.HOME = spec.security.home;
    const mounts = spec.mounts ?? [];
    const mounting = mounts.length ? this.mountPrefix(spec, what) : [];
    const cwd = await checkWorkingDir(spec.workingDir, what);
    // A command on a volume (a script from a ConfigMap) exists only once the volume is mounted.
    const onVolume = spec.argv[0].includes('/') && underMount(path.resolve(cwd, spec.argv[0]), mounts);
    const check: CommandCheck = onVolume
      ? { ok: true, path: spec.argv[0] }
      : checkCommand(spec.argv[0], env.PATH ?? '', cwd);
    const exitFile = this.file(spec.podUid, spec.name, spec.restartCount, '.exit');
    const startedFile = this.file(spec.podUid, spec.name, spec.restartCount, '.started');
    await fsp.mkdir(path.dirname(exitFile), { recursive: true });
    // Leftovers from an earlier attempt with this number would be taken for this one's.
    await fsp.rm(exitFile, { force: true });
    await fsp.rm(startedFile, { force: true });
    const cgroup = await this.cgroups.prepare(spec.podUid, spec.name, spec.limits);

    const logFd = this.logs.openForWriting(spec.podUid, spec.name, spec.restartCount);
    // The files the agent writes for the container belong to its user and fsGroup.
    if (dropping && this.agentUid === 0) await this.chownContainerFiles(spec);
    const invocation = wrapperInvocation({
      argv: [...mounting, ...(dropping ? setprivArgs(setpriv!, spec.security!) : []), ...spec.argv],
      exitFile,
      startedFile,
      cgroupProcs: cgroup?.procsFile,
      shell: this.shell,
    });
    let child;
    try {
      child = spawn(invocation.file, invocation.args, {
        // Own session and process group: survives the agent, stopped as a group.
        detached: true,
        stdio: ['ignore', logFd, logFd],
        env,
        cwd,
      });
    } finally {
      closeSync(logFd); // the process has its own copy
    }
    // Listen at once: a short-lived container can be gone before start() returns.
    const wrapperExit: { status?: WrappedStatus; then?: () => void } = {};
    child.once('exit', (code, signal) => {
      wrapperExit.status = signal ? statusFromSignal(signal) : statusFromCode(code ?? 0);
      wrapperExit.then?.();
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
    } catch (err) {
      await this.logs.markEnded(spec.podUid, spec.name, spec.restartCount);
      throw new Error(`could not start ${what}: ${(err as Error).message}`);
    }
    child.on('error', (err) => this.logger.warn({ err, container: id }, 'container process error'));
    child.unref(); // the agent may exit while its containers run on
    const pid = child.pid as number;

    const state: InstanceState = {
      pid,
      // Read before the first await after 'spawn': until Node reaps it, even an exited
      // wrapper still has its /proc entry (as a zombie), so this cannot miss.
      startTime: processStartTime(pid) ?? '',
      startedAt: this.clock.now(),
      argv: spec.argv,
      ...(check.ok ? {} : { cannotRun: { exitCode: check.exitCode, message: check.message } }),
      ...(cgroup ? { cgroup: { path: cgroup.path, oomKillsBefore: cgroup.oomKillsBefore } } : {}),
    };
    const tracked = this.newTracked(spec.podUid, spec.name, spec.restartCount, state, true);
    try {
      await writeFileAtomic(
        this.file(spec.podUid, spec.name, spec.restartCount, '.json'),
        JSON.stringify(state),
      );
    } catch (err) {
      // Unrecorded, a restarted agent could not find it: better not to leave it running.
      killGroup(pid, 'SIGKILL');
      this.tracked.delete(id);
      throw new Error(
        `could not record the state of ${what} (${(err as Error).message}): check the space and permissions of ${this.dataDir}`,
      );
    }
    wrapperExit.then = () => {
      tracked.gone = true;
      void this.finish(tracked, wrapperExit.status, { killLeftovers: true, observedNow: true });
    };
    if (wrapperExit.status) wrapperExit.then();
    await this.waitUntilExecuting(startedFile, tracked);
    await this.pruneOldInstances(spec.podUid, spec.name, spec.restartCount);
    return tracked.container;
  }

  /** `unshare … <mount script> …` for a container with volumes (mounts.ts). */
  private mountPrefix(spec: ContainerSpec, what: string): string[] {
    if (this.agentUid !== 0)
      throw new Error(
        `${what} mounts volumes, which for a process needs kubelab-agent to run as root (it bind-mounts them in a mount namespace of the container's own): run the agent as root (install.sh does), or run the container from an image`,
      );
    const unshare = findUnshare();
    if (!unshare)
      throw new Error(
        `${what} mounts volumes, which needs unshare from util-linux; install it (apt install util-linux)`,
      );
    return mountArgs(unshare, this.shell, spec.mounts ?? []);
  }

  /** Whether `<n>.json` names a process that still runs and whose end nobody recorded. */
  private async runningFromEarlierRun(podUid: string, name: string, restartCount: number): Promise<boolean> {
    try {
      const state = JSON.parse(
        await fsp.readFile(this.file(podUid, name, restartCount, '.json'), 'utf8'),
      ) as InstanceState;
      return !state.exit && isSameProcess(state.pid, state.startTime);
    } catch {
      return false; // none, or unreadable: nothing to adopt
    }
  }

  /**
   * Waits until the container's process exists with its own signal dispositions (the wrapper's
   * child created the started file), or the wrapper is gone. Until then a TERM to the group could
   * be taken by the wrapper alone (see wrapper.ts), so start() does not return before. Real
   * timers: this waits on real process startup (milliseconds), which a fake clock cannot advance.
   */
  private async waitUntilExecuting(startedFile: string, tracked: Tracked): Promise<void> {
    const deadline = Date.now() + STARTUP_WAIT_MS;
    for (let delay = 1; !tracked.gone; delay = Math.min(delay * 2, 50)) {
      if (await exists(startedFile)) return;
      if (Date.now() > deadline) {
        this.logger.warn(
          { container: tracked.container.id, waitedMs: STARTUP_WAIT_MS },
          'the container process has not started yet; a stop right now may have to wait for its grace period',
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  stop(container: RunningContainer, gracePeriodMs: number): Promise<ContainerExit> {
    const tracked = this.tracked.get(container.id);
    if (!tracked) {
      return Promise.reject(
        new Error(
          `container ${container.id} is not known to this runtime: start it, or adopt it with recover(), first`,
        ),
      );
    }
    if (tracked.exit) return Promise.resolve(tracked.exit);
    tracked.stopping ??= (async () => {
      this.signalGroup(tracked, 'SIGTERM');
      let timer: TimerHandle | undefined;
      if (gracePeriodMs <= 0) this.signalGroup(tracked, 'SIGKILL');
      else timer = this.clock.setTimeout(() => this.signalGroup(tracked, 'SIGKILL'), gracePeriodMs);
      try {
        return await tracked.container.exited;
      } finally {
        if (timer) this.clock.clearTimeout(timer);
      }
    })();
    return tracked.stopping;
  }

  /**
   * What earlier runs of the agent left, so a restarted agent carries on where they stopped:
   * every instance whose end had not been recorded — still running (adopted: `exited` settles
   * when it ends, checked every `recoverPollMs`) or ended while the agent was down (`exited`
   * settled from the exit file; no exit file: 137/SIGKILL) — and, for a container with none of
   * those, its newest finished instance (`exited` settled with the recorded end), so restart
   * counts and a finished container's result survive an agent restart as they survive the
   * kubelet's (crash-loop backoff starts over, as the kubelet's does). Each instance is
   * reported once per runtime object, which also skips the instances it started itself.
   */
  async recover(): Promise<RunningContainer[]> {
    const found: RunningContainer[] = [];
    for (const podUid of await subdirectories(path.join(this.dataDir, 'pods'))) {
      for (const name of await subdirectories(podDir(this.dataDir, podUid))) {
        const records = await this.instances(podUid, name);
        const unfinished = records.filter((r) => !r.exit);
        for (const record of unfinished) {
          if (this.tracked.has(record.id)) continue;
          const tracked = this.newTracked(podUid, name, record.restartCount, record, false);
          if (isSameProcess(record.pid, record.startTime)) {
            await this.logs.track(podUid, name, record.restartCount);
            this.pollAdopted(tracked);
            this.logger.info({ container: record.id, pid: record.pid }, 'adopted a running container');
          } else {
            // Gone, or its pid now names another process. Its group, if any is left, is not
            // killed: after an unknown time, the group id may be someone else's.
            tracked.gone = true;
            await this.finish(tracked, undefined, { killLeftovers: false, observedNow: false });
          }
          found.push(tracked.container);
        }
        const newest = records.at(-1);
        if (unfinished.length || !newest?.exit || this.tracked.has(newest.id)) continue;
        const tracked = this.newTracked(podUid, name, newest.restartCount, newest, false);
        tracked.gone = true;
        tracked.finishing = true;
        tracked.exit = newest.exit;
        tracked.resolveExit(newest.exit);
        found.push(tracked.container);
      }
    }
    return found;
  }

  /**
   * Kills what is left of the pod (it should have been stopped already), then deletes its
   * directory (state, exit files, logs) and its cgroups.
   */
  async removePod(podUid: string): Promise<void> {
    const running = [...this.tracked.values()].filter((t) => t.container.podUid === podUid && !t.exit);
    for (const tracked of running) {
      this.logger.warn(
        { container: tracked.container.id },
        'removing a pod whose container still runs: killing it',
      );
    }
    await Promise.all(running.map((t) => this.stop(t.container, 0)));
    // Instances of earlier agent runs that nobody adopted.
    for (const name of await subdirectories(podDir(this.dataDir, podUid))) {
      for (const record of await this.instances(podUid, name)) {
        if (!record.exit && !this.tracked.has(record.id) && isSameProcess(record.pid, record.startTime)) {
          killGroup(record.pid, 'SIGKILL');
        }
      }
    }
    for (const [id, tracked] of this.tracked) {
      if (tracked.container.podUid !== podUid) continue;
      if (tracked.pollTimer) this.clock.clearTimeout(tracked.pollTimer);
      this.tracked.delete(id);
    }
    await this.logs.removePod(podUid);
    await fsp.rm(podDir(this.dataDir, podUid), { recursive: true, force: true });
    await this.cgroups.removePod(podUid);
  }

  /** The instances of a container recorded on disk, ascending by restart count. */
  async instances(podUid: string, name: string): Promise<InstanceRecord[]> {
    const dir = containerDir(this.dataDir, podUid, name);
    const records: InstanceRecord[] = [];
    for (const restartCount of await instanceNumbers(dir, '.json')) {
      const file = path.join(dir, `${restartCount}.json`);
      let state: InstanceState;
      try {
        state = JSON.parse(await fsp.readFile(file, 'utf8')) as InstanceState;
      } catch (err) {
        if (isNotFound(err)) continue; // pruned meanwhile
        this.logger.warn({ err, file }, 'unreadable container state file: ignoring it');
        continue;
      }
      if (!Number.isSafeInteger(state.pid) || typeof state.startTime !== 'string') {
        this.logger.warn({ file }, 'container state file without pid/startTime: ignoring it');
        continue;
      }
      records.push({ ...state, id: containerId(podUid, name, restartCount), podUid, name, restartCount });
    }
    return records;
  }

  /** How the latest finished instance of a container ended (for lastState after a restart). */
  async lastExit(
    podUid: string,
    name: string,
  ): Promise<{ restartCount: number; exit: ContainerExit } | undefined> {
    const records = await this.instances(podUid, name);
    for (let i = records.length - 1; i >= 0; i--) {
      const exit = this.tracked.get(records[i].id)?.exit ?? records[i].exit;
      if (exit) return { restartCount: records[i].restartCount, exit };
    }
    return undefined;
  }

  /** Stops watching adopted containers (their processes run on). */
  close(): void {
    for (const tracked of this.tracked.values()) {
      if (tracked.pollTimer) this.clock.clearTimeout(tracked.pollTimer);
      tracked.pollTimer = undefined;
    }
  }

  private newTracked(
    podUid: string,
    name: string,
    restartCount: number,
    state: InstanceState,
    child: boolean,
  ): Tracked {
    let resolveExit!: (exit: ContainerExit) => void;
    const exited = new Promise<ContainerExit>((resolve) => (resolveExit = resolve));
    const tracked: Tracked = {
      container: {
        id: containerId(podUid, name, restartCount),
        podUid,
        name,
        restartCount,
        pid: state.pid,
        startedAt: state.startedAt,
        ...(state.cannotRun ? { startError: state.cannotRun.message } : {}),
        exited,
      },
      state: {
        pid: state.pid,
        startTime: state.startTime,
        startedAt: state.startedAt,
        argv: state.argv,
        cannotRun: state.cannotRun,
        cgroup: state.cgroup,
      },
      child,
      gone: false,
      finishing: false,
      resolveExit,
    };
    this.tracked.set(tracked.container.id, tracked);
    return tracked;
  }

  /** Checks an adopted container (not our child: no exit event) until it is gone. */
  private pollAdopted(tracked: Tracked): void {
    tracked.pollTimer = this.clock.setTimeout(() => {
      tracked.pollTimer = undefined;
      if (tracked.finishing) return;
      if (isSameProcess(tracked.state.pid, tracked.state.startTime)) {
        this.pollAdopted(tracked);
        return;
      }
      tracked.gone = true;
      // It ended within the last poll interval: its group id cannot have been reused yet.
      void this.finish(tracked, undefined, { killLeftovers: true, observedNow: true });
    }, this.recoverPollMs);
  }

  /** The wrapper is gone: works out how the container ended, records it, settles `exited`. */
  private async finish(
    tracked: Tracked,
    wrapperStatus: WrappedStatus | undefined,
    opts: { killLeftovers: boolean; observedNow: boolean },
  ): Promise<void> {
    if (tracked.finishing) return;
    tracked.finishing = true;
    const { podUid, name, restartCount, id } = tracked.container;
    if (tracked.pollTimer) this.clock.clearTimeout(tracked.pollTimer);
    if (opts.killLeftovers) {
      try {
        killGroup(tracked.state.pid, 'SIGKILL');
      } catch (err) {
        this.logger.warn({ err, container: id }, 'could not kill what the container left running');
      }
    }
    let exit: ContainerExit;
    try {
      exit = await this.readExit(tracked, wrapperStatus, opts.observedNow);
    } catch (err) {
      this.logger.warn(
        { err, container: id },
        'could not read how a container ended: reporting it as killed',
      );
      exit = this.toExit(tracked.state, statusFromSignal('SIGKILL'), this.clock.now(), false);
    }
    tracked.exit = exit;
    try {
      const state: InstanceState = { ...tracked.state, exit };
      await writeFileAtomic(this.file(podUid, name, restartCount, '.json'), JSON.stringify(state));
    } catch (err) {
      // The pod's directory was removed meanwhile: nothing left to record into.
      if (!isNotFound(err)) this.logger.warn({ err, container: id }, 'could not record a container exit');
    }
    await this.logs
      .markEnded(podUid, name, restartCount)
      .catch((err: unknown) => this.logger.warn({ err, container: id }, 'could not finish a container log'));
    if (tracked.state.cgroup) await this.cgroups.release(tracked.state.cgroup.path);
    tracked.resolveExit(exit);
  }

  private async readExit(
    tracked: Tracked,
    wrapperStatus: WrappedStatus | undefined,
    observedNow: boolean,
  ): Promise<ContainerExit> {
    const { podUid, name, restartCount } = tracked.container;
    const exitFile = this.file(podUid, name, restartCount, '.exit');
    let status: WrappedStatus | undefined;
    let finishedAt = this.clock.now();
    try {
      status = parseExitFile(await fsp.readFile(exitFile, 'utf8'));
      // Ended while the agent was down: the wrapper wrote the file as the container ended.
      if (!observedNow) finishedAt = Math.floor((await fsp.stat(exitFile)).mtimeMs);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    // No exit file: the wrapper was killed too (SIGKILL to the group), or died before its child.
    status ??= wrapperStatus ?? statusFromSignal('SIGKILL');
    const oomKilled =
      tracked.state.cgroup !== undefined &&
      (await oomKills(tracked.state.cgroup.path)) > tracked.state.cgroup.oomKillsBefore;
    return this.toExit(tracked.state, status, finishedAt, oomKilled);
  }

  private toExit(
    state: InstanceState,
    status: WrappedStatus,
    finishedAt: number,
    oomKilled: boolean,
  ): ContainerExit {
    const base = {
      exitCode: status.exitCode,
      ...(status.signal ? { signal: status.signal } : {}),
      finishedAt,
    };
    if (state.cannotRun && (status.exitCode === 126 || status.exitCode === 127)) {
      // What the kubelet reports when the runtime could not start the command (containerd's
      // StartError), with the exit code the wrapper's exec really ended with.
      return { ...base, reason: 'StartError', message: state.cannotRun.message };
    }
    if (oomKilled && status.signal === 'SIGKILL') {
      return { ...base, reason: 'OOMKilled', message: 'the container used more memory than its limit' };
    }
    return { ...base, reason: status.exitCode === 0 ? 'Completed' : 'Error' };
  }

  /** Signals the container's process group, unless its pid may name another process by now. */
  private signalGroup(tracked: Tracked, signal: NodeJS.Signals): void {
    if (tracked.gone) return;
    if (!tracked.child && !isSameProcess(tracked.state.pid, tracked.state.startTime)) return;
    killGroup(tracked.state.pid, signal);
  }

  /**
   * Keeps the files of the current and the previous instance (for `logs --previous` and
   * lastState), deletes older finished ones: a container in a crash loop would fill the disk.
   */
  private async pruneOldInstances(podUid: string, name: string, current: number): Promise<void> {
    try {
      const records = await this.instances(podUid, name);
      const logNumbers = await this.logs.instanceNumbers(podUid, name);
      const old = new Set(
        [...records.map((r) => r.restartCount), ...logNumbers].filter((n) => n < current - 1),
      );
      for (const restartCount of old) {
        const record = records.find((r) => r.restartCount === restartCount);
        const tracked = this.tracked.get(containerId(podUid, name, restartCount));
        if (tracked && !tracked.exit) continue;
        if (!tracked && record && !record.exit && isSameProcess(record.pid, record.startTime)) continue;
        this.tracked.delete(containerId(podUid, name, restartCount));
        await fsp.rm(this.file(podUid, name, restartCount, '.json'), { force: true });
        await fsp.rm(this.file(podUid, name, restartCount, '.exit'), { force: true });
        await fsp.rm(this.file(podUid, name, restartCount, '.started'), { force: true });
        await this.logs.removeInstance(podUid, name, restartCount);
      }
    } catch (err) {
      this.logger.warn({ err, pod: podUid, container: name }, 'could not delete old container instances');
    }
  }

  private file(
    podUid: string,
    name: string,
    restartCount: number,
    file: '.json' | '.started' | '.exit',
  ): string {
    return instancePath(this.dataDir, podUid, name, restartCount, file);
  }
}

export function containerId(podUid: string, name: string, restartCount: number): string {
  return `${podUid}/${name}/${restartCount}`;
}

/** The container's environment: its spec's, plus the agent's PATH and HOME unless it sets them. */
export function containerEnv(
  specEnv: Record<string, string>,
  agentEnv: Record<string, string | undefined>,
): Record<string, string> {
  const env = { ...specEnv };
  env.PATH ??= agentEnv.PATH ?? DEFAULT_PATH;
  if (env.HOME === undefined && agentEnv.HOME !== undefined) env.HOME = agentEnv.HOME;
  return env;
}

async function checkWorkingDir(workingDir: string | undefined, what: string): Promise<string> {
  const dir = workingDir ?? '/';
  if (!path.isAbsolute(dir)) {
    throw new Error(`workingDir "${dir}" of ${what} must be an absolute path`);
  }
  let stat;
  try {
    stat = await fsp.stat(dir);
  } catch (err) {
    if (isNotFound(err)) {
      throw new Error(
        `workingDir ${dir} of ${what} does not exist on this node: create it, or change workingDir`,
      );
    }
    throw new Error(`workingDir ${dir} of ${what} cannot be used: ${(err as Error).message}`);
  }
  if (!stat.isDirectory()) {
    throw new Error(`workingDir ${dir} of ${what} is not a directory: point workingDir at a directory`);
  }
  return dir;
}

async function exists(file: string): Promise<boolean> {
  try {
    await fsp.access(file);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM/SIGKILL to a process group; a group that is already gone is fine. */
function killGroup(pgid: number, signal: NodeJS.Signals): void {
  if (!Number.isSafeInteger(pgid) || pgid <= 1) return; // -1 and -0 would hit far more than a group
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}
