/**
 * The downward API for environment variables (the kubelet's podFieldSelectorRuntimeValue): a
 * container's env may take the pod's own fields — metadata.name, metadata.namespace,
 * metadata.uid, metadata.labels['KEY'], metadata.annotations['KEY'], spec.nodeName,
 * spec.serviceAccountName, status.hostIP(s), status.podIP(s).
 */
import type { Pod } from '../../client/api/types.js';

const SUBSCRIPT = /^metadata\.(labels|annotations)\['(.+)'\]$/;

/** The value of a fieldRef's fieldPath for this pod ('' for a known field that is unset). */
export function podFieldValue(pod: Pod, fieldPath: string): string {
  const sub = SUBSCRIPT.exec(fieldPath);
  if (sub) {
    const map = sub[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations;
    return map?.[sub[2]] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata?.name ?? '';
    case 'metadata.namespace':
      return pod.metadata?.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata?.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return pod.status?.hostIP ?? '';
    case 'status.hostIPs':
      return (pod.status?.hostIPs ?? []).map((i) => i.ip).join(',');
    case 'status.podIP':
      return pod.status?.podIP ?? '';
    case 'status.podIPs':
      return (pod.status?.podIPs ?? []).map((i) => i.ip).join(',');
    default:
      return '';
  }
}
