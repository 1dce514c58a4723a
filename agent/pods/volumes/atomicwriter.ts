/**
 * Writes a volume's files so that a reader sees the old set or the new one, never a mix (the
 * kubelet's AtomicWriter):
 *
 *   <volume>/..2026_12_06_10_30_00.123_ab12cd/<files>   one directory per version
 *   <volume>/..data -> ..2026_12_06_10_30_00.123_ab12cd  the current version
 *   <volume>/<name> -> ..data/<name>                     each top-level entry, for the reader
 *
 * A new version is written in full beside the current one, then `..data` is switched to it by
 * renaming a new symlink over it (one atomic step), then the old version is removed. Names
 * beginning with ".." are the writer's own (validation keeps keys and paths from using them).
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { VolumeFile } from './contents.js';

const DATA_LINK = '..data';

export interface WriteOptions {
  /** The group the files and directories get (fsGroup), when the agent may set it. */
  group?: number;
  /** The time the version directory is named after. */
  now: number;
}

/**
 * Makes `dir` hold exactly `files`; does nothing when it already does (same paths, bytes and
 * modes). Returns whether it wrote.
 */
export async function writeVolumeAtomically(
  dir: string,
  files: readonly VolumeFile[],
  options: WriteOptions,
): Promise<boolean> {
  await fsp.mkdir(dir, { recursive: true, mode: 0o755 });
  const current = await readLink(path.join(dir, DATA_LINK));
  if (current !== undefined && (await holdsExactly(path.join(dir, current), files))) return false;

  const version = versionName(options.now);
  const versionDir = path.join(dir, version);
  await fsp.mkdir(versionDir, { mode: 0o755 });
  for (const f of files) {
    const file = path.join(versionDir, ...f.path.split('/'));
    await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o755 });
    await fsp.writeFile(file, f.data, { mode: f.mode });
    // writeFile's mode is masked by the umask: set the bits asked for exactly.
    await fsp.chmod(file, f.mode);
    if (options.group !== undefined) await fsp.chown(file, -1, options.group);
  }
  if (options.group !== undefined) await chownTree(versionDir, options.group);

  const tmpLink = path.join(dir, `${DATA_LINK}_tmp`);
  await fsp.rm(tmpLink, { force: true });
  await fsp.symlink(version, tmpLink);
  await fsp.rename(tmpLink, path.join(dir, DATA_LINK));

  // The reader's names: one symlink per top-level entry; those of the old version go.
  const wanted = new Set(files.map((f) => f.path.split('/')[0]));
  for (const name of wanted) {
    const link = path.join(dir, name);
    if ((await readLink(link)) !== `${DATA_LINK}/${name}`) {
      await fsp.rm(link, { force: true, recursive: true });
      await fsp.symlink(`${DATA_LINK}/${name}`, link);
    }
  }
  for (const name of await fsp.readdir(dir)) {
    if (name.startsWith('..')) {
      if (name !== DATA_LINK && name !== version)
        await fsp.rm(path.join(dir, name), { recursive: true, force: true });
    } else if (!wanted.has(name)) {
      await fsp.rm(path.join(dir, name), { recursive: true, force: true });
    }
  }
  return true;
}

/** `..2026_12_06_10_30_00.123_ab12cd`: sorts by time, unique within a millisecond. */
function versionName(now: number): string {
  const t = new Date(now).toISOString().replace(/[-T:]/g, '_').replace('Z', '');
  return `..${t}_${randomBytes(3).toString('hex')}`;
}

async function readLink(link: string): Promise<string | undefined> {
  try {
    return await fsp.readlink(link);
  } catch {
    return undefined;
  }
}

/** Whether `versionDir` holds exactly these files (paths, bytes and permission bits). */
async function holdsExactly(versionDir: string, files: readonly VolumeFile[]): Promise<boolean> {
  const present = await listFiles(versionDir);
  if (present === undefined || present.length !== files.length) return false;
  for (const f of files) {
    const file = path.join(versionDir, ...f.path.split('/'));
    try {
      const st = await fsp.stat(file);
      if ((st.mode & 0o7777) !== f.mode || st.size !== f.data.length) return false;
      if (!(await fsp.readFile(file)).equals(f.data)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** Every regular file under `dir`, relative; undefined when `dir` cannot be read. */
async function listFiles(dir: string): Promise<string[] | undefined> {
  try {
    const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
  } catch {
    return undefined;
  }
}

async function chownTree(dir: string, group: number): Promise<void> {
  await fsp.chown(dir, -1, group);
  for (const e of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isDirectory()) await fsp.chown(path.join(e.parentPath, e.name), -1, group);
  }
}
