/**
 * Files that must read back whole after a crash or a power loss (keys, certificates, token
 * snapshots, lock files): a torn write must never stop the next start. The data goes to a
 * temporary file in the same folder, is flushed to disk, and replaces the old file by rename;
 * the folder is flushed too, so the rename itself survives a power cut. Shared by the control
 * plane and the agent (both lock their data folders with it).
 */
import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export function writeFileAtomic(path: string, data: string | Buffer, mode = 0o600): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const fd = openSync(tmp, 'w', mode);
  try {
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
  syncFolder(dirname(path));
}

/** Flushes a folder's entries (a rename or a new file in it) to disk; not possible on Windows. */
export function syncFolder(folder: string): void {
  if (process.platform === 'win32') return;
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Like writeFileAtomic, but only when `path` does not exist yet (EEXIST otherwise): the file
 * appears whole or not at all, and of two processes creating it at once the first one wins
 * and the other reads its content. link(2) never replaces an existing file, unlike rename.
 */
export function createFileAtomic(path: string, data: string | Buffer, mode = 0o600): void {
  const staged = `${path}.${process.pid}.new`;
  writeFileAtomic(staged, data, mode);
  try {
    linkSync(staged, path);
  } finally {
    rmSync(staged, { force: true });
  }
  syncFolder(dirname(path));
}
