/** The metadata lines every describe starts with, and kubectl's "Controlled By". */
import type { KubeObject, OwnerReference, Taint, Toleration } from '../../client/api/types.js';
import { describeTime, type DescribeWriter } from './writer.js';

export function writeMeta(w: DescribeWriter, object: KubeObject, namespaced: boolean): void {
  const meta = object.metadata ?? {};
  w.field(0, 'Name', meta.name);
  if (namespaced) w.field(0, 'Namespace', meta.namespace);
  w.map(0, 'Labels', meta.labels);
  w.map(0, 'Annotations', meta.annotations, ': ');
  w.field(0, 'CreationTimestamp', describeTime(meta.creationTimestamp));
  if (meta.deletionTimestamp) w.field(0, 'DeletionTimestamp', describeTime(meta.deletionTimestamp));
}

/** "DaemonSet/exporter" of the controlling owner. */
export function controlledBy(object: KubeObject): string | undefined {
  const owner: OwnerReference | undefined = object.metadata?.ownerReferences?.find((r) => r.controller);
  return owner ? `${owner.kind}/${owner.name}` : undefined;
}

/** key=value:Effect, as kubectl prints taints. */
export function taintText(t: Taint): string {
  return `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;
}

/** kubectl's toleration text: "key=value:Effect op=Exists for 300s". */
export function tolerationText(t: Toleration): string {
  let s = t.key ?? '';
  if (t.value) s += `=${t.value}`;
  if (t.effect) s += `:${t.effect}`;
  if (t.operator === 'Exists') s += ' op=Exists';
  if (t.tolerationSeconds !== undefined) s += ` for ${t.tolerationSeconds}s`;
  return s;
}
