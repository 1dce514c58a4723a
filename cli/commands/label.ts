/**
 * `labctl label` and `labctl annotate`: add (key=value), change (--overwrite) or remove (key-)
 * labels or annotations of objects named, or matching -l, or --all. One merge patch per object.
 */
import type { Command } from 'commander';
import type { KindName, KubeObject } from '../../client/api/types.js';
import { isQualifiedName, isValidLabelValue } from '../../client/api/validation.js';
import { verb } from '../command.js';
import { CliError } from '../errors.js';
import { listAll, namespaceFor } from '../fetch.js';
import type { Io } from '../io.js';
import { objectRef, parseResourceArgs } from '../resources.js';
import type { Session } from '../session.js';

interface MetaOptions {
  overwrite?: boolean;
  selector?: string;
  all?: boolean;
  allNamespaces?: boolean;
}

type Field = 'labels' | 'annotations';

export interface MetaChanges {
  set: Record<string, string>;
  remove: string[];
}

/** Splits `key=value` and `key-` arguments from the resource arguments before them. */
export function splitChanges(args: string[], field: Field): { resources: string[]; changes: MetaChanges } {
  const changes: MetaChanges = { set: {}, remove: [] };
  const resources: string[] = [];
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq > 0) {
      const key = arg.slice(0, eq);
      const value = arg.slice(eq + 1);
      const problems = [...isQualifiedName(key), ...(field === 'labels' ? isValidLabelValue(value) : [])];
      if (problems.length)
        throw new CliError(
          `invalid ${field === 'labels' ? 'label' : 'annotation'} "${arg}": ${problems.join('; ')}`,
        );
      changes.set[key] = value;
    } else if (arg.endsWith('-') && resources.length) {
      changes.remove.push(arg.slice(0, -1));
    } else {
      resources.push(arg);
    }
  }
  if (!Object.keys(changes.set).length && !changes.remove.length) {
    throw new CliError(
      `at least one ${field === 'labels' ? 'label' : 'annotation'} update is required: key=value to set, key- to remove`,
    );
  }
  return { resources, changes };
}

/** The merge patch for one object, or undefined when it would change nothing; throws on a refused overwrite. */
export function metaPatch(
  object: KubeObject,
  field: Field,
  changes: MetaChanges,
  overwrite: boolean,
): object | undefined {
  const current = object.metadata?.[field] ?? {};
  const patch: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(changes.set)) {
    if (k in current && current[k] !== v && !overwrite) {
      throw new CliError(`'${k}' already has a value (${current[k]}), and --overwrite is false`);
    }
    if (current[k] !== v) patch[k] = v;
  }
  for (const k of changes.remove) if (k in current) patch[k] = null;
  return Object.keys(patch).length ? { metadata: { [field]: patch } } : undefined;
}

async function relabel(session: Session, opts: MetaOptions, args: string[], field: Field): Promise<void> {
  const io = session.io;
  const client = session.client();
  const { resources, changes } = splitChanges(args, field);
  const namespace = opts.allNamespaces ? '' : session.namespace;
  const done = field === 'labels' ? 'labeled' : 'annotated';
  for (const sel of parseResourceArgs(resources)) {
    let objects: KubeObject[];
    if (sel.names.length) {
      objects = await Promise.all(
        sel.names.map((n) =>
          client.get(sel.info.kind as KindName, n, { namespace: namespaceFor(sel.info, namespace) }),
        ),
      );
    } else if (opts.selector || opts.all) {
      objects = (await listAll(client, sel.info, namespace, { labelSelector: opts.selector })).items;
    } else {
      throw new CliError(`give the ${sel.info.plural} by name, or -l <selector>, or --all`);
    }
    for (const o of objects) {
      const patch = metaPatch(o, field, changes, Boolean(opts.overwrite));
      if (patch) {
        await client.patch(sel.info.kind as KindName, o.metadata?.name ?? '', patch, {
          namespace: o.metadata?.namespace,
        });
      }
      io.out(`${objectRef(sel.info, o)} ${patch ? '' : 'not '}${done}\n`);
    }
  }
}

export function labelCommands(program: Command, io: Io): void {
  for (const field of ['labels', 'annotations'] as const) {
    const name = field === 'labels' ? 'label' : 'annotate';
    program
      .command(name)
      .description(`update the ${field} of objects: key=value sets, key- removes`)
      .argument(
        '<args...>',
        `TYPE NAME... or TYPE/NAME, then key=value and key- ${field === 'labels' ? 'labels' : 'annotations'}`,
      )
      .option('--overwrite', 'allow replacing a value that is already set')
      .option('-l, --selector <selector>', 'the objects matching this label selector')
      .option('--all', 'every object of the type in the namespace')
      .option('-A, --all-namespaces', 'with -l or --all, across all namespaces')
      .addHelpText(
        'after',
        `\nExamples:\n  labctl ${name} nodes lab-1 disk=ssd\n  labctl ${name} pod web tier- \n  labctl ${name} --overwrite ds/exporter team=ops`,
      )
      .action(verb<[string[]], MetaOptions>(io, (s, o, args) => relabel(s, o, args, field)));
  }
}
