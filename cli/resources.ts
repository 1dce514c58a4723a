/**
 * kubectl's ways of naming resources on the command line: `pods`, `po`, `pods,nodes`,
 * `pod web`, `pod/web node/lab-1`, `daemonsets.apps` — and the `kind.group/name` form objects
 * are printed as (`pod/web`, `daemonset.apps/exporter`).
 */
import { KINDS, resolveKind, type KindInfo } from '../client/api/kinds.js';
import type { KubeObject } from '../client/api/types.js';
import { CliError } from './errors.js';

export interface ResourceSelection {
  info: KindInfo;
  /** Empty: every object of the kind (subject to selectors). */
  names: string[];
}

export function kindOrFail(name: string): KindInfo {
  const info = resolveKind(name);
  if (!info) {
    throw new CliError(
      `the server doesn't have a resource type "${name}"; known types: ${KINDS.map((k) => k.plural).join(', ')}`,
    );
  }
  return info;
}

/** `TYPE[,TYPE...] [NAME...]` or `TYPE/NAME ...`. */
export function parseResourceArgs(args: string[]): ResourceSelection[] {
  if (!args.length) {
    throw new CliError(
      `you must specify the type of resource to get, e.g. \`labctl get pods\`; types: ${KINDS.map((k) => k.plural).join(', ')}`,
    );
  }
  if (args[0].includes('/')) {
    const byKind = new Map<KindInfo, string[]>();
    for (const arg of args) {
      const slash = arg.indexOf('/');
      if (slash <= 0 || slash === arg.length - 1) {
        throw new CliError(
          `there is no type/name in "${arg}": use TYPE/NAME for every argument, e.g. pod/web`,
        );
      }
      const info = kindOrFail(arg.slice(0, slash));
      byKind.set(info, [...(byKind.get(info) ?? []), arg.slice(slash + 1)]);
    }
    return [...byKind].map(([info, names]) => ({ info, names }));
  }
  const [types, ...names] = args;
  for (const n of names) {
    if (n.includes('/'))
      throw new CliError(`"${n}": there is no need to give a type/name when the type is given ("${types}")`);
  }
  const infos = [...new Set(types.split(',').filter(Boolean).map(kindOrFail))];
  return infos.map((info) => ({ info, names }));
}

/** `pod`, `daemonset.apps`, `nodemetrics.metrics.k8s.io`. */
export function qualifiedKind(info: KindInfo): string {
  return info.group ? `${info.singular}.${info.group}` : info.singular;
}

/** `pod/web`, `daemonset.apps/exporter`. */
export function objectRef(info: KindInfo, object: KubeObject | string): string {
  const name = typeof object === 'string' ? object : (object.metadata?.name ?? '');
  return `${qualifiedKind(info)}/${name}`;
}
