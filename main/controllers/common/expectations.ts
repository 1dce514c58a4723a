/**
 * Controller expectations (Kubernetes' ControllerExpectations): before creating or deleting
 * pods, a controller records how many adds and deletes it expects to see through its
 * informer; until they are seen (or 5 minutes pass), it does not act on a cache that may not
 * show its own writes yet — so it never creates a pod twice.
 */
export const EXPECTATIONS_TTL_MS = 5 * 60_000;

interface Expectation {
  add: number;
  del: number;
  timestamp: number;
  /**
   * The pods whose deletion is expected, when known (UIDTrackingControllerExpectations): a pod
   * is seen going twice — marked for deletion, then gone — and must count once.
   */
  deleting?: Set<string>;
}

export class ControllerExpectations {
  private readonly records = new Map<string, Expectation>();

  constructor(private readonly now: () => number) {}

  setExpectations(key: string, add: number, del: number): void {
    this.records.set(key, { add, del, timestamp: this.now() });
  }

  /** Expects these pods (by UID) to go; each one's deletion counts once, however often it is seen. */
  expectDeletions(key: string, uids: string[]): void {
    this.records.set(key, { add: 0, del: uids.length, timestamp: this.now(), deleting: new Set(uids) });
  }

  creationObserved(key: string): void {
    this.lower(key, 1, 0);
  }

  deletionObserved(key: string, uid?: string): void {
    const deleting = this.records.get(key)?.deleting;
    if (deleting && uid !== undefined) {
      if (!deleting.delete(uid)) return;
    }
    this.lower(key, 0, 1);
  }

  /** No record, everything seen, or expired: the cache can be trusted. */
  satisfiedExpectations(key: string): boolean {
    const e = this.records.get(key);
    if (!e) return true;
    if (e.add <= 0 && e.del <= 0) return true;
    return this.now() - e.timestamp > EXPECTATIONS_TTL_MS;
  }

  deleteExpectations(key: string): void {
    this.records.delete(key);
  }

  /** What is still expected (for tests and debugging). */
  get(key: string): { add: number; del: number } | undefined {
    const e = this.records.get(key);
    return e && { add: e.add, del: e.del };
  }

  private lower(key: string, add: number, del: number): void {
    const e = this.records.get(key);
    if (!e) return;
    e.add -= add;
    e.del -= del;
  }
}
