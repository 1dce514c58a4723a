/**
 * What draining a node does to each of its pods, decided as `kubectl drain --ignore-daemonsets`
 * decides: a DaemonSet's pod is skipped (its DaemonSet would put it straight back); a pod that
 * is already terminating is waited for; a pod managed by a controller is deleted (its
 * controller makes a new one elsewhere); a finished pod is deleted; a pod nothing manages
 * would be gone for good, so it is only deleted when the user says so (kubectl's --force).
 */
import type { Pod } from '../../../client/api/types.js';
import { objectKey } from '../stores/informer.js';

export type DrainAction = 'delete' | 'skip' | 'wait' | 'blocked';

export interface DrainItem {
  /** namespace/name */
  key: string;
  uid: string;
  action: DrainAction;
  reason: string;
  /** How long the pod has to stop once deleted (its terminationGracePeriodSeconds). */
  graceSeconds: number;
}

export interface DrainOptions {
  /** Delete pods no controller manages too (kubectl drain --force). */
  force: boolean;
}

/** Kubernetes' default terminationGracePeriodSeconds. */
export const DEFAULT_GRACE_SECONDS = 30;

function decide(pod: Pod, options: DrainOptions): Pick<DrainItem, 'action' | 'reason'> {
  const owner = pod.metadata?.ownerReferences?.find((r) => r.controller);
  if (pod.metadata?.deletionTimestamp) return { action: 'wait', reason: 'already terminating' };
  if (owner?.kind === 'DaemonSet') {
    return {
      action: 'skip',
      reason: `DaemonSet pod (${owner.name}): its DaemonSet would start it again here`,
    };
  }
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return { action: 'delete', reason: `finished (${phase})` };
  if (owner)
    return { action: 'delete', reason: `managed by ${owner.kind} ${owner.name}: it will be replaced` };
  return options.force
    ? { action: 'delete', reason: 'not managed by a controller: it will not come back' }
    : { action: 'blocked', reason: 'not managed by a controller: deleting it loses it for good' };
}

/** Each pod's fate, in a stable order (by namespace/name). */
export function planDrain(pods: readonly Pod[], options: DrainOptions): DrainItem[] {
  return pods
    .map((pod) => ({
      key: objectKey(pod),
      uid: pod.metadata?.uid ?? '',
      graceSeconds: pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS,
      ...decide(pod, options),
    }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Why the drain cannot start, or undefined when it can. */
export function drainBlocker(plan: readonly DrainItem[]): string | undefined {
  const blocked = plan.filter((i) => i.action === 'blocked').length;
  if (!blocked) return undefined;
  return `${blocked} pod${blocked > 1 ? 's are' : ' is'} not managed by a controller: tick “also delete unmanaged pods” to delete ${blocked > 1 ? 'them' : 'it'} anyway (kubectl drain --force)`;
}
