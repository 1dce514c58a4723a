/**
 * What the agent's pod manager needs from a container runtime, and what it hands the log
 * tunnel. Runtimes: processes (the default), docker/podman (containers that name an image),
 * and hollow (simulated, for scale tests). Times are clock milliseconds.
 */

import type { Mount } from './mounts.js';

/** One container, as the runtime starts it. */
export interface ContainerSpec {
  /** The pod's uid: containers of a pod, and their logs, live under it. */
  podUid: string;
  /** "namespace/name", for logs and messages. */
  podKey: string;
  /** The container's name in the pod. */
  name: string;
  /** How many times this container has been restarted (names its log file). */
  restartCount: number;
  /** command + args, resolved (never empty for a process). */
  argv: string[];
  env: Record<string, string>;
  workingDir?: string;
  /** For the docker/podman runtime: the image, and command and args apart (they replace the image's entrypoint and cmd). */
  image?: string;
  command?: string[];
  args?: string[];
  /** cgroup limits where the runtime can apply them. */
  limits?: { milliCPU?: number; memoryBytes?: number };
  /** Who the container runs as and what it may do (agent/pods/security.ts); absent: as the agent. */
  security?: ContainerSecurity;
  /** Its volumes (agent/pods/volumes/): bind mounts for a process, -v for an image. */
  mounts?: Mount[];
}

export interface ContainerSecurity {
  /** Set for a process container always; for an image only when the pod names a user. */
  uid?: number;
  gid?: number;
  /** Supplementary groups (supplementalGroups and fsGroup). */
  groups: number[];
  /** The group that owns the files the agent writes for the container (fsGroup, else gid). */
  fileGroup?: number;
  /** no_new_privs (allowPrivilegeEscalation: false). */
  noNewPrivs: boolean;
  /** Capability names without CAP_, upper case; "ALL" for all. */
  dropCaps: string[];
  addCaps: string[];
  privileged: boolean;
  /** HOME for a process run as another user than the agent's, when the spec sets none. */
  home?: string;
}

/** How a container ended. */
export interface ContainerExit {
  exitCode: number;
  /** The signal that ended it, if one did ("SIGKILL"). */
  signal?: string;
  finishedAt: number;
  /**
   * Kubernetes' terminated.reason: "Completed" for 0, "Error" otherwise, "OOMKilled" when known,
   * "StartError" when its command could not be run.
   */
  reason: string;
  /** Kubernetes' terminated.message: what went wrong and what to do (with StartError, OOMKilled). */
  message?: string;
}

/** A container the runtime runs (or ran). */
export interface RunningContainer {
  /** Stable across agent restarts: "<podUid>/<name>/<restartCount>". */
  id: string;
  podUid: string;
  name: string;
  restartCount: number;
  pid: number;
  startedAt: number;
  /**
   * Set when its command was found unable to run as it started (not found, not executable):
   * it ends at once (126/127, reason StartError), and this says why and what to do.
   */
  startError?: string;
  /** Settles when the container ends, however it ends (also if it ended while the agent was down). */
  exited: Promise<ContainerExit>;
}

export interface Runtime {
  /** Starts a container; resolves once it exists (throws with a message a person can act on). */
  start(spec: ContainerSpec): Promise<RunningContainer>;
  /**
   * Asks it to stop: SIGTERM to its process group, SIGKILL after `gracePeriodMs` if it is still
   * there. Resolves with how it ended.
   */
  stop(container: RunningContainer, gracePeriodMs: number): Promise<ContainerExit>;
  /**
   * The containers of earlier runs of this agent that are still running, or that ended while
   * it was down (their exit recovered), so a restarted agent adopts them instead of starting
   * copies; and for a container with none of those, its newest finished instance, so restart
   * counts go on.
   */
  recover(): Promise<RunningContainer[]>;
  /** Forgets a pod's runtime state and logs (the pod is gone). */
  removePod(podUid: string): Promise<void>;
}

/** What a Logs call asks for (Kubernetes' PodLogOptions). */
export interface LogRequest {
  podUid: string;
  container: string;
  /** Lines from the end (undefined: all). */
  tailLines?: number;
  follow?: boolean;
  /** The previous instance of the container (the one before the last restart). */
  previous?: boolean;
  /** Prefix each line with an RFC 3339 timestamp. */
  timestamps?: boolean;
  /** Only lines newer than this (clock ms). */
  sinceTime?: number;
  /** Stop after this many bytes. */
  limitBytes?: number;
}

/** Serves logs; `write` returns false when the reader went away (stop then). */
export interface LogSource {
  stream(req: LogRequest, write: (chunk: Buffer) => boolean, signal: AbortSignal): Promise<void>;
}
