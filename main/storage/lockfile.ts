/**
 * One server owns a database file: `<file>.lock` next to it names it (client/util/lockfile.ts:
 * pid, start time, boot and host, so a lock left by a crashed server does not block the next
 * start once its process is gone).
 */
import { describeHolder, takeLockFile, type LockHolder } from '../../client/util/lockfile.js';
import { StorageError } from './types.js';

/** Takes the lock on `path` or throws 'Unavailable' naming the live holder; returns the release. */
export function takeLock(path: string): () => void {
  return takeLockFile(`${path}.lock`, (holder) => inUse(path, holder));
}

function inUse(path: string, holder: LockHolder): StorageError {
  return new StorageError(
    'Unavailable',
    `the database ${path} is in use by another kubelab server (${describeHolder(holder)}); stop it or choose another --data-dir (if no kubelab server runs, delete ${path}.lock)`,
  );
}
