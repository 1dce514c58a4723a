/**
 * Deployment rollouts as kubectl sees them: DeploymentStatusViewer's messages, revisions from
 * its ReplicaSets' revision annotations, and DeploymentRollbacker's undo — the ReplicaSet's
 * template without the pod-template-hash label, and the annotations it carries, put back on the
 * Deployment.
 */
import type { Deployment, PodTemplateSpec, ReplicaSet } from '../../client/api/types.js';
import { clone, deepEqual } from '../../client/util/objects.js';
import { CliError } from '../errors.js';
import type { RolloutKind } from './types.js';

const REVISION = 'deployment.kubernetes.io/revision';
const HASH_LABEL = 'pod-template-hash';
/** Annotations that say how a ReplicaSet was made, not what the Deployment asked for (rollback's skip list). */
const NOT_ROLLED_BACK = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION,
  'deployment.kubernetes.io/revision-history',
  'deployment.kubernetes.io/desired-replicas',
  'deployment.kubernetes.io/max-replicas',
  'deprecated.deployment.rollback.to',
]);

/** kubectl's DeploymentStatusViewer. */
export function deploymentRolloutStatus(d: Deployment): { message: string; done: boolean } {
  const name = d.metadata?.name;
  const s = d.status ?? {};
  if ((d.metadata?.generation ?? 0) > (s.observedGeneration ?? 0))
    return { message: 'Waiting for deployment spec update to be observed...', done: false };
  const progressing = s.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded')
    throw new CliError(`deployment "${name}" exceeded its progress deadline`);
  const replicas = d.spec?.replicas ?? 1;
  const updated = s.updatedReplicas ?? 0;
  if (updated < replicas)
    return {
      message: `Waiting for deployment "${name}" rollout to finish: ${updated} out of ${replicas} new replicas have been updated...`,
      done: false,
    };
  if ((s.replicas ?? 0) > updated)
    return {
      message: `Waiting for deployment "${name}" rollout to finish: ${(s.replicas ?? 0) - updated} old replicas are pending termination...`,
      done: false,
    };
  if ((s.availableReplicas ?? 0) < updated)
    return {
      message: `Waiting for deployment "${name}" rollout to finish: ${s.availableReplicas ?? 0} of ${updated} updated replicas are available...`,
      done: false,
    };
  return { message: `deployment "${name}" successfully rolled out`, done: true };
}

function withoutHash(template: PodTemplateSpec | undefined): PodTemplateSpec {
  const t = clone(template ?? {});
  if (t.metadata?.labels) {
    delete t.metadata.labels[HASH_LABEL];
    if (!Object.keys(t.metadata.labels).length) delete t.metadata.labels;
  }
  return t;
}

async function replicaSetsOf(
  client: Parameters<RolloutKind['revisions']>[0],
  d: Deployment,
): Promise<ReplicaSet[]> {
  const all = await client.list('ReplicaSet', { namespace: d.metadata?.namespace });
  return all.items.filter((rs) =>
    rs.metadata?.ownerReferences?.some((o) => o.controller && o.uid === d.metadata?.uid),
  );
}

export const deploymentRollout: RolloutKind<Deployment> = {
  kind: 'Deployment',
  resource: 'deployment.apps',
  status: deploymentRolloutStatus,
  async revisions(client, d) {
    return (await replicaSetsOf(client, d))
      .map((rs) => ({
        revision: Number(rs.metadata?.annotations?.[REVISION] ?? 0) || 0,
        changeCause: rs.metadata?.annotations?.['kubernetes.io/change-cause'],
        template: withoutHash(rs.spec?.template),
        annotations: rs.metadata?.annotations ?? {},
      }))
      .filter((r) => r.revision > 0)
      .sort((a, b) => a.revision - b.revision);
  },
  isCurrent: (d, r) => deepEqual(withoutHash(d.spec?.template), r.template),
  refuseRollback: (d) =>
    d.spec?.paused
      ? `you cannot rollback a paused deployment; resume it first with 'labctl rollout resume deployment/${d.metadata?.name}' and try again`
      : undefined,
  async rollback(client, d, r) {
    const fromRS = r.annotations ?? {};
    const annotations: Record<string, string> = {};
    // The Deployment keeps its own bookkeeping and takes the ReplicaSet's other annotations.
    for (const [k, v] of Object.entries(d.metadata?.annotations ?? {}))
      if (NOT_ROLLED_BACK.has(k)) annotations[k] = v;
    for (const [k, v] of Object.entries(fromRS)) if (!NOT_ROLLED_BACK.has(k)) annotations[k] = v;
    await client.update({
      ...d,
      metadata: { ...d.metadata, annotations },
      spec: { ...d.spec, template: r.template },
    });
  },
};
