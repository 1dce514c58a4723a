/**
 * A DaemonSet's history (controller_history): each distinct pod template is a
 * ControllerRevision named `<ds>-<hash>`, holding the template as Kubernetes does (a patch of
 * `spec.template` with `$patch: replace`) and a revision number; the newest is the current
 * one. The hash covers the template and status.collisionCount, so a name clash with a revision
 * of another template is resolved by counting the collision and hashing again.
 */
import type { ControllerRevision, DaemonSet, PodTemplateSpec } from '../../../client/api/types.js';
import { canonicalJson } from '../common/hash.js';
import { REVISION_HASH_LABEL } from './util.js';

/** What a revision stores: the template as a replace-patch of the DaemonSet. */
export function revisionData(ds: DaemonSet): Record<string, unknown> {
  return { spec: { template: { ...(ds.spec?.template ?? {}), $patch: 'replace' } } };
}

/** The template a revision holds (for rollback). */
export function templateOf(revision: ControllerRevision): PodTemplateSpec {
  const template = { ...((revision.data as { spec?: { template?: object } })?.spec?.template ?? {}) };
  delete (template as Record<string, unknown>).$patch;
  return template as PodTemplateSpec;
}

/** The revision holds the DaemonSet's current template (history.Match). */
export function revisionMatches(ds: DaemonSet, revision: ControllerRevision): boolean {
  return canonicalJson(revision.data ?? {}) === canonicalJson(revisionData(ds));
}

export function revisionName(ds: DaemonSet, hash: string): string {
  return `${ds.metadata!.name}-${hash}`;
}

export function maxRevision(revisions: ControllerRevision[]): number {
  return revisions.reduce((m, r) => Math.max(m, r.revision ?? 0), 0);
}

/** A new revision object for the current template, owned by the DaemonSet. */
export function newRevision(ds: DaemonSet, hash: string, revision: number): ControllerRevision {
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(ds, hash),
      namespace: ds.metadata!.namespace,
      labels: { ...(ds.spec?.template?.metadata?.labels ?? {}), [REVISION_HASH_LABEL]: hash },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          name: ds.metadata!.name,
          uid: ds.metadata!.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: revisionData(ds),
    revision,
  };
}

/**
 * Revisions to delete beyond revisionHistoryLimit (cleanupHistory): the oldest first, never
 * one whose hash a live pod still carries, never the current one (not in `old`).
 */
export function revisionsToDelete(
  ds: DaemonSet,
  old: ControllerRevision[],
  liveHashes: Set<string>,
): ControllerRevision[] {
  let toKill = old.length - (ds.spec?.revisionHistoryLimit ?? 10);
  const result: ControllerRevision[] = [];
  for (const r of [...old].sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0))) {
    if (toKill <= 0) break;
    if (liveHashes.has(r.metadata?.labels?.[REVISION_HASH_LABEL] ?? '')) continue;
    result.push(r);
    toKill--;
  }
  return result;
}
