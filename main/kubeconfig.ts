/**
 * The kubeconfig document kubectl, Helm, k9s and client libraries read: one cluster (the API
 * address and the cluster's CA), one user (a bearer token), one context joining them. Made by
 * `kubelab kubeconfig` and by the GUI's "Copy kubeconfig"; merged into an existing file by the
 * former.
 */

interface Named<T> {
  name: string;
  [key: string]: T | string;
}

export interface Kubeconfig {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: Array<Named<unknown>>;
  users: Array<Named<unknown>>;
  contexts: Array<Named<unknown>>;
  'current-context'?: string;
  preferences?: Record<string, unknown>;
  [key: string]: unknown;
}

export function kubeconfigFor(options: {
  server: string;
  caPem?: string;
  token: string;
  context: string;
  user: string;
}): Kubeconfig {
  const cluster: Record<string, unknown> = { server: options.server };
  if (options.caPem) cluster['certificate-authority-data'] = Buffer.from(options.caPem).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: options.context, cluster }],
    users: [{ name: options.user, user: { token: options.token } }],
    contexts: [{ name: options.context, context: { cluster: options.context, user: options.user } }],
    'current-context': options.context,
    preferences: {},
  };
}

/** Adds `add`'s cluster, user and context to `into`, replacing entries of the same names. */
export function mergeKubeconfig(into: Partial<Kubeconfig> | null, add: Kubeconfig): Kubeconfig {
  const base: Kubeconfig = {
    ...(into ?? {}),
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [...(into?.clusters ?? [])],
    users: [...(into?.users ?? [])],
    contexts: [...(into?.contexts ?? [])],
  };
  for (const key of ['clusters', 'users', 'contexts'] as const) {
    for (const entry of add[key]) {
      const at = base[key].findIndex((e) => e.name === entry.name);
      if (at >= 0) base[key][at] = entry;
      else base[key].push(entry);
    }
  }
  // Someone else's current context stays theirs; an empty file gets this one.
  base['current-context'] = into?.['current-context'] || add['current-context'];
  return base;
}
