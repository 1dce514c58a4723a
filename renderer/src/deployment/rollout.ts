/**
 * A Deployment as `kubectl rollout` and `kubectl scale` see it, for the GUI: its rollout's
 * progress in the words of kubectl's DeploymentStatusViewer, its history (one ReplicaSet per
 * template, numbered by the deployment.kubernetes.io/revision annotation), and the patches of
 * scale, pause/resume, restart and undo — undo as kubectl's DeploymentRollbacker does it: the
 * ReplicaSet's template without its pod-template-hash label, and its annotations, put back on
 * the Deployment (labctl's cli/rollout/deployment.ts does the same).
 */
import type {
  Deployment,
  DeploymentCondition,
  Pod,
  PodTemplateSpec,
  ReplicaSet,
} from '../../../client/api/types.js';
import { deepEqual } from '../util/deepequal.js';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
export const CHANGE_CAUSE_ANNOTATION = 'kubernetes.io/change-cause';
/** Annotations that say how a ReplicaSet was made, not what the Deployment asked for (undo keeps the Deployment's). */
const NOT_ROLLED_BACK = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION_ANNOTATION,
  'deployment.kubernetes.io/revision-history',
  'deployment.kubernetes.io/desired-replicas',
  'deployment.kubernetes.io/max-replicas',
  'deprecated.deployment.rollback.to',
]);
/** The largest spec.replicas the API stores (an int32). */
export const MAX_REPLICAS = 2_147_483_647;

export interface DeploymentRollout {
  /** spec.replicas: how many pods the Deployment asks for. */
  replicas: number;
  /** Pods of every ReplicaSet (status.replicas). */
  total: number;
  updated: number;
  ready: number;
  available: number;
  /** Updated share of the wanted pods, 0…1 (1 when none is wanted). */
  fraction: number;
  /** kubectl rollout status would return: every pod is new and available, no old one left. */
  done: boolean;
  /** The rollout made no progress within progressDeadlineSeconds. */
  failed: boolean;
  paused: boolean;
  /** kubectl rollout status's line. */
  message: string;
  /** For a table cell: "done", "2/3", "paused", "failed". */
  short: string;
}

/** kubectl's DeploymentStatusViewer, with its exit on a passed deadline as `failed`. */
export function rolloutState(d: Deployment): DeploymentRollout {
  const name = d.metadata?.name ?? '';
  const s = d.status ?? {};
  const replicas = d.spec?.replicas ?? 1;
  const total = s.replicas ?? 0;
  const updated = s.updatedReplicas ?? 0;
  const ready = s.readyReplicas ?? 0;
  const available = s.availableReplicas ?? 0;
  const paused = !!d.spec?.paused;
  const base = {
    replicas,
    total,
    updated,
    ready,
    available,
    fraction: replicas ? Math.min(1, updated / replicas) : 1,
    paused,
  };
  const waiting = (message: string) => ({
    ...base,
    done: false,
    failed: false,
    message,
    short: paused ? 'paused' : `${updated}/${replicas}`,
  });
  if ((d.metadata?.generation ?? 0) > (s.observedGeneration ?? 0))
    return waiting('Waiting for deployment spec update to be observed...');
  if (condition(d, 'Progressing')?.reason === 'ProgressDeadlineExceeded')
    return {
      ...base,
      done: false,
      failed: true,
      message: `deployment "${name}" exceeded its progress deadline`,
      short: 'failed',
    };
  if (updated < replicas)
    return waiting(
      `Waiting for deployment "${name}" rollout to finish: ${updated} out of ${replicas} new replicas have been updated...`,
    );
  if (total > updated)
    return waiting(
      `Waiting for deployment "${name}" rollout to finish: ${total - updated} old replicas are pending termination...`,
    );
  if (available < updated)
    return waiting(
      `Waiting for deployment "${name}" rollout to finish: ${available} of ${updated} updated replicas are available...`,
    );
  return {
    ...base,
    done: true,
    failed: false,
    message: `deployment "${name}" successfully rolled out`,
    short: 'done',
  };
}

/** READY as `kubectl get deployments` prints it: ready pods of those asked for. */
export function readyText(d: Deployment): string {
  return `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`;
}

export function condition(d: Deployment, type: string): DeploymentCondition | undefined {
  return d.status?.conditions?.find((c) => c.type === type);
}

/** How a condition reads at a glance: Available/Progressing true are good, ReplicaFailure true is bad. */
export function conditionHealth(c: DeploymentCondition): 'good' | 'bad' | 'unknown' {
  if (c.status !== 'True' && c.status !== 'False') return 'unknown';
  const good = c.type === 'ReplicaFailure' ? c.status === 'False' : c.status === 'True';
  return good ? 'good' : 'bad';
}

/** A template as the Deployment holds it: without the hash label its ReplicaSet adds. */
export function withoutHash(template: PodTemplateSpec | undefined): PodTemplateSpec {
  const t = structuredClone(template ?? {});
  if (t.metadata?.labels) {
    delete t.metadata.labels[POD_TEMPLATE_HASH_LABEL];
    if (!Object.keys(t.metadata.labels).length) delete t.metadata.labels;
  }
  return t;
}

export function revisionOf(rs: ReplicaSet): number {
  const n = Number(rs.metadata?.annotations?.[REVISION_ANNOTATION]);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/** Whether the Deployment runs this ReplicaSet's template now (undo to it would change nothing). */
export function isCurrent(d: Deployment, rs: ReplicaSet): boolean {
  return deepEqual(withoutHash(rs.spec?.template), withoutHash(d.spec?.template));
}

export interface Revision {
  revision: number;
  replicaSet: ReplicaSet;
  current: boolean;
  /** spec.replicas of the ReplicaSet: what the rollout has it at now. */
  desired: number;
  pods: number;
  ready: number;
  available: number;
  /** "name: image" per container (or its command when it has no image). */
  containers: string[];
  changeCause?: string;
  restartedAt?: string;
}

/** The Deployment's history: the ReplicaSets it controls, newest revision first. */
export function historyOf(d: Deployment, replicaSets: Iterable<ReplicaSet>): Revision[] {
  const uid = d.metadata?.uid;
  const rows: Revision[] = [];
  for (const rs of replicaSets) {
    if (!uid || !rs.metadata?.ownerReferences?.some((o) => o.controller && o.uid === uid)) continue;
    const template = rs.spec?.template;
    rows.push({
      revision: revisionOf(rs),
      replicaSet: rs,
      current: isCurrent(d, rs),
      desired: rs.spec?.replicas ?? 0,
      pods: rs.status?.replicas ?? 0,
      ready: rs.status?.readyReplicas ?? 0,
      available: rs.status?.availableReplicas ?? 0,
      containers: (template?.spec?.containers ?? []).map(
        (c) => `${c.name}: ${c.image || (c.command ?? []).concat(c.args ?? []).join(' ') || '—'}`,
      ),
      changeCause: rs.metadata?.annotations?.[CHANGE_CAUSE_ANNOTATION],
      restartedAt: template?.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt'],
    });
  }
  return rows.sort(
    (a, b) =>
      b.revision - a.revision ||
      (b.replicaSet.metadata?.creationTimestamp ?? '').localeCompare(
        a.replicaSet.metadata?.creationTimestamp ?? '',
      ),
  );
}

/** The revision a pod belongs to, by its pod-template-hash label. */
export function podRevision(pod: Pod, history: readonly Revision[]): number | undefined {
  const hash = pod.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL];
  if (!hash) return undefined;
  return history.find((r) => r.replicaSet.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL] === hash)?.revision;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** What a person typed as the new number of replicas: a whole number, 0 or more. */
export function parseReplicas(text: string): Parsed<number> {
  const t = text.trim();
  const rule = 'replicas must be a whole number, 0 or more';
  if (!t) return { ok: false, error: `Enter the number of replicas: ${rule}.` };
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(t)) return { ok: false, error: `"${t}" is not a number: ${rule}.` };
  const value = Number(t) || 0; // || 0: "-0" is 0
  if (value < 0) return { ok: false, error: `${t} is negative: ${rule}.` };
  if (!Number.isInteger(value)) return { ok: false, error: `${t} is not a whole number: ${rule}.` };
  if (value > MAX_REPLICAS)
    return { ok: false, error: `${t} is too many: at most ${MAX_REPLICAS.toLocaleString('en')} replicas.` };
  return { ok: true, value };
}

/** The merge patch of `kubectl scale --replicas=N`. */
export function scalePatch(replicas: number): object {
  return { spec: { replicas } };
}

/** The merge patch of `kubectl rollout pause` (true) and `resume` (false). */
export function pausePatch(paused: boolean): object {
  return { spec: { paused } };
}

/** Why `kubectl rollout restart` would refuse, or undefined. */
export function refuseRestart(d: Deployment): string | undefined {
  return d.spec?.paused
    ? `cannot restart the paused deployment "${d.metadata?.name}": resume it first`
    : undefined;
}

/** Why `kubectl rollout undo` would refuse, or undefined. */
export function refuseRollback(d: Deployment, to: Revision): string | undefined {
  if (d.spec?.paused) return `cannot roll back the paused deployment "${d.metadata?.name}": resume it first`;
  if (to.current) return `skipped rollback (current template already matches revision ${to.revision})`;
  return undefined;
}

/**
 * The JSON patch of `kubectl rollout undo --to-revision`: the ReplicaSet's template, and its
 * annotations beside the Deployment's own bookkeeping.
 */
export function rollbackPatch(d: Deployment, to: ReplicaSet): object[] {
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.metadata?.annotations ?? {}))
    if (NOT_ROLLED_BACK.has(k)) annotations[k] = v;
  for (const [k, v] of Object.entries(to.metadata?.annotations ?? {}))
    if (!NOT_ROLLED_BACK.has(k)) annotations[k] = v;
  return [
    { op: 'replace', path: '/spec/template', value: withoutHash(to.spec?.template) },
    // "add" replaces the member when there is one, and makes it when there is none.
    { op: 'add', path: '/metadata/annotations', value: annotations },
  ];
}
