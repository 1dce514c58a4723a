/**
 * One pod's life on this node (the kubelet's pod worker and syncPod): admit it, run its init
 * containers one by one, then its containers; restart them by the pod's restartPolicy with
 * crash-loop backoff; follow their probes; stop them gracefully when the pod is deleted; and
 * publish the pod's status after every change. Syncs of one pod never overlap: a change that
 * arrives during a sync triggers another one after it.
 */
import type { ContainerSecurity } from '../runtime/types.js';
import type { Mount } from '../runtime/mounts.js';
import type { VolumesSetUp } from './volumes/manager.js';
import { usesConfigEnv, type ConfigEnv } from './configenv.js';
import { podFieldValue } from './downward.js';
import { resourcesOf } from '../../client/api/resources.js';
import type { Container, Pod } from '../../client/api/types.js';
import type { EventRecorder } from '../../client/events/recorder.js';
import type { Clock, TimerHandle } from '../../client/util/clock.js';
import { nextTurn } from '../../client/util/nextturn.js';
import type { Logger } from '../logger.js';
import type { ContainerExit, ContainerSpec, Runtime, RunningContainer } from '../runtime/types.js';
import type { Admission } from './admission.js';
import type { CrashLoopBackoff } from './backoff.js';
import { newContainerRecord, type ContainerRecord } from './containers.js';
import { podStatus, type PodRuntimeState } from './status.js';
import type { PodStatus } from '../../client/api/types.js';

/** Probes of one running container; the worker hears back through the callbacks. */
export interface ContainerProbes {
  stop(): void;
}

export interface ProbeCallbacks {
  ready(ready: boolean): void;
  started(): void;
  /** The liveness probe failed its threshold: the container is restarted. */
  unhealthy(message: string): void;
}

/** Why no runtime can run a container; `retry` when it may change (a daemon that is down). */
export interface RuntimeRefusal {
  error: string;
  retry?: boolean;
}

/** How often a container held by a missing ConfigMap or Secret looks again. */
export const CONFIG_RETRY_MS = 10_000;

export interface PodWorkerDeps {
  runtime: Runtime;
  runtimeFor(container: Container): Promise<{ runtime: Runtime; scheme: string } | RuntimeRefusal>;
  clock: Clock;
  logger: Logger;
  recorder: EventRecorder;
  backoff: CrashLoopBackoff;
  hostIP: () => string;
  /** Whether this node may run the pod (checked once, before anything starts). */
  admit(pod: Pod): Admission;
  /** The container's environment from ConfigMaps and Secrets (configenv.ts). */
  configEnv?(pod: Pod, container: Container): Promise<ConfigEnv>;
  /**
   * The pod's volumes (volumes/manager.ts): set up before its first container, refreshed every
   * `syncFrequencyMs` while it runs. Absent (hollow nodes): containers get no mounts.
   */
  volumes?: {
    setUp(pod: Pod): Promise<VolumesSetUp>;
    mountsFor(pod: Pod, container: Container, paths: Map<string, string>): Promise<Mount[]>;
    syncFrequencyMs: number;
  };
  /** Who the container runs as (security.ts); absent: as the agent, unchecked. */
  security?(pod: Pod, container: Container): { security: ContainerSecurity } | { error: string };
  publishStatus(pod: Pod, status: PodStatus): void;
  /**
   * Hands over a deleted pod whose containers have all stopped, with its last status: the
   * status manager writes it, then deletes the pod (grace 0), trying until it is gone.
   */
  finalizeDeletion(pod: Pod, status: PodStatus): void;
  startProbes(
    pod: Pod,
    container: Container,
    running: RunningContainer,
    callbacks: ProbeCallbacks,
  ): ContainerProbes | undefined;
  /** The instance of a container ended (its log will not grow any more). */
  containerEnded?(podUid: string, name: string, restartCount: number): void;
  /**
   * Called once nothing of the pod runs any more; `removedFromApi` when the API had already
   * dropped it (no final delete to make).
   */
  onFinished(uid: string, removedFromApi: boolean): void;
}

const DEFAULT_GRACE_SECONDS = 30;

export class PodWorker {
  private pod: Pod;
  private readonly state: PodRuntimeState;
  private admitted = false;
  /** The pod left the API (or is being deleted): stop everything. */
  private terminating = false;
  private removedFromApi = false;
  private finished = false;
  private syncing: Promise<void> | undefined;
  private dirty = false;
  private wakeTimer: TimerHandle | undefined;
  private readonly probes = new Map<string, ContainerProbes>();
  /** Instances being stopped on purpose (liveness, deletion): their exits are expected. */
  private readonly stopping = new Set<string>();
  /** Which runtime runs each instance (processes, or docker/podman for images). */
  private readonly runtimes = new Map<string, Runtime>();
  /** Where each volume is, once set up. */
  private volumePaths: Map<string, string> | undefined;
  private volumeTimer: TimerHandle | undefined;
  private deadlineTimer: TimerHandle | undefined;
  private refreshing: Promise<unknown> | undefined;
  /** The last FailedMount message (said once until it changes). */
  private mountProblem: string | undefined;

  constructor(
    pod: Pod,
    private readonly deps: PodWorkerDeps,
  ) {
    this.pod = pod;
    this.state = {
      containers: new Map(),
      initialized: (pod.spec?.initContainers ?? []).length === 0,
      startTime: Date.parse(pod.status?.startTime ?? '') || deps.clock.now(),
      hostIP: deps.hostIP(),
      runtimeName: 'process',
    };
  }

  get uid(): string {
    return this.pod.metadata!.uid!;
  }

  get key(): string {
    return `${this.pod.metadata!.namespace}/${this.pod.metadata!.name}`;
  }

  /** Containers of an earlier agent run of this pod: adopt them instead of starting copies. */
  adopt(containers: RunningContainer[], runtime: Runtime, scheme: string): void {
    if (containers.length) this.state.runtimeName = scheme;
    for (const c of containers) this.runtimes.set(c.id, runtime);
    // The newest instance of each container is the one that counts.
    const newest = new Map<string, RunningContainer>();
    for (const c of containers) {
      const seen = newest.get(c.name);
      if (!seen || c.restartCount > seen.restartCount) newest.set(c.name, c);
    }
    for (const c of newest.values()) {
      const record = this.record(c.name);
      record.restartCount = c.restartCount;
      record.running = c;
      record.waiting = undefined;
      // As the kubelet after its own restart: a container without a readiness (startup) probe
      // is ready (started) while it runs; one with probes is not until they pass again.
      this.resetProbeResults(record, this.specOf(c.name));
      this.watchExit(record, c);
      this.admitted = true;
    }
    if (newest.size) {
      const inits = this.pod.spec?.initContainers ?? [];
      // Regular containers only start after the init containers succeeded.
      if ((this.pod.spec?.containers ?? []).some((c) => newest.has(c.name ?? '')))
        this.state.initialized = true;
      else if (inits.length && !inits.some((c) => newest.has(c.name ?? ''))) this.state.initialized = false;
    }
  }

  /** A newer version of the pod from the API. */
  update(pod: Pod): void {
    this.pod = pod;
    if (pod.metadata?.deletionTimestamp) this.terminating = true;
    this.wake();
  }

  /** The pod is gone from the API (force-deleted): stop what runs, then forget it. */
  removed(): void {
    this.removedFromApi = true;
    this.terminating = true;
    this.wake();
  }

  /** Waits for the current sync (for tests and shutdown). */
  async settled(): Promise<void> {
    while (this.syncing) await this.syncing;
  }

  /** Stops probes and timers without touching the containers (the agent is shutting down). */
  detach(): void {
    if (this.wakeTimer) this.deps.clock.clearTimeout(this.wakeTimer);
    if (this.volumeTimer) this.deps.clock.clearTimeout(this.volumeTimer);
    if (this.deadlineTimer) this.deps.clock.clearTimeout(this.deadlineTimer);
    for (const p of this.probes.values()) p.stop();
    this.probes.clear();
    this.finished = true;
  }

  wake(): void {
    if (this.finished) return;
    if (this.syncing) {
      this.dirty = true;
      return;
    }
    this.syncing = this.syncLoop().finally(() => (this.syncing = undefined));
  }

  private async syncLoop(): Promise<void> {
    do {
      this.dirty = false;
      try {
        await this.sync();
      } catch (err) {
        this.deps.logger.error(
          { pod: this.key, err: (err as Error).message },
          'pod sync failed; retrying in 10 s',
        );
        this.wakeAt(this.deps.clock.now() + 10_000);
      }
    } while (this.dirty && !this.finished);
  }

  private async sync(): Promise<void> {
    if (this.terminating) return this.terminate();
    if (this.isDone()) return this.publish();
    if (!this.admitted) {
      const admission = this.deps.admit(this.pod);
      if (!admission.admit) {
        this.state.failed = { reason: admission.reason, message: admission.message };
        this.deps.recorder.event(this.pod, 'Warning', admission.reason, admission.message);
        this.deps.logger.warn({ pod: this.key, reason: admission.reason }, admission.message);
        return this.publish();
      }
      this.admitted = true;
    }
    if (this.pastActiveDeadline()) return this.failPastDeadline();
    if (!(await this.volumesReady())) return this.terminating ? undefined : this.publish();
    if (this.terminating) return;
    if (!this.state.initialized) await this.syncInitContainers();
    if (this.state.initialized && !this.state.failed) {
      for (const container of this.pod.spec?.containers ?? []) {
        // Deleted while an earlier container started: start no more (the next sync stops
        // what runs), as the kubelet cancels a pod's sync when it starts terminating.
        if (this.terminating) return;
        await this.syncContainer(container);
      }
    }
    if (this.terminating) return;
    this.publish();
  }

  /**
   * The kubelet's activeDeadlineHandler: a pod with spec.activeDeadlineSeconds fails once it has
   * been active that long since its startTime; until then a timer wakes the worker at that time.
   */
  private pastActiveDeadline(): boolean {
    const seconds = this.pod.spec?.activeDeadlineSeconds;
    if (seconds === undefined || seconds === null) return false;
    const deadline = this.state.startTime + seconds * 1000;
    if (this.deps.clock.now() >= deadline) return true;
    if (!this.deadlineTimer)
      this.deadlineTimer = this.deps.clock.setTimeout(() => {
        this.deadlineTimer = undefined;
        this.wake();
      }, deadline - this.deps.clock.now());
    return false;
  }

  /** Stops what runs (with the grace period) and fails the pod with DeadlineExceeded. */
  private async failPastDeadline(): Promise<void> {
    const message = 'Pod was active on the node longer than the specified deadline';
    this.state.failed = { reason: 'DeadlineExceeded', message };
    this.deps.recorder.event(this.pod, 'Normal', 'DeadlineExceeded', message);
    this.deps.logger.info({ pod: this.key }, message);
    const running = [...this.state.containers.values()].filter((r) => r.running);
    for (const r of running) this.stopping.add(r.running!.id);
    this.publish();
    await Promise.all(running.map((r) => this.runtimeOf(r.running!).stop(r.running!, this.graceMs())));
    await nextTurn();
    this.publish();
  }

  /**
   * The kubelet's WaitForAttachAndMount: no container starts before every volume is there. A
   * missing ConfigMap or Secret keeps the pod in ContainerCreating, with a FailedMount event,
   * and is looked for again every CONFIG_RETRY_MS.
   */
  private async volumesReady(): Promise<boolean> {
    const volumes = this.deps.volumes;
    if (!volumes || this.volumePaths) return true;
    const result = await this.setUpVolumes();
    if (!result) {
      // The first containers to run say ContainerCreating (those after init ones, PodInitializing).
      const inits = this.pod.spec?.initContainers ?? [];
      for (const c of inits.length ? inits : (this.pod.spec?.containers ?? [])) this.record(c.name!);
      this.wakeAt(this.deps.clock.now() + CONFIG_RETRY_MS);
      return false;
    }
    this.volumePaths = result;
    this.scheduleVolumeRefresh();
    return true;
  }

  /** Sets up (or refreshes) the volumes; says why not in a FailedMount event when it cannot. */
  private async setUpVolumes(): Promise<Map<string, string> | undefined> {
    let message: string;
    try {
      const result = await this.deps.volumes!.setUp(this.pod);
      if ('paths' in result) {
        this.mountProblem = undefined;
        return result.paths;
      }
      message = `MountVolume.SetUp failed for volume "${result.volume}" : ${result.error}`;
    } catch (err) {
      message = `MountVolume.SetUp failed: ${(err as Error).message}`;
    }
    if (message !== this.mountProblem) {
      this.mountProblem = message;
      this.deps.recorder.event(this.pod, 'Warning', 'FailedMount', message);
      this.deps.logger.warn({ pod: this.key }, message);
    }
    return undefined;
  }

  /** Mounted ConfigMaps, Secrets and pod fields follow their changes (the kubelet's periodic sync). */
  private scheduleVolumeRefresh(): void {
    if (this.finished) return;
    this.volumeTimer = this.deps.clock.setTimeout(() => {
      this.volumeTimer = undefined;
      if (this.terminating || this.finished) return;
      this.refreshing = this.setUpVolumes().finally(() => {
        this.refreshing = undefined;
        this.scheduleVolumeRefresh();
      });
    }, this.deps.volumes!.syncFrequencyMs);
  }

  /** Init containers run one at a time, in order; each must succeed before the next. */
  private async syncInitContainers(): Promise<void> {
    for (const container of this.pod.spec?.initContainers ?? []) {
      const record = this.record(container.name!);
      if (record.running) return;
      if (record.lastExit?.exit.exitCode === 0) continue;
      if (record.lastExit && this.pod.spec?.restartPolicy === 'Never') {
        this.state.failed = {
          reason: 'Init:Error',
          message: `init container ${container.name} exited with ${record.lastExit.exit.exitCode} and the pod's restartPolicy is Never`,
        };
        return;
      }
      await this.startIfDue(container, record);
      return;
    }
    this.state.initialized = true;
  }

  private async syncContainer(container: Container): Promise<void> {
    const record = this.record(container.name!);
    if (record.running) return;
    if (record.lastExit && !this.shouldRestart(record.lastExit.exit)) {
      record.waiting = undefined;
      return;
    }
    await this.startIfDue(container, record);
  }

  private shouldRestart(exit: ContainerExit): boolean {
    const policy = this.pod.spec?.restartPolicy ?? 'Always';
    return policy === 'Always' || (policy === 'OnFailure' && exit.exitCode !== 0);
  }

  private async startIfDue(container: Container, record: ContainerRecord): Promise<void> {
    const now = this.deps.clock.now();
    if (record.backoffUntil !== undefined && now < record.backoffUntil) {
      // A try that failed before anything ran goes on saying why while it waits.
      if (record.waiting?.reason !== 'RunContainerError') {
        const seconds = Math.round((record.backoffUntil - (record.lastExit?.exit.finishedAt ?? now)) / 1000);
        record.waiting = {
          reason: 'CrashLoopBackOff',
          message: `back-off ${seconds}s restarting failed container=${container.name} pod=${this.pod.metadata?.name}_${this.pod.metadata?.namespace}(${this.uid})`,
        };
      }
      this.wakeAt(record.backoffUntil);
      return;
    }
    const chosen = await this.deps.runtimeFor(container);
    // Looking for a runtime may take a while (a daemon is asked): the pod may be deleted by now.
    if (this.terminating) return;
    if ('error' in chosen) {
      record.waiting = { reason: 'RunContainerError', message: chosen.error };
      this.deps.recorder.event(this.pod, 'Warning', 'Failed', `Error: ${chosen.error}`);
      if (chosen.retry) {
        // The kubelet's way with a runtime that fails to start a container: wait, try again
        // with the crash-loop back-off.
        const failedAt = this.deps.clock.now();
        record.backoffUntil = this.deps.backoff.restartAt(`${this.uid}/${container.name}`, failedAt);
        this.wakeAt(record.backoffUntil);
        return;
      }
      // Nothing on this node can run it: the pod fails with the reason, as a bad image would.
      this.state.failed = { reason: 'RunContainerError', message: chosen.error };
      return;
    }
    this.state.runtimeName = chosen.scheme;
    const restartCount = record.lastExit ? record.restartCount + 1 : record.restartCount;
    // The kubelet's CreateContainerConfigError: wait, look again, start once it is right.
    const holdForConfig = (message: string) => {
      if (record.waiting?.message !== message)
        this.deps.recorder.event(this.pod, 'Warning', 'Failed', `Error: ${message}`);
      record.waiting = { reason: 'CreateContainerConfigError', message };
      this.wakeAt(this.deps.clock.now() + CONFIG_RETRY_MS);
    };
    const secured = this.deps.security?.(this.pod, container);
    if (secured && 'error' in secured) return holdForConfig(secured.error);
    let fromConfig: Record<string, string> = {};
    if (usesConfigEnv(container) && this.deps.configEnv) {
      const resolved = await this.deps.configEnv(this.pod, container);
      if (this.terminating) return;
      if ('error' in resolved) return holdForConfig(resolved.error);
      if (resolved.skipped.length)
        this.deps.recorder.event(
          this.pod,
          'Warning',
          'InvalidEnvironmentVariableNames',
          `Keys [${resolved.skipped.join(', ')}] from the EnvFrom configMap or secret were skipped since they are invalid environment variable names.`,
        );
      fromConfig = resolved.env;
    }
    const spec = containerSpec(this.pod, container, restartCount, fromConfig);
    if (secured) spec.security = secured.security;
    if (this.deps.volumes && this.volumePaths && container.volumeMounts?.length)
      spec.mounts = await this.deps.volumes.mountsFor(this.pod, container, this.volumePaths);
    if (this.terminating) return;
    try {
      const running = await chosen.runtime.start(spec);
      this.runtimes.set(running.id, chosen.runtime);
      record.restartCount = restartCount;
      record.running = running;
      record.waiting = undefined;
      this.resetProbeResults(record, container);
      this.watchExit(record, running);
      if (running.startError) {
        // The kubelet's FailedToStartContainer: a Warning, never "Started"; the status says
        // StartError with the same message once the instance ended (at once).
        this.deps.recorder.event(this.pod, 'Warning', 'Failed', `Error: ${running.startError}`);
        this.deps.logger.warn(
          { pod: this.key, container: container.name, restartCount, reason: running.startError },
          'container command cannot run',
        );
        return;
      }
      this.deps.recorder.event(this.pod, 'Normal', 'Started', `Started container ${container.name}`);
      this.deps.logger.info(
        { pod: this.key, container: container.name, restartCount, pid: running.pid },
        'container started',
      );
    } catch (err) {
      const message = (err as Error).message;
      record.waiting = { reason: 'CreateContainerError', message };
      record.backoffUntil = this.deps.clock.now() + 10_000;
      this.deps.recorder.event(this.pod, 'Warning', 'Failed', `Error: ${message}`);
      this.wakeAt(record.backoffUntil);
    }
  }

  /** The container of the pod's spec (init or regular) named `name`. */
  private specOf(name: string): Container | undefined {
    return [...(this.pod.spec?.initContainers ?? []), ...(this.pod.spec?.containers ?? [])].find(
      (c) => c.name === name,
    );
  }

  /** A new (or newly adopted) instance: ready and started unless a probe has to say so first. */
  private resetProbeResults(record: ContainerRecord, container: Container | undefined): void {
    record.ready = !container?.readinessProbe;
    record.started = !container?.startupProbe;
  }

  private watchExit(record: ContainerRecord, running: RunningContainer): void {
    const container = this.specOf(record.name);
    if (container && !this.terminating) {
      const probes = this.deps.startProbes(this.pod, container, running, {
        ready: (ready) => {
          if (record.running !== running || record.ready === ready) return;
          record.ready = ready;
          this.wake();
        },
        started: () => {
          if (record.running !== running || record.started) return;
          record.started = true;
          this.wake();
        },
        unhealthy: (message) => {
          if (record.running !== running || this.stopping.has(running.id)) return;
          this.deps.recorder.event(this.pod, 'Warning', 'Unhealthy', `Liveness probe failed: ${message}`);
          this.deps.recorder.event(
            this.pod,
            'Normal',
            'Killing',
            `Container ${record.name} failed liveness probe, will be restarted`,
          );
          this.stopping.add(running.id);
          void this.runtimeOf(running).stop(running, this.graceMs());
        },
      });
      if (probes) this.probes.set(running.id, probes);
    }
    void running.exited.then((exit) => {
      this.probes.get(running.id)?.stop();
      this.probes.delete(running.id);
      this.stopping.delete(running.id);
      this.runtimes.delete(running.id);
      this.deps.containerEnded?.(running.podUid, running.name, running.restartCount);
      if (record.running !== running) return;
      record.running = undefined;
      record.ready = false;
      record.started = false;
      record.lastExit = {
        exit,
        startedAt: running.startedAt,
        containerID: `${this.state.runtimeName}://${running.id}`,
      };
      record.waiting = undefined;
      if (!this.terminating && this.shouldRestart(exit)) {
        record.backoffUntil = this.deps.backoff.restartAt(`${this.uid}/${record.name}`, exit.finishedAt);
      }
      this.deps.logger.info(
        { pod: this.key, container: record.name, exitCode: exit.exitCode, reason: exit.reason },
        'container exited',
      );
      this.wake();
    });
  }

  /** Deleted: SIGTERM everything, SIGKILL after the grace period, then the final delete. */
  private async terminate(): Promise<void> {
    const grace = this.graceMs();
    const running = [...this.state.containers.values()].filter((r) => r.running);
    for (const r of running) {
      this.stopping.add(r.running!.id);
      this.deps.recorder.event(this.pod, 'Normal', 'Killing', `Stopping container ${r.name}`);
    }
    await Promise.all(running.map((r) => this.runtimeOf(r.running!).stop(r.running!, grace)));
    // Let the exit handlers record how each one ended.
    await nextTurn();
    // A refresh still writing would leave files behind the pod's removal.
    await this.refreshing;
    if (this.finished) return;
    if (!this.removedFromApi) {
      this.state.hostIP = this.deps.hostIP();
      this.deps.finalizeDeletion(this.pod, podStatus(this.pod, this.state, this.deps.clock.now()));
    }
    this.detach();
    this.deps.backoff.forget(`${this.uid}/`);
    this.deps.onFinished(this.uid, this.removedFromApi);
  }

  private runtimeOf(c: RunningContainer): Runtime {
    return this.runtimes.get(c.id) ?? this.deps.runtime;
  }

  private graceMs(): number {
    const seconds =
      this.pod.metadata?.deletionGracePeriodSeconds ??
      this.pod.spec?.terminationGracePeriodSeconds ??
      DEFAULT_GRACE_SECONDS;
    return Math.max(0, seconds) * 1000;
  }

  private isDone(): boolean {
    if (this.state.failed) return true;
    const phase = podStatus(this.pod, this.state, this.deps.clock.now()).phase;
    return this.admitted && (phase === 'Succeeded' || phase === 'Failed');
  }

  private publish(): void {
    this.state.hostIP = this.deps.hostIP();
    this.deps.publishStatus(this.pod, podStatus(this.pod, this.state, this.deps.clock.now()));
  }

  private record(name: string): ContainerRecord {
    let r = this.state.containers.get(name);
    if (!r) this.state.containers.set(name, (r = newContainerRecord(name)));
    return r;
  }

  private wakeAt(at: number): void {
    if (this.wakeTimer) this.deps.clock.clearTimeout(this.wakeTimer);
    this.wakeTimer = this.deps.clock.setTimeout(
      () => {
        this.wakeTimer = undefined;
        this.wake();
      },
      Math.max(0, at - this.deps.clock.now()),
    );
  }
}

/** What the runtime needs to start one container of the pod. */
export function containerSpec(
  pod: Pod,
  container: Container,
  restartCount: number,
  fromConfig: Record<string, string> = {},
): ContainerSpec {
  // envFrom first, then env in order (env wins a clash), as the kubelet builds it.
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(fromConfig)) {
    if (!container.env?.some((e) => e.name === k)) env[k] = v;
  }
  for (const e of container.env ?? []) {
    if (!e.name) continue;
    const from = e.valueFrom;
    if (from?.configMapKeyRef || from?.secretKeyRef) {
      if (fromConfig[e.name] !== undefined) env[e.name] = fromConfig[e.name];
      continue;
    }
    env[e.name] = from?.fieldRef?.fieldPath ? podFieldValue(pod, from.fieldRef.fieldPath) : (e.value ?? '');
  }
  const argv = [...(container.command ?? []), ...(container.args ?? [])];
  const limits = resourcesOf(container.resources?.limits);
  return {
    podUid: pod.metadata!.uid!,
    podKey: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
    name: container.name!,
    restartCount,
    argv,
    env,
    ...(container.workingDir ? { workingDir: container.workingDir } : {}),
    ...(limits.milliCPU || limits.memory
      ? { limits: { milliCPU: limits.milliCPU || undefined, memoryBytes: limits.memory || undefined } }
      : {}),
    ...(container.image
      ? { image: container.image, command: container.command ?? [], args: container.args ?? [] }
      : {}),
  };
}
