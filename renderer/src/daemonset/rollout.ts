/**
 * A DaemonSet's rollout as `kubectl rollout` sees it: its progress, a restart (a new pod
 * template annotation, so every pod is replaced under the update strategy), and undo to an
 * earlier revision — its ControllerRevisions hold each template as a replace-patch of
 * spec.template, and rolling back puts that template back (the controller then makes the old
 * revision the newest, as Kubernetes does).
 */
import type { ControllerRevision, DaemonSet, PodTemplateSpec } from '../../../client/api/types.js';
import { rfc3339 } from '../../../client/util/clock.js';
import { deepEqual } from '../util/deepequal.js';

export const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

export interface RolloutState {
  desired: number;
  updated: number;
  available: number;
  ready: number;
  /** Updated share of the desired pods, 0…1 (1 when nothing is desired). */
  fraction: number;
  /** Every desired pod runs the current template and is available (kubectl rollout status). */
  done: boolean;
  /** For a table cell: "3/5" or "done". */
  short: string;
  /** For people: "3 of 5 updated, 2 available". */
  text: string;
}

export function rolloutState(ds: DaemonSet): RolloutState {
  const s = ds.status ?? {};
  const desired = s.desiredNumberScheduled ?? 0;
  const updated = s.updatedNumberScheduled ?? 0;
  const available = s.numberAvailable ?? 0;
  const ready = s.numberReady ?? 0;
  const observed = (s.observedGeneration ?? 0) >= (ds.metadata?.generation ?? 0);
  const done = observed && updated >= desired && available >= desired;
  return {
    desired,
    updated,
    available,
    ready,
    fraction: desired ? Math.min(1, updated / desired) : 1,
    done,
    short: done ? 'done' : `${updated}/${desired}`,
    text: !observed
      ? 'waiting for the controller to see the change'
      : done
        ? `all ${desired} pods updated and available`
        : `${updated} of ${desired} updated, ${available} available`,
  };
}

/** The merge patch of `kubectl rollout restart`: a new template annotation with the time. */
export function restartPatch(at: Date): object {
  return {
    spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: rfc3339(at.getTime()) } } } },
  };
}

/** The DaemonSet's revisions (those it controls), newest first. */
export function revisionsOf(ds: DaemonSet, revisions: Iterable<ControllerRevision>): ControllerRevision[] {
  const uid = ds.metadata?.uid;
  return [...revisions]
    .filter((r) => r.metadata?.ownerReferences?.some((o) => o.controller && o.uid === uid))
    .sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0));
}

/** The pod template a revision holds. */
export function templateOf(revision: ControllerRevision): PodTemplateSpec {
  const stored = (revision.data as { spec?: { template?: Record<string, unknown> } } | undefined)?.spec
    ?.template;
  const { $patch: _replace, ...template } = stored ?? {};
  return template as PodTemplateSpec;
}

/** Whether the DaemonSet runs this revision's template now (rolling back to it changes nothing). */
export function isCurrent(ds: DaemonSet, revision: ControllerRevision): boolean {
  return deepEqual(templateOf(revision), ds.spec?.template ?? {});
}

/** The JSON patch of `kubectl rollout undo --to-revision`: the whole template replaced. */
export function rollbackPatch(revision: ControllerRevision): object[] {
  return [{ op: 'replace', path: '/spec/template', value: templateOf(revision) }];
}

/** What tells revisions apart at a glance: their images (or commands) and restart time. */
export function revisionSummary(revision: ControllerRevision): {
  containers: string[];
  restartedAt?: string;
} {
  const template = templateOf(revision);
  return {
    containers: (template.spec?.containers ?? []).map(
      (c) => `${c.name}: ${c.image || (c.command ?? []).concat(c.args ?? []).join(' ') || '—'}`,
    ),
    restartedAt: template.metadata?.annotations?.[RESTARTED_AT_ANNOTATION],
  };
}
