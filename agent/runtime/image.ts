/**
 * Containers that name an image run through the docker or podman CLI, under the same process
 * supervision as any container: `docker run` stays in the foreground, forwards SIGTERM to the
 * container, and exits with its exit code, so status, restarts, graceful stops and logs work
 * the same. The container shares the host's network, like process pods.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ContainerExit, ContainerSpec, RunningContainer, Runtime } from './types.js';

const run = promisify(execFile);

export type ImageCli = { cli: string; name: 'docker' | 'podman' };

/** Why no image CLI can be used: what each candidate said, and which of them are installed. */
export interface ImageCliMissing {
  error: string;
  /** Installed, but their daemon (engine) did not answer: it may be started later. */
  installed: Array<'docker' | 'podman'>;
}

/** The first of docker and podman whose CLI answers and whose engine is reachable. */
export async function detectImageCli(
  candidates: Array<'docker' | 'podman'> = ['docker', 'podman'],
): Promise<ImageCli | ImageCliMissing> {
  const problems: string[] = [];
  const installed: Array<'docker' | 'podman'> = [];
  for (const name of candidates) {
    try {
      await run(name, ['version', '--format', '{{.Server.Version}}'], { timeout: 5_000 });
      return { cli: name, name };
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      if (e.code === 'ENOENT') {
        problems.push(`${name} is not installed`);
        continue;
      }
      installed.push(name);
      problems.push(
        `${name} is installed but its daemon does not answer (${(e.stderr || e.message).trim().split('\n')[0]})`,
      );
    }
  }
  return { error: problems.join('; '), installed };
}

/** How to start the daemon of an installed image CLI (what a person types on the node). */
export function howToStartDaemon(name: 'docker' | 'podman'): string {
  return name === 'docker'
    ? 'sudo systemctl start docker'
    : 'podman machine start on macOS and Windows, sudo systemctl start podman.socket on Linux';
}

/** The `docker run` command line for a container (a unique name, so it can be removed by name). */
/** What the docker/podman CLI itself reads from its environment: never taken from a container's env. */
const CLI_ENV = ['PATH', 'HOME', 'DOCKER_HOST', 'DOCKER_CONFIG', 'CONTAINER_HOST', 'XDG_RUNTIME_DIR'];

export function imageRunArgv(cli: ImageCli, spec: ContainerSpec): string[] {
  const name = containerName(spec);
  const argv = [cli.cli, 'run', '--rm', '--name', name, '--network', 'host', '--init'];
  // By name, the value from the CLI's environment (start() puts it there): a value on the
  // command line (a Secret's) would show in every `ps` on the machine.
  for (const [k, v] of Object.entries(spec.env))
    argv.push('--env', CLI_ENV.includes(k) || k.includes('=') ? `${k}=${v}` : k);
  for (const m of spec.mounts ?? [])
    argv.push('--volume', `${m.source}:${m.target}${m.readOnly ? ':ro' : ''}`);
  if (spec.workingDir) argv.push('--workdir', spec.workingDir);
  if (spec.limits?.milliCPU) argv.push('--cpus', String(spec.limits.milliCPU / 1000));
  if (spec.limits?.memoryBytes) argv.push('--memory', `${spec.limits.memoryBytes}b`);
  argv.push(...imageSecurityArgs(spec));
  argv.push('--label', `io.kubelab.pod-uid=${spec.podUid}`, '--label', `io.kubelab.container=${spec.name}`);
  // command replaces the image's entrypoint, args its cmd, as in Kubernetes.
  const [entry, ...commandRest] = spec.command ?? [];
  if (entry !== undefined) argv.push('--entrypoint', entry);
  return [...argv, spec.image!, ...commandRest, ...(spec.args ?? [])];
}

/** A security context as docker/podman flags: --user, --group-add, no-new-privileges, capabilities, --privileged. */
export function imageSecurityArgs(spec: ContainerSpec): string[] {
  const sec = spec.security;
  if (!sec) return [];
  const args: string[] = [];
  if (sec.uid !== undefined)
    args.push('--user', sec.gid !== undefined ? `${sec.uid}:${sec.gid}` : String(sec.uid));
  for (const g of sec.groups) args.push('--group-add', String(g));
  if (sec.noNewPrivs) args.push('--security-opt', 'no-new-privileges');
  for (const c of sec.dropCaps) args.push('--cap-drop', c);
  for (const c of sec.addCaps) args.push('--cap-add', c);
  if (sec.privileged) args.push('--privileged');
  return args;
}

export function containerName(spec: Pick<ContainerSpec, 'podUid' | 'name' | 'restartCount'>): string {
  return `kubelab-${spec.podUid.slice(0, 8)}-${spec.name}-${spec.restartCount}`.replace(
    /[^a-zA-Z0-9_.-]/g,
    '-',
  );
}

/** Runs image containers as supervised `docker run` processes of the process runtime. */
export class ImageRuntime implements Runtime {
  constructor(
    private readonly processes: Runtime,
    private readonly cli: ImageCli,
  ) {}

  start(spec: ContainerSpec): Promise<RunningContainer> {
    // The container's env travels in the CLI's environment, named by --env flags; beside it
    // the CLI needs only how to reach its engine.
    const cliEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(spec.env)) if (!CLI_ENV.includes(k)) cliEnv[k] = v;
    for (const k of CLI_ENV) if (process.env[k] !== undefined) cliEnv[k] = process.env[k]!;
    return this.processes.start({
      ...spec,
      argv: imageRunArgv(this.cli, spec),
      env: cliEnv,
      workingDir: undefined,
      image: undefined,
      limits: undefined,
      // Mounted by the engine (--volume), not around the CLI.
      mounts: undefined,
    });
  }

  async stop(container: RunningContainer, gracePeriodMs: number): Promise<ContainerExit> {
    const exit = await this.processes.stop(container, gracePeriodMs);
    // A SIGKILLed client leaves its container behind: remove it by name.
    if (exit.signal === 'SIGKILL') {
      await run(this.cli.cli, ['rm', '-f', containerName(container)], { timeout: 10_000 }).catch(
        () => undefined,
      );
    }
    return exit;
  }

  /** The `docker run` processes are the process runtime's: it recovers them. */
  async recover(): Promise<RunningContainer[]> {
    return [];
  }

  removePod(podUid: string): Promise<void> {
    return this.processes.removePod(podUid);
  }
}
