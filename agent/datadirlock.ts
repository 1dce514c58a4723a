/**
 * One agent per data folder. Two agents on one folder would both adopt the same containers,
 * stop each other's pods as orphans and fight over one node's credential; the second is
 * refused, naming the folder and the agent that holds it (client/util/lockfile.ts: a lock
 * left by an agent that crashed does not count once its process is gone).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describeHolder, takeLockFile } from '../client/util/lockfile.js';

/** The lock file inside the data folder. */
export function dataDirLockPath(dataDir: string): string {
  return join(dataDir, 'agent.lock');
}

/** Locks `dataDir` for this process (creating the folder, 0700), or throws naming the holder; returns the release. */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lockPath = dataDirLockPath(dataDir);
  return takeLockFile(
    lockPath,
    (holder) =>
      new Error(
        `the data folder ${dataDir} is in use by another kubelab-agent (${describeHolder(holder)}): stop that agent first (sudo systemctl stop kubelab-agent, if it runs as the service), or give this one its own --data-dir. If no kubelab-agent runs, delete ${lockPath}`,
      ),
  );
}
