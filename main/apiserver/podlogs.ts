/**
 * Kubernetes' pods/log, the apiserver's half: checking the options (ValidatePodLogOptions),
 * choosing the container (registry/core/pod LogLocation), and the interface to whatever
 * reaches the pod's agent (the tunnel registry). The gRPC service and the in-process client
 * both go through ApiServer.podLogTarget and ApiServer.logs, which use these.
 */
import { ApiError, invalid } from '../../client/api/errors.js';
import type { LocalLogSink, LocalLogStream } from '../../client/api/local.js';
import type { LogsRequest, Pod } from '../../client/api/types.js';
import {
  forbidden as forbiddenField,
  invalid as invalidField,
  notSupported,
  required,
  type FieldError,
} from '../../client/api/validation.js';

/** What the agent is asked for: its LogRequest (agent/runtime/types.ts), times in epoch ms. */
export interface AgentLogRequest {
  podUid: string;
  container: string;
  tailLines?: number;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  sinceTime?: number;
  limitBytes?: number;
}

/** Where a log lives and what to ask its agent: the result of authorization and lookup. */
export interface PodLogTarget {
  namespace: string;
  pod: string;
  nodeName: string;
  container: string;
  request: AgentLogRequest;
}

/** Reaches agents: implemented by the tunnel registry of the gRPC server. */
export interface LogTunnels {
  /**
   * Opens a log stream on the target node's agent; throws FailedPrecondition when it has no
   * live tunnel. Bytes and the end go to `sink`; `stop()` cancels it at the agent.
   */
  openLogs(target: PodLogTarget, sink: LocalLogSink): LocalLogStream;
}

/** RFC 3339 with a time zone (Kubernetes' metav1.Time accepts this and nothing looser). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function wholeNumber(v: number): boolean {
  return Number.isSafeInteger(v);
}

/**
 * The options as the agent takes them (sinceSeconds becomes a sinceTime on this server's
 * clock), or an Invalid error naming every bad field.
 */
export function podLogOptions(
  podName: string,
  req: LogsRequest,
  now: number,
): Omit<AgentLogRequest, 'podUid' | 'container'> {
  const errors: FieldError[] = [];
  const { tailLines, sinceSeconds, limitBytes } = req;
  const sinceTimeText = req.sinceTime ?? '';
  if (tailLines !== undefined && (!wholeNumber(tailLines) || tailLines < 0))
    errors.push(invalidField('tailLines', tailLines, 'must be a whole number, 0 or more'));
  if (limitBytes !== undefined && (!wholeNumber(limitBytes) || limitBytes < 1))
    errors.push(invalidField('limitBytes', limitBytes, 'must be a whole number greater than 0'));
  if (sinceSeconds !== undefined && (!wholeNumber(sinceSeconds) || sinceSeconds < 1))
    errors.push(invalidField('sinceSeconds', sinceSeconds, 'must be a whole number greater than 0'));
  let sinceTime: number | undefined;
  if (sinceTimeText) {
    sinceTime = Date.parse(sinceTimeText);
    if (!RFC3339.test(sinceTimeText) || Number.isNaN(sinceTime))
      errors.push(
        invalidField('sinceTime', sinceTimeText, 'must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z'),
      );
  }
  if (sinceTimeText && sinceSeconds !== undefined)
    errors.push(
      forbiddenField('sinceSeconds', 'at most one of `sinceTime` or `sinceSeconds` may be specified'),
    );
  if (errors.length) throw invalid('PodLogOptions', podName, errors);
  if (sinceSeconds !== undefined) sinceTime = now - sinceSeconds * 1000;
  return {
    follow: req.follow ?? false,
    previous: req.previous ?? false,
    timestamps: req.timestamps ?? false,
    ...(tailLines !== undefined ? { tailLines } : {}),
    ...(limitBytes !== undefined ? { limitBytes } : {}),
    ...(sinceTime !== undefined ? { sinceTime } : {}),
  };
}

function names(list: Array<{ name?: string }> | undefined): string[] {
  return (list ?? []).map((c) => c.name ?? '').filter(Boolean);
}

/**
 * The container whose log is read: the one named, or the pod's only container. Anything else
 * is a BadRequest (INVALID_ARGUMENT) naming the `container` field and listing the choices.
 */
export function chooseContainer(pod: Pod, requested: string): string {
  const ns = pod.metadata?.namespace ?? '';
  const name = pod.metadata?.name ?? '';
  const containers = names(pod.spec?.containers);
  const inits = names(pod.spec?.initContainers);
  const all = [...containers, ...inits];
  const choices = `${containers.join(', ')}${inits.length ? ` (init containers: ${inits.join(', ')})` : ''}`;
  const details = (cause: FieldError) => ({ kind: 'Pod', name, namespace: ns, causes: [cause] });
  if (!requested) {
    if (containers.length === 1) return containers[0];
    throw new ApiError(
      'BadRequest',
      `pod ${ns}/${name} has ${containers.length} containers (${choices}): name one with \`container\` (kubectl logs ${name} -c <container>)`,
      details(required('container', `choose one of: ${all.join(', ')}`)),
    );
  }
  if (!all.includes(requested)) {
    throw new ApiError(
      'BadRequest',
      `container "${requested}" is not valid for pod ${ns}/${name}: choose one of ${choices}`,
      details(notSupported('container', requested, all)),
    );
  }
  return requested;
}

/** A pod without a node has no agent, hence no log yet. */
export function notScheduled(namespace: string, name: string): ApiError {
  return new ApiError(
    'FailedPrecondition',
    `pod ${namespace}/${name} is not scheduled to a node yet (spec.nodeName is empty), so it has no logs: wait until it is scheduled, and check its PodScheduled condition if it stays Pending`,
    { kind: 'Pod', name, namespace },
  );
}
