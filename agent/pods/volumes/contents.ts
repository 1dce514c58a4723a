/**
 * What a volume holds (the kubelet's configmap, secret, downwardAPI and projected volume
 * plugins, without the writing): from the pod and the ConfigMaps and Secrets it names, the
 * files, their bytes and their modes. Pure: the manager fetches the objects and writes.
 *
 * As in Kubernetes: without items every key becomes a file of its name; with items only those
 * keys, at their paths (which may hold directories); a missing object or key stops the volume
 * (the pod waits in ContainerCreating, told why by a FailedMount event) unless `optional`, when
 * the volume (or the key) is left out; modes default to 0644, defaultMode for the volume, mode
 * per item. Values never appear in errors, only object and key names.
 */
import type {
  ConfigMap,
  DownwardAPIVolumeFile,
  KeyToPath,
  Pod,
  Secret,
  Volume,
} from '../../../client/api/types.js';
import { podFieldValue } from '../downward.js';

export const DEFAULT_FILE_MODE = 0o644;

export interface VolumeFile {
  /** Relative to the volume's root, '/'-separated. */
  path: string;
  data: Buffer;
  mode: number;
}

export type ConfigKind = 'ConfigMap' | 'Secret';

/** A ConfigMap or Secret as fetched: null when it does not exist. */
export type Lookup = (kind: ConfigKind, name: string) => ConfigMap | Secret | null;

export type VolumeContents = { files: VolumeFile[] } | { error: string };

/** The kinds of volume whose files the agent writes (the others are directories: emptyDir, hostPath). */
export function isConfigVolume(volume: Volume): boolean {
  return !!(volume.configMap || volume.secret || volume.projected || volume.downwardAPI);
}

/** The ConfigMaps and Secrets a volume reads. */
export function volumeSources(volume: Volume): Array<{ kind: ConfigKind; name: string }> {
  const out: Array<{ kind: ConfigKind; name: string }> = [];
  if (volume.configMap?.name) out.push({ kind: 'ConfigMap', name: volume.configMap.name });
  if (volume.secret?.secretName) out.push({ kind: 'Secret', name: volume.secret.secretName });
  for (const s of volume.projected?.sources ?? []) {
    if (s.configMap?.name) out.push({ kind: 'ConfigMap', name: s.configMap.name });
    if (s.secret?.name) out.push({ kind: 'Secret', name: s.secret.name });
  }
  return out;
}

/** The files of a configMap, secret, projected or downwardAPI volume. */
export function volumeContents(pod: Pod, volume: Volume, lookup: Lookup): VolumeContents {
  const files = new Map<string, VolumeFile>();
  const add = (f: VolumeFile) => files.set(f.path, f);
  let problem: string | undefined;
  const fromObject = (
    kind: ConfigKind,
    name: string,
    items: KeyToPath[] | undefined,
    optional: boolean | undefined,
    mode: number,
  ) => {
    if (problem) return;
    const found = lookup(kind, name);
    if (!found) {
      if (!optional) problem = `${kind === 'ConfigMap' ? 'configmap' : 'secret'} "${name}" not found`;
      return;
    }
    const values = valuesOf(kind, found);
    if (!items?.length) {
      for (const [key, data] of values) add({ path: key, data, mode });
      return;
    }
    for (const item of items) {
      const data = values.get(item.key ?? '');
      if (data === undefined) {
        if (optional) continue;
        problem = `${kind === 'ConfigMap' ? 'configmap' : 'secret'} references non-existent ${kind === 'ConfigMap' ? 'config' : 'secret'} key: ${item.key}`;
        return;
      }
      add({ path: item.path ?? item.key ?? '', data, mode: item.mode ?? mode });
    }
  };
  const fromFields = (items: DownwardAPIVolumeFile[] | undefined, mode: number) => {
    for (const item of items ?? []) {
      if (!item.path || !item.fieldRef?.fieldPath) continue;
      add({
        path: item.path,
        data: Buffer.from(downwardValue(pod, item.fieldRef.fieldPath)),
        mode: item.mode ?? mode,
      });
    }
  };

  if (volume.configMap) {
    const v = volume.configMap;
    fromObject('ConfigMap', v.name ?? '', v.items, v.optional, v.defaultMode ?? DEFAULT_FILE_MODE);
  } else if (volume.secret) {
    const v = volume.secret;
    fromObject('Secret', v.secretName ?? '', v.items, v.optional, v.defaultMode ?? DEFAULT_FILE_MODE);
  } else if (volume.downwardAPI) {
    fromFields(volume.downwardAPI.items, volume.downwardAPI.defaultMode ?? DEFAULT_FILE_MODE);
  } else if (volume.projected) {
    const mode = volume.projected.defaultMode ?? DEFAULT_FILE_MODE;
    for (const s of volume.projected.sources ?? []) {
      if (s.configMap)
        fromObject('ConfigMap', s.configMap.name ?? '', s.configMap.items, s.configMap.optional, mode);
      if (s.secret) fromObject('Secret', s.secret.name ?? '', s.secret.items, s.secret.optional, mode);
      if (s.downwardAPI) fromFields(s.downwardAPI.items, mode);
    }
  }
  if (problem) return { error: problem };
  return { files: [...files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)) };
}

/** A ConfigMap's data and binaryData, a Secret's data (decoded), as bytes. */
function valuesOf(kind: ConfigKind, obj: ConfigMap | Secret): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (kind === 'Secret') {
    for (const [k, v] of Object.entries((obj as Secret).data ?? {})) out.set(k, Buffer.from(v, 'base64'));
    return out;
  }
  const cm = obj as ConfigMap;
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) out.set(k, Buffer.from(v, 'base64'));
  for (const [k, v] of Object.entries(cm.data ?? {})) out.set(k, Buffer.from(v, 'utf8'));
  return out;
}

/**
 * A downward API file's content: as for env, and the whole of metadata.labels or
 * metadata.annotations as `key="value"` lines, sorted (the kubelet's formatMap).
 */
export function downwardValue(pod: Pod, fieldPath: string): string {
  if (fieldPath === 'metadata.labels' || fieldPath === 'metadata.annotations') {
    const map = (fieldPath === 'metadata.labels' ? pod.metadata?.labels : pod.metadata?.annotations) ?? {};
    return Object.keys(map)
      .sort()
      .map((k) => `${k}=${JSON.stringify(map[k])}\n`)
      .join('');
  }
  return podFieldValue(pod, fieldPath);
}
