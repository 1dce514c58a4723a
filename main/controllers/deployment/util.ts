/**
 * What the Deployment controller's decisions share (Kubernetes' controller/deployment/util):
 * revisions and the annotations copied to ReplicaSets, the pod-template-hash, maxSurge and
 * maxUnavailable resolved against replicas, replica counts over ReplicaSets, and the orders
 * ReplicaSets are scaled in.
 */
import type { Deployment, PodTemplateSpec, ReplicaSet } from '../../../client/api/types.js';
import { clone } from '../../../client/util/objects.js';
import { canonicalJson } from '../common/hash.js';
import { scaledValue } from '../common/intorpercent.js';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
/** How long revision-history may grow (maxRevHistoryLengthInChars). */
export const MAX_REVISION_HISTORY_CHARS = 2000;

/** Annotations a ReplicaSet never takes from its Deployment (skipCopyAnnotation). */
const NOT_COPIED = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  'deprecated.deployment.rollback.to',
]);

export const replicasOf = (o: Deployment | ReplicaSet | undefined): number => o?.spec?.replicas ?? 0;

export function isRollingUpdate(d: Deployment): boolean {
  return (d.spec?.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

/** maxSurge rounded up, maxUnavailable down; both 0 means 1 unavailable (ResolveFenceposts). */
export function resolveFenceposts(d: Deployment): { surge: number; unavailable: number } {
  const ru = d.spec?.strategy?.rollingUpdate;
  const desired = replicasOf(d);
  const surge = scaledValue(ru?.maxSurge ?? '25%', desired, 'spec.strategy.rollingUpdate.maxSurge', true);
  let unavailable = scaledValue(
    ru?.maxUnavailable ?? '25%',
    desired,
    'spec.strategy.rollingUpdate.maxUnavailable',
    false,
  );
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

export function maxSurge(d: Deployment): number {
  return isRollingUpdate(d) ? resolveFenceposts(d).surge : 0;
}

export function maxUnavailable(d: Deployment): number {
  if (!isRollingUpdate(d) || replicasOf(d) === 0) return 0;
  return Math.min(resolveFenceposts(d).unavailable, replicasOf(d));
}

// ---- counts over ReplicaSets ----

export const specReplicas = (rss: ReplicaSet[]) => rss.reduce((n, rs) => n + replicasOf(rs), 0);
export const actualReplicas = (rss: ReplicaSet[]) => rss.reduce((n, rs) => n + (rs.status?.replicas ?? 0), 0);
export const readyReplicas = (rss: ReplicaSet[]) =>
  rss.reduce((n, rs) => n + (rs.status?.readyReplicas ?? 0), 0);
export const availableReplicas = (rss: ReplicaSet[]) =>
  rss.reduce((n, rs) => n + (rs.status?.availableReplicas ?? 0), 0);

/** ReplicaSets that should have pods (FilterActiveReplicaSets). */
export const activeReplicaSets = (rss: ReplicaSet[]) => rss.filter((rs) => replicasOf(rs) > 0);

// ---- orders ----

const created = (rs: ReplicaSet) => rs.metadata?.creationTimestamp ?? '';
const nameOf = (rs: ReplicaSet) => rs.metadata?.name ?? '';

/** Oldest first, then by name (ReplicaSetsByCreationTimestamp). */
export function byCreation(a: ReplicaSet, b: ReplicaSet): number {
  if (created(a) !== created(b)) return created(a) < created(b) ? -1 : 1;
  return nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0;
}

/** Larger first; on a tie, older first (ReplicaSetsBySizeOlder). */
export function bySizeOlder(a: ReplicaSet, b: ReplicaSet): number {
  return replicasOf(a) === replicasOf(b) ? byCreation(a, b) : replicasOf(b) - replicasOf(a);
}

/** Larger first; on a tie, newer first (ReplicaSetsBySizeNewer). */
export function bySizeNewer(a: ReplicaSet, b: ReplicaSet): number {
  return replicasOf(a) === replicasOf(b) ? byCreation(b, a) : replicasOf(b) - replicasOf(a);
}

/** Lowest revision first, then oldest (ReplicaSetsByRevision). */
export function byRevision(a: ReplicaSet, b: ReplicaSet): number {
  const ra = revisionOf(a);
  const rb = revisionOf(b);
  return ra === rb ? byCreation(a, b) : ra - rb;
}

// ---- templates ----

/** Empty maps and lists are absent, as Kubernetes' semantic equality treats them. */
function pruned(value: unknown): unknown {
  if (Array.isArray(value)) return value.length ? value.map(pruned) : undefined;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const p = pruned(v);
      if (p !== undefined) out[k] = p;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return value;
}

/** The template without the pod-template-hash label. */
export function withoutHash(template: PodTemplateSpec | undefined): PodTemplateSpec {
  const t = clone(template ?? {});
  if (t.metadata?.labels) delete t.metadata.labels[POD_TEMPLATE_HASH_LABEL];
  return t;
}

/** The templates are equal but for the pod-template-hash label (EqualIgnoreHash). */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  return canonicalJson(pruned(withoutHash(a)) ?? {}) === canonicalJson(pruned(withoutHash(b)) ?? {});
}

/** The oldest ReplicaSet whose template is the Deployment's (FindNewReplicaSet). */
export function findNewReplicaSet(d: Deployment, rss: ReplicaSet[]): ReplicaSet | undefined {
  return [...rss].sort(byCreation).find((rs) => equalIgnoreHash(rs.spec?.template, d.spec?.template));
}

// ---- revisions and annotations ----

function parseIntStrict(v: string | undefined): number | undefined {
  if (v === undefined || !/^[+-]?\d+$/.test(v)) return undefined;
  return Number(v);
}

/** The revision annotation, 0 when absent or unreadable (deploymentutil.Revision). */
export function revisionOf(o: Deployment | ReplicaSet): number {
  return parseIntStrict(o.metadata?.annotations?.[REVISION_ANNOTATION]) ?? 0;
}

export function maxRevision(rss: ReplicaSet[]): number {
  return rss.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
}

export function desiredReplicasAnnotation(rs: ReplicaSet): number | undefined {
  return parseIntStrict(rs.metadata?.annotations?.[DESIRED_REPLICAS_ANNOTATION]);
}

export function maxReplicasAnnotation(rs: ReplicaSet): number | undefined {
  return parseIntStrict(rs.metadata?.annotations?.[MAX_REPLICAS_ANNOTATION]);
}

export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number): boolean {
  const a = rs.metadata?.annotations ?? {};
  return a[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || a[MAX_REPLICAS_ANNOTATION] !== String(max);
}

/** Sets desired-replicas and max-replicas on `rs` (mutated); true when either changed. */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  if (!replicasAnnotationsNeedUpdate(rs, desired, max)) return false;
  const meta = (rs.metadata ??= {});
  meta.annotations = {
    ...meta.annotations,
    [DESIRED_REPLICAS_ANNOTATION]: String(desired),
    [MAX_REPLICAS_ANNOTATION]: String(max),
  };
  return true;
}

/**
 * The Deployment's annotations on its new ReplicaSet, the new revision number, the revisions it
 * held before when it is brought back by a rollback (revision-history), and, for a ReplicaSet
 * about to be created, the replicas annotations (SetNewReplicaSetAnnotations). Mutates `rs`;
 * true when anything changed.
 */
export function setNewReplicaSetAnnotations(
  d: Deployment,
  rs: ReplicaSet,
  newRevision: number,
  exists: boolean,
): boolean {
  const meta = (rs.metadata ??= {});
  const annotations = { ...(meta.annotations ?? {}) };
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata?.annotations ?? {})) {
    if (NOT_COPIED.has(k) || annotations[k] === v) continue;
    annotations[k] = v;
    changed = true;
  }
  const oldRevision = annotations[REVISION_ANNOTATION];
  const oldNumber = oldRevision === undefined ? 0 : parseIntStrict(oldRevision);
  if (oldNumber === undefined) {
    meta.annotations = annotations;
    return changed;
  }
  if (oldNumber < newRevision) {
    annotations[REVISION_ANNOTATION] = String(newRevision);
    changed = true;
    if (oldRevision !== undefined) {
      const history = annotations[REVISION_HISTORY_ANNOTATION];
      if (!history) annotations[REVISION_HISTORY_ANNOTATION] = oldRevision;
      else {
        const olds = history.split(',');
        let total = history.length + oldRevision.length + 1;
        let start = 0;
        while (total > MAX_REVISION_HISTORY_CHARS && start < olds.length) {
          total -= olds[start].length + 1;
          start++;
        }
        if (total <= MAX_REVISION_HISTORY_CHARS)
          annotations[REVISION_HISTORY_ANNOTATION] = [...olds.slice(start), oldRevision].join(',');
      }
    }
  }
  meta.annotations = annotations;
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true;
  return changed;
}

/** Sets the Deployment's revision annotation (mutated); true when it changed (SetDeploymentRevision). */
export function setDeploymentRevision(d: Deployment, revision: string): boolean {
  if (d.metadata?.annotations?.[REVISION_ANNOTATION] === revision) return false;
  const meta = (d.metadata ??= {});
  meta.annotations = { ...meta.annotations, [REVISION_ANNOTATION]: revision };
  return true;
}

// ---- scaling arithmetic ----

/**
 * How many pods the new ReplicaSet may have now (NewRSNewReplicas): under RollingUpdate, up to
 * replicas + maxSurge pods in all, never more than replicas in the new one; under Recreate, all.
 */
export function newRSNewReplicas(d: Deployment, all: ReplicaSet[], newRS: ReplicaSet): number {
  if (!isRollingUpdate(d)) return replicasOf(d);
  const maxTotal = replicasOf(d) + maxSurge(d);
  const current = specReplicas(all);
  if (current >= maxTotal) return replicasOf(newRS);
  const scaleUp = Math.min(maxTotal - current, replicasOf(d) - replicasOf(newRS));
  return replicasOf(newRS) + scaleUp;
}

/** The new ReplicaSet has all the Deployment's pods, all of them available (IsSaturated). */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = desiredReplicasAnnotation(rs);
  return (
    replicasOf(rs) === replicasOf(d) &&
    desired === replicasOf(d) &&
    (rs.status?.availableReplicas ?? 0) === replicasOf(d)
  );
}

/** Go's math.Round: halves away from zero. */
function round(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x));
}

/**
 * A ReplicaSet's share of a scale of the Deployment (GetProportion / getReplicaSetFraction): its
 * size scaled by the new total over the total it was sized for (max-replicas), bounded by what
 * is left to add or remove.
 */
export function proportion(rs: ReplicaSet, d: Deployment, toAdd: number, added: number): number {
  if (replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  let fraction: number;
  if (replicasOf(d) === 0) fraction = -replicasOf(rs);
  else {
    const deploymentReplicas = replicasOf(d) + maxSurge(d);
    const annotated = maxReplicasAnnotation(rs) ?? d.status?.replicas ?? 0;
    fraction = annotated > 0 ? round((replicasOf(rs) * deploymentReplicas) / annotated) - replicasOf(rs) : 0;
  }
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}
