/** The pod garbage collector's settings (Kubernetes' PodGCControllerConfiguration). */
export interface PodGCConfig {
  /**
   * Finished (Succeeded or Failed) pods kept before the oldest are deleted; 0 keeps them all
   * (--terminated-pod-gc-threshold).
   */
  terminatedPodThreshold: number;
  /**
   * How long a node must be missing before its pods are deleted (Kubernetes' fixed quarantine):
   * a node seen missing by a cache that has not caught up yet, or deleted and registered again
   * at once, keeps its pods.
   */
  quarantineMs: number;
}

export const DEFAULT_POD_GC: PodGCConfig = {
  // Kubernetes keeps 12,500, sized for clusters of thousands of nodes. A home lab runs tens of
  // pods: 1,000 finished ones leave plenty to inspect (phase, exit codes, events) while every
  // one of them still costs memory in the store, the watch cache, every informer and the GUI's
  // pod list.
  terminatedPodThreshold: 1000,
  quarantineMs: 40_000,
};
