import { isConflict } from '../api/errors.js';

/**
 * client-go's retry.RetryOnConflict: runs `attempt` again while it fails with a Conflict, at most
 * `attempts` times in all. `attempt` must read the object afresh each time — a write that lost a race
 * with another writer (a controller updating status, say) is only worth sending again on the newer
 * version.
 */
export async function retryOnConflict<T>(attempts: number, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isConflict(err) || n >= attempts) throw err;
    }
  }
}
