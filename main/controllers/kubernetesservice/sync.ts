/**
 * The apiserver's own Service, default/kubernetes, as every Kubernetes cluster has it
 * (pkg/controlplane/controller/kubernetesservice): the port the API is served on, labelled
 * component=apiserver, provider=kubernetes. Tools look for it (`kubectl cluster-info` lists
 * Services to find the control plane). Written as the apiserver, the one writer of Services.
 */
import { isAlreadyExists, isNotFound } from '../../../client/api/errors.js';
import type { Service } from '../../../client/api/types.js';
import type { Client } from '../../../client/client.js';
import { deepEqual } from '../../../client/util/objects.js';
import type { Logger } from '../../logging.js';

export const KUBERNETES_SERVICE = { namespace: 'default', name: 'kubernetes' } as const;

/** The Service for an API served on `port`. kubelab has no virtual IPs: no clusterIP. */
export function desiredKubernetesService(port: number): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      ...KUBERNETES_SERVICE,
      labels: { component: 'apiserver', provider: 'kubernetes' },
    },
    spec: {
      type: 'ClusterIP',
      ports: [{ name: 'https', protocol: 'TCP', port, targetPort: port }],
      sessionAffinity: 'None',
    },
  };
}

/** Creates the Service, or brings its ports and labels back to what is served. */
export async function syncKubernetesService(client: Client, port: number, logger: Logger): Promise<void> {
  const want = desiredKubernetesService(port);
  let current: Service | undefined;
  try {
    current = await client.get('Service', KUBERNETES_SERVICE.name, {
      namespace: KUBERNETES_SERVICE.namespace,
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (!current) {
    try {
      await client.create(want);
      logger.info({ port }, 'created the Service default/kubernetes for the API');
    } catch (err) {
      // Another control plane sharing the store made it first.
      if (!isAlreadyExists(err)) throw err;
    }
    return;
  }
  // Stored with its defaults filled in, which are the ones desired: compared as they are.
  if (
    deepEqual(current.spec?.ports, want.spec?.ports) &&
    deepEqual(current.metadata?.labels, want.metadata?.labels)
  )
    return;
  await client.update({
    ...current,
    metadata: { ...current.metadata, labels: want.metadata?.labels },
    spec: { ...current.spec, ports: want.spec?.ports },
  });
  logger.info({ port }, 'updated the Service default/kubernetes to the port the API is served on');
}
