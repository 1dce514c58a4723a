/**
 * The pods of this node (the kubelet's pod manager and sync loop): watches the pods bound to
 * the node, gives each a worker, and on start adopts the containers an earlier run of the agent
 * left running — so an agent restart never starts a second copy and never stops a pod. The
 * containers are separate processes: they keep running while the agent or the control plane
 * is away.
 */
import { resolveConfigEnv } from './configenv.js';
import { containerSecurity, type NodeSecurity } from './security.js';
import { isPodTerminal } from '../../client/api/pods.js';
import type { Container, Node, Pod } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { SharedIndexInformer } from '../../client/cache/informer.js';
import type { Client } from '../../client/client.js';
import type { EventRecorder } from '../../client/events/recorder.js';
import type { Clock } from '../../client/util/clock.js';
import type { ControlPlaneContact } from '../contact.js';
import type { Logger } from '../logger.js';
import type { Runtime, RunningContainer } from '../runtime/types.js';
import { admitPod } from './admission.js';
import { CrashLoopBackoff, type CrashLoopBackoffOptions } from './backoff.js';
import { PodStatusManager, type FinalDeleteBackoff } from './statusmanager.js';
import { howToStartDaemon } from '../runtime/image.js';
import type { ImagesMissing } from './runtimes.js';
import { DEFAULT_SYNC_FREQUENCY_MS, PodVolumes } from './volumes/manager.js';
import {
  PodWorker,
  type ContainerProbes,
  type PodWorkerDeps,
  type ProbeCallbacks,
  type RuntimeRefusal,
} from './worker.js';

export interface RuntimeChoice {
  runtime: Runtime;
  /** containerID scheme: "process", "docker", "podman", "hollow". */
  scheme: string;
}

export interface PodManagerOptions {
  client: Client;
  nodeName: string;
  clock: Clock;
  logger: Logger;
  recorder: EventRecorder;
  /** Runs containers without an image. */
  processes: RuntimeChoice;
  /** Runs containers that name an image (docker or podman), when one is installed. */
  images?: RuntimeChoice;
  /** Why `images` is absent (and how to look again). */
  imagesMissing?: ImagesMissing;
  hostIP: () => string;
  startProbes?: (
    pod: Pod,
    container: Container,
    running: RunningContainer,
    callbacks: ProbeCallbacks,
  ) => ContainerProbes | undefined;
  containerEnded?: (podUid: string, name: string, restartCount: number) => void;
  /**
   * The agent's informers, shared with its other parts (the status loop reads the Node from
   * them); their owner stops them. Absent: the manager makes and stops its own.
   */
  informers?: SharedInformerFactory;
  /** Logs outages of the control plane once (pod status writes failing meanwhile: debug). */
  contact?: ControlPlaneContact;
  /** How long an orphaned container (its pod gone while the agent was away) gets to stop. */
  orphanGraceMs?: number;
  crashLoopBackoff?: CrashLoopBackoffOptions;
  /** Who containers run as (--pod-user, --refuse-root-pods); absent: as the agent, unchecked (hollow nodes). */
  security?: NodeSecurity;
  /** How a failed final delete is tried again (default: after 1 s, doubling up to 30 s). */
  finalDeleteBackoff?: FinalDeleteBackoff;
  /**
   * Where pod volumes live (`<dataDir>/volumes`) and how often mounted ConfigMaps and Secrets
   * are read again (--sync-frequency); absent (hollow nodes): no volumes.
   */
  volumes?: { dir: string; syncFrequencyMs?: number; agentUid?: number };
}

export class PodManager {
  private readonly factory: SharedInformerFactory;
  private readonly ownsInformers: boolean;
  private readonly pods: SharedIndexInformer<'Pod'>;
  private readonly nodes: SharedIndexInformer<'Node'>;
  private readonly workers = new Map<string, PodWorker>();
  private workerDeps: PodWorkerDeps | undefined;
  private readonly backoff: CrashLoopBackoff;
  readonly statuses: PodStatusManager;
  /** Containers from an earlier run, by pod uid, until their pods are known. */
  private readonly leftovers = new Map<
    string,
    Array<{ container: RunningContainer; choice: RuntimeChoice }>
  >();
  private started = false;
  /**
   * Pods whose worker finished (all stopped after their deletion): late updates for them start
   * nothing. Their final delete is the status manager's until the API object is gone; each
   * later sight of such a pod tries it again at once.
   */
  private readonly finished = new Set<string>();
  /** The image runtime, once one answers (at start, or later when its daemon was started). */
  private images: RuntimeChoice | undefined;
  private imagesMissing: ImagesMissing | undefined;
  private lookingForImages: Promise<void> | undefined;
  private readonly volumes: PodVolumes | undefined;

  constructor(private readonly options: PodManagerOptions) {
    const { client, nodeName, clock, logger } = options;
    if (options.volumes)
      this.volumes = new PodVolumes({
        dir: options.volumes.dir,
        client,
        clock,
        agentUid: options.volumes.agentUid ?? process.getuid?.() ?? 0,
      });
    this.backoff = new CrashLoopBackoff(options.crashLoopBackoff);
    this.images = options.images;
    this.imagesMissing = options.imagesMissing;
    this.ownsInformers = !options.informers;
    this.factory =
      options.informers ??
      new SharedInformerFactory(client, {
        clock,
        logger: logger.child({ component: 'pod-informer' }),
      });
    this.pods = this.factory.informerFor('Pod', { fieldSelector: `spec.nodeName=${nodeName}` });
    this.nodes = this.factory.informerFor('Node', { fieldSelector: `metadata.name=${nodeName}` });
    this.statuses = new PodStatusManager({
      client,
      clock,
      logger,
      cached: (namespace, name) => this.pods.get(name, namespace),
      contact: options.contact,
      finalDeleteBackoff: options.finalDeleteBackoff,
    });
  }

  /** Adopts what runs, then starts watching; returns once the first list arrived (or at once if the control plane is away). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const { processes, images } = this.options;
    for (const choice of images && images.runtime !== processes.runtime ? [processes, images] : [processes]) {
      for (const container of await choice.runtime.recover()) {
        const list = this.leftovers.get(container.podUid) ?? [];
        list.push({ container, choice });
        this.leftovers.set(container.podUid, list);
      }
    }
    if (this.leftovers.size) {
      this.options.logger.info(
        { pods: this.leftovers.size },
        'found containers from an earlier run; adopting them once their pods are listed',
      );
    }
    this.pods.addEventHandler({
      onAdd: (pod) => this.podChanged(pod),
      onUpdate: (_old, pod) => this.podChanged(pod),
      onDelete: (pod) => {
        const uid = pod.metadata!.uid!;
        if (this.finished.delete(uid)) this.statuses.forget(uid);
        const worker = this.workers.get(uid);
        if (worker) worker.removed();
        else void this.removeVolumes(uid);
      },
    });
    this.nodes.addEventHandler({});
    this.factory.start();
    void this.pods.whenSynced().then(() => this.cleanOrphans());
  }

  /** Stops watching; the containers keep running (the next start adopts them). */
  async stop(): Promise<void> {
    if (this.ownsInformers) this.factory.shutdown();
    this.statuses.stop();
    await Promise.all([...this.workers.values()].map((w) => w.settled()));
    for (const w of this.workers.values()) w.detach();
  }

  /** Pods this node runs now (for tests and the node's status). */
  runningPods(): Pod[] {
    return this.pods.list().filter((p) => this.workers.has(p.metadata!.uid!));
  }

  /** Waits until every worker finished its sync and every status write landed (for tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.workers.values()].map((w) => w.settled()));
    await this.statuses.settled();
  }

  private podChanged(pod: Pod): void {
    const uid = pod.metadata!.uid!;
    let worker = this.workers.get(uid);
    if (!worker) {
      if (this.finished.has(uid)) {
        // Still in the API: its final delete failed so far. Seeing it again is a reason to try.
        if (pod.metadata?.deletionTimestamp) this.statuses.finish(pod);
        return;
      }
      const leftovers = this.leftovers.get(uid) ?? [];
      this.leftovers.delete(uid);
      if (pod.metadata?.deletionTimestamp && !leftovers.length) {
        // Deleted, and nothing of it runs here: an earlier run of the agent stopped it but
        // could not remove it (or never started it). Only the final delete is left; the status
        // stays as it is, since this run of the agent knows nothing newer of its containers.
        this.finished.add(uid);
        this.statuses.finish(pod);
        return;
      }
      // A pod that finished before this agent started stays finished: nothing to run again.
      if (isPodTerminal(pod) && !leftovers.length) return;
      worker = this.newWorker(pod);
      this.workers.set(uid, worker);
      for (const { container, choice } of leftovers) worker.adopt([container], choice.runtime, choice.scheme);
    }
    worker.update(pod);
  }

  private newWorker(pod: Pod): PodWorker {
    this.workerDeps ??= this.makeWorkerDeps();
    return new PodWorker(pod, this.workerDeps);
  }

  /** What every worker of this node needs: one object for all of them (a node runs hundreds). */
  private makeWorkerDeps(): PodWorkerDeps {
    const { processes, clock, logger, recorder } = this.options;
    return {
      runtime: processes.runtime,
      runtimeFor: (container) => this.runtimeFor(container),
      clock,
      logger,
      recorder,
      backoff: this.backoff,
      hostIP: this.options.hostIP,
      admit: (p) => {
        const node = this.nodes.get(this.options.nodeName);
        if (!node) return { admit: true };
        return admitPod(p, node, this.admittedPods(p));
      },
      configEnv: (p, c) => resolveConfigEnv(this.options.client, p, c),
      ...(this.volumes
        ? {
            volumes: {
              setUp: (p) => this.volumes!.setUp(p),
              mountsFor: (p, c, paths) => this.volumes!.mountsFor(p, c, paths),
              syncFrequencyMs: this.options.volumes?.syncFrequencyMs ?? DEFAULT_SYNC_FREQUENCY_MS,
            },
          }
        : {}),
      ...(this.options.security
        ? { security: (p, c) => containerSecurity(p, c, this.options.security!) }
        : {}),
      publishStatus: (p, status) => this.statuses.set(p, status),
      finalizeDeletion: (p, status) => this.statuses.finish(p, status),
      startProbes: (p, c, running, callbacks) => this.options.startProbes?.(p, c, running, callbacks),
      containerEnded: this.options.containerEnded,
      onFinished: (uid, removedFromApi) => {
        this.workers.delete(uid);
        // Gone from the API already: nothing to delete, and no later sight will come.
        if (removedFromApi) this.statuses.forget(uid);
        else this.finished.add(uid);
        void processes.runtime.removePod(uid);
        void this.removeVolumes(uid);
        const images = this.images;
        if (images && images.runtime !== processes.runtime) void images.runtime.removePod(uid);
      },
    };
  }

  /**
   * What runs a container: processes for a command, docker or podman for an image. When no
   * image runtime answered but one is installed (its daemon was down), it is looked for again
   * at every try, so starting the daemon is enough: the container waits, with back-off.
   */
  private async runtimeFor(container: Container): Promise<RuntimeChoice | RuntimeRefusal> {
    if (!container.image) {
      if (!container.command?.length && !container.args?.length) {
        return {
          error: `container ${container.name} has neither a command nor an image: give it a command to run as a process`,
        };
      }
      return this.options.processes;
    }
    if (!this.images && this.imagesMissing?.installed.length) await this.lookForImages(this.imagesMissing);
    if (this.images) return this.images;
    const node = this.options.nodeName;
    const missing = this.imagesMissing;
    if (missing?.installed.length) {
      return {
        retry: true,
        error: `container ${container.name} names image ${container.image}, but no image runtime answers on node ${node}: ${missing.reason}. Start the daemon (${howToStartDaemon(missing.installed[0])}): the agent tries again with back-off. Or drop the image and give a command to run it as a process`,
      };
    }
    return {
      error: `container ${container.name} names image ${container.image}, but neither docker nor podman is installed on node ${node}: install one and restart kubelab-agent, or drop the image and give a command to run it as a process`,
    };
  }

  /** Removes a pod's volumes; a failure is logged (the next start removes orphans again). */
  private async removeVolumes(uid: string): Promise<void> {
    try {
      await this.volumes?.tearDown(uid);
    } catch (err) {
      this.options.logger.warn(
        { podUid: uid, err: (err as Error).message },
        "could not remove a deleted pod's volumes; the agent tries again when it next starts",
      );
    }
  }

  /** One look at a time, however many containers wait for it. */
  private lookForImages(missing: ImagesMissing): Promise<void> {
    this.lookingForImages ??= missing
      .lookAgain()
      .then((found) => {
        if ('runtime' in found) {
          this.images = found;
          this.imagesMissing = undefined;
        } else {
          this.imagesMissing = found;
        }
      })
      .catch((err: unknown) =>
        this.options.logger.warn({ err: (err as Error).message }, 'could not look for docker or podman'),
      )
      .finally(() => (this.lookingForImages = undefined));
    return this.lookingForImages;
  }

  /** The pods this node already runs, for admission: not finished, not this one. */
  private admittedPods(except: Pod): Pod[] {
    return this.pods
      .list()
      .filter(
        (p) =>
          p.metadata?.uid !== except.metadata?.uid && this.workers.has(p.metadata!.uid!) && !isPodTerminal(p),
      );
  }

  /**
   * Containers whose pods are gone (deleted while the agent was away) are stopped and removed.
   * Called once the first list is in the informer's cache; the handler may not have been told
   * of every listed pod yet (it hears of them in turn), so a pod in the cache is not an orphan:
   * its containers wait for podChanged to adopt them.
   */
  private async cleanOrphans(): Promise<void> {
    const listed = new Set(this.pods.list().map((p) => p.metadata!.uid!));
    try {
      const removed = (await this.volumes?.removeOrphans(listed)) ?? [];
      if (removed.length)
        this.options.logger.info(
          { pods: removed.length },
          'removed the volumes of pods that no longer exist',
        );
    } catch (err) {
      this.options.logger.warn(
        { err: (err as Error).message },
        'could not remove the volumes of deleted pods',
      );
    }
    const orphans = [...this.leftovers.entries()].filter(([uid]) => !listed.has(uid));
    for (const [uid] of orphans) this.leftovers.delete(uid);
    for (const [uid, list] of orphans) {
      this.options.logger.info(
        { podUid: uid, containers: list.length },
        'stopping containers of a pod that no longer exists',
      );
      await Promise.all(
        list.map(({ container, choice }) =>
          choice.runtime.stop(container, this.options.orphanGraceMs ?? 10_000),
        ),
      );
      await Promise.all(list.map(({ choice }) => choice.runtime.removePod(uid)));
    }
  }

  /** Exposed for node status: the node this manager works for, as last seen. */
  node(): Node | undefined {
    return this.nodes.get(this.options.nodeName);
  }
}
