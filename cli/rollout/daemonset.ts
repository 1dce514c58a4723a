/**
 * DaemonSet rollouts as kubectl sees them: DaemonSetStatusViewer's messages, revisions from its
 * ControllerRevisions, rollback by putting a revision's template back.
 */
import type { ControllerRevision, DaemonSet, PodTemplateSpec } from '../../client/api/types.js';
import { deepEqual } from '../../client/util/objects.js';
import { CliError } from '../errors.js';
import type { RolloutKind } from './types.js';

/** The template a revision holds (it stores `spec.template` as a replace patch). */
export function templateOfRevision(r: ControllerRevision): PodTemplateSpec {
  const template = {
    ...((r.data as { spec?: { template?: object } } | undefined)?.spec?.template ?? {}),
  } as Record<string, unknown>;
  delete template.$patch;
  return template as PodTemplateSpec;
}

/** kubectl's DaemonSetStatusViewer: the message and whether the rollout is done. */
export function daemonSetRolloutStatus(ds: DaemonSet): { message: string; done: boolean } {
  const name = ds.metadata?.name;
  const type = ds.spec?.updateStrategy?.type ?? 'RollingUpdate';
  if (type !== 'RollingUpdate')
    throw new CliError(
      `rollout status is only available for RollingUpdate strategy type (${name} uses ${type})`,
    );
  const s = ds.status ?? {};
  if ((ds.metadata?.generation ?? 0) > (s.observedGeneration ?? 0)) {
    return { message: 'Waiting for daemon set spec update to be observed...', done: false };
  }
  const desired = s.desiredNumberScheduled ?? 0;
  if ((s.updatedNumberScheduled ?? 0) < desired) {
    return {
      message: `Waiting for daemon set "${name}" rollout to finish: ${s.updatedNumberScheduled ?? 0} out of ${desired} new pods have been updated...`,
      done: false,
    };
  }
  if ((s.numberAvailable ?? 0) < desired) {
    return {
      message: `Waiting for daemon set "${name}" rollout to finish: ${s.numberAvailable ?? 0} of ${desired} updated pods are available...`,
      done: false,
    };
  }
  return { message: `daemon set "${name}" successfully rolled out`, done: true };
}

export const daemonSetRollout: RolloutKind<DaemonSet> = {
  kind: 'DaemonSet',
  resource: 'daemonset.apps',
  status: daemonSetRolloutStatus,
  async revisions(client, ds) {
    const all = await client.list('ControllerRevision', { namespace: ds.metadata?.namespace });
    return all.items
      .filter((r) => r.metadata?.ownerReferences?.some((o) => o.uid === ds.metadata?.uid))
      .sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0))
      .map((r) => ({
        revision: r.revision ?? 0,
        changeCause: r.metadata?.annotations?.['kubernetes.io/change-cause'],
        template: templateOfRevision(r),
      }));
  },
  isCurrent: (ds, r) => deepEqual(r.template, ds.spec?.template),
  async rollback(client, ds, r) {
    await client.update({ ...ds, spec: { ...ds.spec, template: r.template } });
  },
};
