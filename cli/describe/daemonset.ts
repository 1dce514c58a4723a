/** `describe daemonset` (kubectl's DescribeDaemonSet) and the pod template block it shares with `rollout history`. */
import type { DaemonSet, Pod, PodTemplateSpec } from '../../client/api/types.js';
import { mapText, selectorText } from '../../client/print/columns/daemonset.js';
import { tolerationText, writeMeta } from './common.js';
import type { DescribeWriter } from './writer.js';

export function writePodTemplate(
  w: DescribeWriter,
  level: number,
  template: PodTemplateSpec | undefined,
): void {
  const spec = template?.spec ?? {};
  w.map(level, 'Labels', template?.metadata?.labels);
  if (Object.keys(template?.metadata?.annotations ?? {}).length)
    w.map(level, 'Annotations', template?.metadata?.annotations, ': ');
  for (const [label, containers] of [
    ['Init Containers', spec.initContainers ?? []],
    ['Containers', spec.containers ?? []],
  ] as const) {
    if (!containers.length && label === 'Init Containers') continue;
    w.line(level, `${label}:`);
    for (const c of containers) {
      w.line(level, ` ${c.name}:`);
      w.field(level + 1, 'Image', c.image || '<none>');
      if (c.command?.length) w.list(level + 1, 'Command', c.command);
      if (c.args?.length) w.list(level + 1, 'Args', c.args);
      const env = (c.env ?? []).map((e) => `${e.name}:  ${e.value ?? ''}`);
      if (env.length) {
        w.line(level + 1, 'Environment:');
        for (const e of env) w.line(level + 2, e);
      } else w.field(level + 1, 'Environment', '<none>');
    }
  }
  w.field(level, 'Node-Selectors', mapText(spec.nodeSelector) || '<none>');
  w.list(level, 'Tolerations', (spec.tolerations ?? []).map(tolerationText));
}

export function describeDaemonSet(w: DescribeWriter, ds: DaemonSet, pods: Pod[]): void {
  const s = ds.status ?? {};
  writeMeta(w, ds, true);
  w.field(0, 'Selector', selectorText(ds.spec?.selector));
  w.field(0, 'Node-Selector', mapText(ds.spec?.template?.spec?.nodeSelector) || '<none>');
  w.field(0, 'Update Strategy', ds.spec?.updateStrategy?.type ?? 'RollingUpdate');
  w.field(0, 'Desired Number of Nodes Scheduled', s.desiredNumberScheduled ?? 0);
  w.field(0, 'Current Number of Nodes Scheduled', s.currentNumberScheduled ?? 0);
  w.field(0, 'Number of Nodes Scheduled with Up-to-date Pods', s.updatedNumberScheduled ?? 0);
  w.field(0, 'Number of Nodes Scheduled with Available Pods', s.numberAvailable ?? 0);
  w.field(0, 'Number of Nodes Misscheduled', s.numberMisscheduled ?? 0);
  const phase = (p: string) => pods.filter((pod) => (pod.status?.phase ?? 'Pending') === p).length;
  w.field(
    0,
    'Pods Status',
    `${phase('Running')} Running / ${phase('Pending')} Waiting / ${phase('Succeeded')} Succeeded / ${phase('Failed')} Failed`,
  );
  w.line(0, 'Pod Template:');
  writePodTemplate(w, 1, ds.spec?.template);
}
