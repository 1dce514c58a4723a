/**
 * The pod a controller makes from its template (controller.GetPodFromTemplate): the template's
 * labels, annotations, finalizers and spec, a name generated from the owner's, and the owner's
 * controller reference.
 */
import type { KindName, ObjectLike, Pod, PodTemplateSpec } from '../../../client/api/types.js';
import { clone } from '../../../client/util/objects.js';
import { ownerRefFor } from './claim.js';

export function podFromTemplate(
  template: PodTemplateSpec | undefined,
  owner: ObjectLike,
  kind: KindName,
): Pod {
  const meta = template?.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${owner.metadata!.name}-`,
      namespace: owner.metadata!.namespace,
      labels: { ...(meta?.labels ?? {}) },
      ...(meta?.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(meta?.finalizers?.length ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [ownerRefFor(owner, kind)],
    },
    spec: clone(template?.spec ?? {}),
  };
}
