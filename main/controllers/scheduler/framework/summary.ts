/** The FailedScheduling message for a pod no node can take (Kubernetes' FitError.Error). */

/** What Kubernetes reports when there is no node to try at all. */
export const NO_NODES_AVAILABLE = 'no nodes available to schedule pods';

/** Go's sort.Strings order (bytewise UTF-8, which is code point order), not JavaScript's UTF-16 order. */
function compareCodePoints(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.codePointAt(i) ?? 0;
    const cb = b.codePointAt(j) ?? 0;
    if (ca !== cb) return ca - cb;
    i += ca > 0xffff ? 2 : 1;
    j += cb > 0xffff ? 2 : 1;
  }
  return (i < a.length ? 1 : 0) - (j < b.length ? 1 : 0);
}

/**
 * "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {k: }."
 * Each reason is counted once per node that gave it, and the "count reason" strings are sorted
 * as strings, as Kubernetes sorts them ("10 x" before "2 y"). With no reasons Kubernetes
 * prints just "0/N nodes are available:", and so do we.
 */
export function failureSummary(totalNodes: number, reasonsPerNode: Map<string, string[]>): string {
  if (totalNodes === 0) return NO_NODES_AVAILABLE;
  const counts = new Map<string, number>();
  for (const reasons of reasonsPerNode.values()) {
    for (const reason of reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  const histogram = [...counts].map(([reason, n]) => `${n} ${reason}`).sort(compareCodePoints);
  const message = `0/${totalNodes} nodes are available:`;
  return histogram.length > 0 ? `${message} ${histogram.join(', ')}.` : message;
}
