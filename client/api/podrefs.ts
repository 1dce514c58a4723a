/**
 * The ConfigMaps and Secrets a pod uses (Kubernetes' VisitPodSecretNames / VisitPodConfigmapNames):
 * in env (valueFrom), envFrom, volumes (configMap, secret, projected sources) and
 * imagePullSecrets. The node authorizer lets a node read exactly these for the pods bound to
 * it; the agent fetches them.
 */
import type { Pod } from './types.js';

export interface PodReferences {
  configMaps: Set<string>;
  secrets: Set<string>;
}

type Loose = Record<string, any>;

export function podReferences(pod: Pod): PodReferences {
  const refs: PodReferences = { configMaps: new Set(), secrets: new Set() };
  const spec = (pod.spec ?? {}) as Loose;
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])] as Loose[]) {
    for (const e of (c.env ?? []) as Loose[]) {
      if (e.valueFrom?.configMapKeyRef?.name) refs.configMaps.add(e.valueFrom.configMapKeyRef.name);
      if (e.valueFrom?.secretKeyRef?.name) refs.secrets.add(e.valueFrom.secretKeyRef.name);
    }
    for (const f of (c.envFrom ?? []) as Loose[]) {
      if (f.configMapRef?.name) refs.configMaps.add(f.configMapRef.name);
      if (f.secretRef?.name) refs.secrets.add(f.secretRef.name);
    }
  }
  for (const v of (spec.volumes ?? []) as Loose[]) {
    if (v.configMap?.name) refs.configMaps.add(v.configMap.name);
    if (v.secret?.secretName) refs.secrets.add(v.secret.secretName);
    for (const s of (v.projected?.sources ?? []) as Loose[]) {
      if (s.configMap?.name) refs.configMaps.add(s.configMap.name);
      if (s.secret?.name) refs.secrets.add(s.secret.name);
    }
  }
  for (const s of (spec.imagePullSecrets ?? []) as Loose[]) if (s.name) refs.secrets.add(s.name);
  return refs;
}
