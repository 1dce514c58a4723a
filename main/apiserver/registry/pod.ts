/** Pods: defaults, validation, graceful deletion (Kubernetes' pod strategy). */
import { kindInfo } from '../../../client/api/kinds.js';
import { isPodTerminal, podQOSClass } from '../../../client/api/pods.js';
import type { Container, Pod, PodSpec, Probe, Toleration } from '../../../client/api/types.js';
import { clone, deepEqual } from '../../../client/util/objects.js';
import { forbidden, type FieldError } from '../../../client/api/validation.js';
import { validateEnum, validateMin, validateTimestamp } from '../validation/common.js';
import { validatePodSpec } from '../validation/podspec.js';
import type { Strategy } from './strategy.js';

export const DEFAULT_TERMINATION_GRACE_SECONDS = 30;
export const POD_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];

function defaultProbe(p: Probe | undefined): void {
  if (!p) return;
  p.timeoutSeconds ??= 1;
  p.periodSeconds ??= 10;
  p.successThreshold ??= 1;
  p.failureThreshold ??= 3;
  if (p.httpGet) {
    p.httpGet.path ??= '/';
    p.httpGet.scheme ??= 'HTTP';
  }
}

function defaultContainer(c: Container): void {
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  if (c.image && !c.imagePullPolicy) {
    const tag = c.image.includes('@') ? 'digest' : /:[^/]+$/.exec(c.image)?.[0].slice(1);
    c.imagePullPolicy = !tag || tag === 'latest' ? 'Always' : 'IfNotPresent';
  }
  for (const p of c.ports ?? []) p.protocol ??= 'TCP';
  // Requests default to limits (Kubernetes' defaulting of resource requests).
  const limits = c.resources?.limits;
  if (limits) {
    const requests = (c.resources!.requests ??= {});
    for (const [name, q] of Object.entries(limits)) requests[name] ??= q;
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

export function applyPodSpecDefaults(spec: PodSpec): void {
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= DEFAULT_TERMINATION_GRACE_SECONDS;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.enableServiceLinks ??= true;
  spec.priority ??= 0;
  for (const c of spec.initContainers ?? []) defaultContainer(c);
  for (const c of spec.containers ?? []) defaultContainer(c);
}

/** The spec with the fields Kubernetes lets an update change masked out. */
function immutablePart(spec: PodSpec | undefined): unknown {
  const s = clone(spec ?? {});
  for (const c of [...(s.initContainers ?? []), ...(s.containers ?? [])]) delete c.image;
  delete s.activeDeadlineSeconds;
  delete s.tolerations;
  delete s.terminationGracePeriodSeconds;
  return s;
}

/** A toleration as Kubernetes compares it on update: every field but tolerationSeconds, unset as empty. */
function tolerationIdentity(t: Toleration): [string, string, string, string] {
  return [t.key ?? '', t.operator ?? '', t.value ?? '', t.effect ?? ''];
}

/**
 * Kubernetes' validateOnlyAddedTolerations: every toleration the pod had must still be there,
 * its tolerationSeconds alone may change (so a pod can be given more or less time on a
 * NoExecute-tainted node); new ones may be added. One error for the whole list, as there.
 */
function validateOnlyAddedTolerations(
  next: Toleration[] | undefined,
  old: Toleration[] | undefined,
  path: string,
): FieldError[] {
  const kept = new Set((next ?? []).map((t) => JSON.stringify(tolerationIdentity(t))));
  for (const t of old ?? []) {
    if (!kept.has(JSON.stringify(tolerationIdentity(t))))
      return [forbidden(path, 'existing toleration can not be modified except its tolerationSeconds')];
  }
  return [];
}

export const podStrategy: Strategy<Pod> = {
  info: kindInfo('Pod'),
  nameRule: 'subdomain',
  tracksGeneration: true,
  selectableFields: {
    'spec.nodeName': (p) => p.spec?.nodeName ?? '',
    'spec.restartPolicy': (p) => p.spec?.restartPolicy ?? '',
    'spec.schedulerName': (p) => p.spec?.schedulerName ?? '',
    'spec.serviceAccountName': (p) => p.spec?.serviceAccountName ?? '',
    'status.phase': (p) => p.status?.phase ?? '',
    'status.podIP': (p) => p.status?.podIP ?? '',
    'status.nominatedNodeName': (p) => p.status?.nominatedNodeName ?? '',
  },
  applyDefaults(pod) {
    applyPodSpecDefaults((pod.spec ??= {}));
  },
  prepareForCreate(pod) {
    pod.status = { phase: 'Pending', qosClass: podQOSClass(pod.spec) };
  },
  validate(pod) {
    const errors = validatePodSpec(pod.spec, 'spec');
    validateEnum(pod.status?.phase, 'status.phase', POD_PHASES, errors);
    validateTimestamp(pod.status?.startTime, 'status.startTime', errors);
    (pod.status?.containerStatuses ?? []).forEach((cs, i) =>
      validateMin(cs.restartCount, `status.containerStatuses[${i}].restartCount`, 0, errors),
    );
    (pod.status?.conditions ?? []).forEach((c, i) => {
      validateEnum(c.status, `status.conditions[${i}].status`, ['True', 'False', 'Unknown'], errors, false);
      validateTimestamp(c.lastTransitionTime, `status.conditions[${i}].lastTransitionTime`, errors);
    });
    return errors;
  },
  validateUpdate(pod, old) {
    // The tolerations first, then the rest of the spec: Kubernetes' order (ValidatePodUpdate).
    const errors = validateOnlyAddedTolerations(
      pod.spec?.tolerations,
      old.spec?.tolerations,
      'spec.tolerations',
    );
    if (!deepEqual(immutablePart(pod.spec), immutablePart(old.spec))) {
      errors.push(
        forbidden(
          'spec',
          'pod updates may not change fields other than spec.containers[*].image, spec.initContainers[*].image, spec.activeDeadlineSeconds, spec.tolerations (only additions to existing tolerations) and spec.terminationGracePeriodSeconds; delete and recreate the pod instead',
        ),
      );
    }
    return errors;
  },
  validateStatus(pod, old) {
    const errors: FieldError[] = [];
    // A pod that finished stays finished (Kubernetes forbids leaving a terminal phase).
    if (isPodTerminal(old) && pod.status?.phase !== old.status?.phase) {
      errors.push(
        forbidden(
          'status.phase',
          `a pod in phase ${old.status?.phase} cannot move to ${pod.status?.phase ?? 'no phase'}`,
        ),
      );
    }
    return errors;
  },
  gracePeriod(pod, requested) {
    // Unscheduled or finished pods have nothing to stop: they go at once.
    if (!pod.spec?.nodeName || isPodTerminal(pod)) return 0;
    return requested ?? pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_SECONDS;
  },
};
