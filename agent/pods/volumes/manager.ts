/**
 * A node's pod volumes (the kubelet's volume manager, for the volume kinds a lab uses): each
 * pod's volumes live in `<dataDir>/volumes/<podUid>/<volume>` (0700 above the volume, so no
 * other user of the machine reaches them), are set up before the pod's first container starts,
 * refreshed while it runs (a changed ConfigMap or Secret reaches the files within the sync
 * period, atomically: atomicwriter.ts), and removed with the pod.
 *
 *   configMap, secret, projected, downwardAPI  files written by the agent (contents.ts), read-only
 *   emptyDir                                    an empty directory (0777, as in Kubernetes)
 *   hostPath                                    the machine's own path, checked by its type
 *
 * ConfigMaps and Secrets are read through the API with the node's credential: the node
 * authorizer lets a node read those of the pods bound to it, nothing else.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { isNotFound } from '../../../client/api/errors.js';
import type { ConfigMap, Container, Pod, Secret, Volume } from '../../../client/api/types.js';
import type { Client } from '../../../client/client.js';
import type { Clock } from '../../../client/util/clock.js';
import type { Mount } from '../../runtime/mounts.js';
import { writeVolumeAtomically } from './atomicwriter.js';
import { isConfigVolume, volumeContents, volumeSources, type ConfigKind } from './contents.js';

/** The kubelet's --sync-frequency default: how often mounted ConfigMaps and Secrets are read again. */
export const DEFAULT_SYNC_FREQUENCY_MS = 60_000;

export interface PodVolumesOptions {
  /** `<dataDir>/volumes`. */
  dir: string;
  client: Client;
  clock: Clock;
  /** The agent's uid: only root may give files to the pod's fsGroup. */
  agentUid: number;
}

/** A pod's volumes, set up: where each one is on the machine. */
export type VolumesSetUp = { paths: Map<string, string> } | { volume: string; error: string };

export class PodVolumes {
  constructor(private readonly options: PodVolumesOptions) {}

  /**
   * Creates or refreshes every volume of the pod. A missing ConfigMap or Secret, or a hostPath
   * of the wrong type, is reported for the first volume it stops; other failures throw.
   */
  async setUp(pod: Pod): Promise<VolumesSetUp> {
    const podUid = pod.metadata!.uid!;
    const root = this.podDir(podUid);
    await fsp.mkdir(root, { recursive: true, mode: 0o700 });
    await fsp.chmod(path.dirname(root), 0o700);
    const fetched = await this.fetchSources(pod);
    const lookup = (kind: ConfigKind, name: string) => fetched.get(`${kind}/${name}`) ?? null;
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    const group = fsGroup !== undefined && this.options.agentUid === 0 ? fsGroup : undefined;
    const paths = new Map<string, string>();
    for (const volume of pod.spec?.volumes ?? []) {
      const name = volume.name!;
      if (volume.hostPath) {
        const problem = await checkHostPath(volume.hostPath.path ?? '', volume.hostPath.type ?? '');
        if (problem) return { volume: name, error: problem };
        paths.set(name, volume.hostPath.path!);
        continue;
      }
      const dir = path.join(root, name);
      if (isConfigVolume(volume)) {
        const contents = volumeContents(pod, volume, lookup);
        if ('error' in contents) return { volume: name, error: contents.error };
        await writeVolumeAtomically(dir, contents.files, { now: this.options.clock.now(), group });
      } else {
        // emptyDir (and a volume of a kind this agent does not know: an empty directory too).
        await fsp.mkdir(dir, { recursive: true });
        await fsp.chmod(dir, 0o777);
        if (group !== undefined) await fsp.chown(dir, -1, group);
      }
      paths.set(name, dir);
    }
    return { paths };
  }

  /** The container's mounts, from the pod's set-up volumes. */
  async mountsFor(pod: Pod, container: Container, paths: Map<string, string>): Promise<Mount[]> {
    const mounts: Mount[] = [];
    for (const m of container.volumeMounts ?? []) {
      const volume = pod.spec?.volumes?.find((v) => v.name === m.name);
      const base = paths.get(m.name ?? '');
      if (!volume || !base || !m.mountPath) continue;
      const source = m.subPath ? path.join(base, ...m.subPath.split('/')) : base;
      let file = false;
      if (m.subPath) {
        // A subPath the volume does not have yet is a directory, as the kubelet creates it.
        const st = await fsp.stat(source).catch(() => undefined);
        if (!st) await fsp.mkdir(source, { recursive: true });
        file = !!st && !st.isDirectory();
      }
      mounts.push({
        source,
        target: m.mountPath,
        readOnly: !!m.readOnly || isConfigVolume(volume),
        ...(file ? { file } : {}),
      });
    }
    return mounts;
  }

  /** Removes the pod's volumes (the pod is gone); a hostPath is the machine's and stays. */
  async tearDown(podUid: string): Promise<void> {
    await fsp.rm(this.podDir(podUid), { recursive: true, force: true });
  }

  /** Removes the volumes of pods not in `keep` (deleted while the agent was away). */
  async removeOrphans(keep: ReadonlySet<string>): Promise<string[]> {
    let uids: string[];
    try {
      uids = await fsp.readdir(this.options.dir);
    } catch {
      return [];
    }
    const orphans = uids.filter((uid) => !keep.has(uid));
    for (const uid of orphans) await this.tearDown(uid);
    return orphans;
  }

  private podDir(podUid: string): string {
    if (!podUid || podUid.includes('/') || podUid.startsWith('.'))
      throw new Error(`invalid pod uid ${JSON.stringify(podUid)}`);
    return path.join(this.options.dir, podUid);
  }

  /** Each ConfigMap and Secret the pod's volumes name, read once; null when it does not exist. */
  private async fetchSources(pod: Pod): Promise<Map<string, ConfigMap | Secret | null>> {
    const out = new Map<string, ConfigMap | Secret | null>();
    const namespace = pod.metadata?.namespace;
    for (const volume of pod.spec?.volumes ?? ([] as Volume[])) {
      for (const { kind, name } of volumeSources(volume)) {
        const key = `${kind}/${name}`;
        if (out.has(key)) continue;
        try {
          out.set(key, await this.options.client.get(kind, name, { namespace }));
        } catch (err) {
          if (!isNotFound(err)) throw err;
          out.set(key, null);
        }
      }
    }
    return out;
  }
}

/** Kubernetes' hostPath type checks; DirectoryOrCreate and FileOrCreate create what is missing. */
async function checkHostPath(p: string, type: string): Promise<string | undefined> {
  const st = await fsp.stat(p).catch(() => undefined);
  switch (type) {
    case '':
      return undefined;
    case 'DirectoryOrCreate':
      if (!st) {
        await fsp.mkdir(p, { recursive: true, mode: 0o755 });
        return undefined;
      }
      return st.isDirectory() ? undefined : `hostPath type check failed: ${p} is not a directory`;
    case 'Directory':
      return st?.isDirectory() ? undefined : `hostPath type check failed: ${p} is not a directory`;
    case 'FileOrCreate':
      if (!st) {
        await fsp.mkdir(path.dirname(p), { recursive: true, mode: 0o755 });
        await fsp.writeFile(p, '', { mode: 0o644, flag: 'a' });
        return undefined;
      }
      return st.isFile() ? undefined : `hostPath type check failed: ${p} is not a file`;
    case 'File':
      return st?.isFile() ? undefined : `hostPath type check failed: ${p} is not a file`;
    case 'Socket':
      return st?.isSocket() ? undefined : `hostPath type check failed: ${p} is not a socket file`;
    case 'CharDevice':
      return st?.isCharacterDevice()
        ? undefined
        : `hostPath type check failed: ${p} is not a character device`;
    case 'BlockDevice':
      return st?.isBlockDevice() ? undefined : `hostPath type check failed: ${p} is not a block device`;
    default:
      return `hostPath type ${type} is not one this agent knows`;
  }
}
