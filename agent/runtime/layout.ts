/**
 * Where the process runtime and the log store keep a container instance's files, and how they
 * replace one safely. One directory per container of a pod:
 *
 *   <dataDir>/pods/<podUid>/<container>/<restartCount>.log      stdout+stderr (LogStore)
 *   <dataDir>/pods/<podUid>/<container>/<restartCount>.log.idx  offset → time first seen
 *   <dataDir>/pods/<podUid>/<container>/<restartCount>.log.N    rotated copies (+ .N.idx)
 *   <dataDir>/pods/<podUid>/<container>/<restartCount>.json     pid, start time, recorded exit
 *   <dataDir>/pods/<podUid>/<container>/<restartCount>.started  the command is being exec'd
 *   <dataDir>/pods/<podUid>/<container>/<restartCount>.exit     exit status, by the wrapper
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

export type InstanceFile = '.log' | '.json' | '.started' | '.exit';

export function podDir(dataDir: string, podUid: string): string {
  assertPathSegment(podUid, 'pod uid');
  return path.join(dataDir, 'pods', podUid);
}

export function containerDir(dataDir: string, podUid: string, container: string): string {
  assertPathSegment(container, 'container name');
  return path.join(podDir(dataDir, podUid), container);
}

export function instancePath(
  dataDir: string,
  podUid: string,
  container: string,
  restartCount: number,
  file: InstanceFile,
): string {
  if (!Number.isSafeInteger(restartCount) || restartCount < 0) {
    throw new Error(`restartCount must be a whole number ≥ 0, got ${restartCount}`);
  }
  return path.join(containerDir(dataDir, podUid, container), `${restartCount}${file}`);
}

/**
 * The restart counts that have a file of this kind in a container's directory (ascending).
 * A directory that does not exist has none.
 */
export async function instanceNumbers(dir: string, file: InstanceFile): Promise<number[]> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
  const numbers: number[] = [];
  for (const name of names) {
    if (!name.endsWith(file)) continue;
    const stem = name.slice(0, -file.length);
    if (/^(0|[1-9]\d*)$/.test(stem)) numbers.push(Number(stem));
  }
  return numbers.sort((a, b) => a - b);
}

/** The subdirectories of `dir` (none when it does not exist). */
export async function subdirectories(dir: string): Promise<string[]> {
  try {
    const entries = await fsp.readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

/**
 * Replaces `file` in one step (write a temporary file, then rename it over the original), so a
 * reader — or an agent restarted after a crash — sees the old content or the new, never half.
 */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const tmp = `${file}.tmp`;
  await fsp.writeFile(tmp, data);
  await fsp.rename(tmp, file);
}

export function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** Pod uids and container names become directory names: refuse anything that could escape. */
function assertPathSegment(value: string, what: string): void {
  if (value === '' || value === '.' || value === '..' || /[/\\\0]/.test(value)) {
    throw new Error(
      `invalid ${what} ${JSON.stringify(value)}: it names a directory, so it must be non-empty and contain no "/", "\\" or NUL`,
    );
  }
}
