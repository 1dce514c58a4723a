/** Pod helpers every participant needs (Kubernetes' pod utilities). */
import type { Container, Pod, PodSpec } from './types.js';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** Kubernetes' GetPodQOS: from the containers' requests and limits of cpu and memory. */
export function podQOSClass(spec: PodSpec | undefined): QOSClass {
  const containers: Container[] = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    for (const r of ['cpu', 'memory']) {
      if (req[r] !== undefined || lim[r] !== undefined) any = true;
      const effectiveReq = req[r] ?? lim[r];
      if (lim[r] === undefined || effectiveReq !== lim[r]) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export function isPodTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** A pod counts as ready when its Ready condition is True. */
export function isPodReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}
