/** `describe pod`: kubectl's DescribePod, for what kubelab's pods have. */
import { podQOSClass } from '../../client/api/pods.js';
import type { Container, ContainerState, ContainerStatus, Pod } from '../../client/api/types.js';
import { controlledBy, tolerationText, writeMeta } from './common.js';
import { describeTime, type DescribeWriter } from './writer.js';

function writeState(
  w: DescribeWriter,
  level: number,
  label: string,
  state: ContainerState | undefined,
): void {
  if (state?.running) {
    w.field(level, label, 'Running');
    w.field(level + 1, 'Started', describeTime(state.running.startedAt));
  } else if (state?.waiting) {
    w.field(level, label, 'Waiting');
    if (state.waiting.reason) w.field(level + 1, 'Reason', state.waiting.reason);
    if (state.waiting.message) w.field(level + 1, 'Message', state.waiting.message);
  } else if (state?.terminated) {
    const t = state.terminated;
    w.field(level, label, 'Terminated');
    if (t.reason) w.field(level + 1, 'Reason', t.reason);
    if (t.message) w.field(level + 1, 'Message', t.message);
    w.field(level + 1, 'Exit Code', t.exitCode ?? 0);
    if (t.signal) w.field(level + 1, 'Signal', t.signal);
    w.field(level + 1, 'Started', describeTime(t.startedAt));
    w.field(level + 1, 'Finished', describeTime(t.finishedAt));
  } else {
    w.field(level, label, 'Waiting');
  }
}

function writeContainers(
  w: DescribeWriter,
  label: string,
  containers: Container[],
  statuses: ContainerStatus[],
): void {
  if (!containers.length) return;
  w.line(0, `${label}:`);
  for (const c of containers) {
    const status = statuses.find((s) => s.name === c.name);
    w.line(1, `${c.name}:`);
    if (status?.containerID) w.field(2, 'Container ID', status.containerID);
    w.field(2, 'Image', c.image || '<none>');
    const ports = (c.ports ?? []).map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}`);
    w.field(2, 'Port', ports.join(', ') || '<none>');
    if (c.command?.length) w.list(2, 'Command', c.command);
    if (c.args?.length) w.list(2, 'Args', c.args);
    writeState(w, 2, 'State', status?.state);
    if (status?.lastState && Object.keys(status.lastState).length)
      writeState(w, 2, 'Last State', status.lastState);
    w.field(2, 'Ready', status?.ready ? 'True' : 'False');
    w.field(2, 'Restart Count', status?.restartCount ?? 0);
    const limits = c.resources?.limits ?? {};
    const requests = c.resources?.requests ?? {};
    if (Object.keys(limits).length) w.map(2, 'Limits', limits, ':  ');
    if (Object.keys(requests).length) w.map(2, 'Requests', requests, ':  ');
    const env = (c.env ?? []).map((e) => `${e.name}:  ${e.value ?? (e.valueFrom ? '(from a field)' : '')}`);
    if (env.length) {
      w.line(2, 'Environment:');
      for (const e of env) w.line(3, e);
    } else w.field(2, 'Environment', '<none>');
  }
}

export function describePod(w: DescribeWriter, pod: Pod): void {
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  writeMeta(w, pod, true);
  w.field(0, 'Priority', spec.priority ?? 0);
  if (spec.priorityClassName) w.field(0, 'Priority Class Name', spec.priorityClassName);
  w.field(
    0,
    'Node',
    spec.nodeName ? `${spec.nodeName}${status.hostIP ? `/${status.hostIP}` : ''}` : '<none>',
  );
  w.field(0, 'Start Time', status.startTime ? describeTime(status.startTime) : undefined);
  w.field(0, 'Status', pod.metadata?.deletionTimestamp ? 'Terminating' : (status.phase ?? 'Pending'));
  if (pod.metadata?.deletionTimestamp) {
    w.field(0, 'Termination Grace Period', `${pod.metadata.deletionGracePeriodSeconds ?? 0}s`);
  }
  if (status.reason) w.field(0, 'Reason', status.reason);
  if (status.message) w.field(0, 'Message', status.message);
  w.field(0, 'IP', status.podIP);
  w.field(0, 'Controlled By', controlledBy(pod));
  writeContainers(w, 'Init Containers', spec.initContainers ?? [], status.initContainerStatuses ?? []);
  writeContainers(w, 'Containers', spec.containers ?? [], status.containerStatuses ?? []);
  const conditions = status.conditions ?? [];
  if (conditions.length) {
    w.line(0, 'Conditions:');
    w.line(1, 'Type', 'Status');
    for (const c of conditions) w.line(1, c.type ?? '', c.status ?? '');
  }
  w.field(0, 'QoS Class', status.qosClass || podQOSClass(spec));
  w.map(0, 'Node-Selectors', spec.nodeSelector);
  w.list(0, 'Tolerations', (spec.tolerations ?? []).map(tolerationText));
}
