/**
 * Environment from ConfigMaps and Secrets (the kubelet's makeEnvironmentVariables): env
 * entries with configMapKeyRef / secretKeyRef, and envFrom (every key, with a prefix; keys that
 * are not valid variable names are skipped and reported). Each object is read through the API
 * with the node's credential (the node authorizer allows exactly those of pods bound here). A
 * missing object or key holds the container with CreateContainerConfigError, unless optional.
 * Values are never logged; errors name objects and keys only.
 */
import { isNotFound } from '../../client/api/errors.js';
import type { ConfigMap, Container, Pod, Secret } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';

export type ConfigEnv = { env: Record<string, string>; skipped: string[] } | { error: string };

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

type Source =
  | { kind: 'ConfigMap'; values?: Record<string, string> }
  | { kind: 'Secret'; values?: Record<string, string> };

/** The text values of a ConfigMap (data and binaryData) or a Secret (data, base64-decoded). */
function valuesOf(kind: 'ConfigMap' | 'Secret', obj: ConfigMap | Secret): Record<string, string> {
  if (kind === 'Secret') {
    return Object.fromEntries(
      Object.entries((obj as Secret).data ?? {}).map(([k, v]) => [
        k,
        Buffer.from(v, 'base64').toString('utf8'),
      ]),
    );
  }
  const cm = obj as ConfigMap;
  return {
    ...Object.fromEntries(
      Object.entries(cm.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    ),
    ...cm.data,
  };
}

export async function resolveConfigEnv(client: Client, pod: Pod, container: Container): Promise<ConfigEnv> {
  const namespace = pod.metadata?.namespace;
  const fetched = new Map<string, Source>();
  const read = async (kind: 'ConfigMap' | 'Secret', name: string): Promise<Source> => {
    const key = `${kind}/${name}`;
    const known = fetched.get(key);
    if (known) return known;
    let source: Source;
    try {
      source = { kind, values: valuesOf(kind, await client.get(kind, name, { namespace })) };
    } catch (err) {
      if (!isNotFound(err)) throw err;
      source = { kind };
    }
    fetched.set(key, source);
    return source;
  };
  const env: Record<string, string> = {};
  const skipped: string[] = [];
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
    if (!ref?.name) continue;
    const source = await read(kind, ref.name);
    if (!source.values) {
      if (ref.optional) continue;
      return { error: `${kind === 'ConfigMap' ? 'configmap' : 'secret'} "${ref.name}" not found` };
    }
    for (const [k, v] of Object.entries(source.values)) {
      const name = `${from.prefix ?? ''}${k}`;
      if (ENV_NAME.test(name)) env[name] = v;
      else skipped.push(name);
    }
  }
  for (const e of container.env ?? []) {
    const ref = e.valueFrom?.configMapKeyRef ?? e.valueFrom?.secretKeyRef;
    if (!e.name || !ref?.name || !ref.key) continue;
    const kind = e.valueFrom?.configMapKeyRef ? 'ConfigMap' : 'Secret';
    const source = await read(kind, ref.name);
    const value = source.values?.[ref.key];
    if (value !== undefined) env[e.name] = value;
    else if (!ref.optional) {
      return {
        error: source.values
          ? `couldn't find key ${ref.key} in ${kind} ${namespace}/${ref.name}`
          : `${kind === 'ConfigMap' ? 'configmap' : 'secret'} "${ref.name}" not found`,
      };
    }
  }
  return { env, skipped };
}

/** Whether the container takes anything from a ConfigMap or Secret. */
export function usesConfigEnv(container: Container): boolean {
  return (
    !!container.envFrom?.length ||
    !!container.env?.some((e) => e.valueFrom?.configMapKeyRef || e.valueFrom?.secretKeyRef)
  );
}
