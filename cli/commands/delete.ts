/**
 * `labctl delete`: by name, by -f manifests, by -l or --all; gracefully (the pod's grace period,
 * or --grace-period / --now / --force), with --cascade background|foreground|orphan; then waits
 * until the objects are gone (--wait=false not to), saying what it still waits for.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { isNotFound } from '../../client/api/errors.js';
import type { KindName } from '../../client/api/types.js';
import { verb } from '../command.js';
import { parseDurationMs, parseGracePeriod } from '../duration.js';
import { AlreadyReported, CliError, formatError } from '../errors.js';
import { listAll, namespaceFor } from '../fetch.js';
import type { Io } from '../io.js';
import { manifestNamespace, readManifests } from '../manifests.js';
import { parseResourceArgs, qualifiedKind } from '../resources.js';
import type { Session } from '../session.js';
import { waitForDeletion, whyStillThere, type Doomed } from '../wait.js';
import { filenameOption } from './apply.js';

const CASCADE = {
  background: 'Background',
  foreground: 'Foreground',
  orphan: 'Orphan',
  true: 'Background',
  false: 'Orphan',
} as const;
type Cascade = (typeof CASCADE)[keyof typeof CASCADE];

function cascadeArg(v: string): Cascade {
  const policy = CASCADE[v.toLowerCase() as keyof typeof CASCADE];
  if (!policy)
    throw new InvalidArgumentError(`"${v}" is not a cascade: use background, foreground or orphan`);
  return policy;
}

export function boolArg(v: string | undefined): boolean {
  if (v === undefined || v === 'true') return true;
  if (v === 'false') return false;
  throw new InvalidArgumentError(`"${v}" is not true or false`);
}

interface DeleteOptions {
  filename?: string[];
  recursive?: boolean;
  selector?: string;
  all?: boolean;
  allNamespaces?: boolean;
  cascade: Cascade;
  gracePeriod: number;
  now?: boolean;
  force?: boolean;
  wait: boolean;
  timeout: number;
  ignoreNotFound?: boolean;
}

async function targets(session: Session, opts: DeleteOptions, args: string[]): Promise<Doomed[]> {
  if (opts.filename?.length) {
    if (args.length) throw new CliError('give either -f or resource names, not both');
    const manifests = await readManifests(session.io, opts.filename, opts.recursive);
    return manifests.map((m) => ({
      info: m.info,
      name: m.object.metadata?.name ?? '',
      namespace: manifestNamespace(m, session.namespace, session.explicitNamespace),
    }));
  }
  const selections = parseResourceArgs(args);
  const namespace = opts.allNamespaces ? '' : session.namespace;
  const out: Doomed[] = [];
  for (const sel of selections) {
    if (sel.names.length) {
      if (opts.selector || opts.all) throw new CliError('names cannot be given together with -l or --all');
      out.push(
        ...sel.names.map((name) => ({ info: sel.info, name, namespace: namespaceFor(sel.info, namespace) })),
      );
      continue;
    }
    if (!opts.selector && !opts.all) {
      throw new CliError(
        `resource(s) were provided, but no name was specified: give names, -l <selector> or --all (e.g. labctl delete ${sel.info.plural} --all)`,
      );
    }
    const { items } = await listAll(session.client(), sel.info, namespace, { labelSelector: opts.selector });
    out.push(
      ...items.map((o) => ({
        info: sel.info,
        name: o.metadata?.name ?? '',
        namespace: o.metadata?.namespace ?? '',
      })),
    );
  }
  return out;
}

function gracePeriod(opts: DeleteOptions): number | undefined {
  if (opts.force) return 0;
  if (opts.now) return 1;
  return opts.gracePeriod >= 0 ? opts.gracePeriod : undefined;
}

async function del(session: Session, opts: DeleteOptions, args: string[]): Promise<void> {
  const io = session.io;
  const client = session.client();
  const doomed = await targets(session, opts, args);
  if (!doomed.length) {
    io.err('No resources found\n');
    return;
  }
  if (opts.force)
    io.err(
      'Warning: immediate deletion does not wait for confirmation that the running process has been terminated; it may keep running on its node.\n',
    );
  const deleted: Doomed[] = [];
  let failed = false;
  for (const d of doomed) {
    try {
      const { object } = await client.delete(d.info.kind as KindName, d.name, {
        namespace: d.namespace,
        propagationPolicy: opts.cascade,
        gracePeriodSeconds: gracePeriod(opts),
      });
      io.out(`${qualifiedKind(d.info)} "${d.name}" deleted\n`);
      deleted.push({ ...d, uid: object.metadata?.uid });
    } catch (err) {
      if (isNotFound(err) && opts.ignoreNotFound) continue;
      io.err(`${formatError(err)}\n`);
      failed = true;
    }
  }
  if (opts.wait && deleted.length) {
    await waitForDeletion(client, deleted, {
      clock: io.clock,
      timeoutMs: opts.timeout,
      onWaiting: (left) =>
        io.err(
          `waiting for ${left.map((l) => `${qualifiedKind(l.d.info)}/${l.d.name} (${whyStillThere(l.object)})`).join(', ')}\n`,
        ),
    });
  }
  if (failed) throw new AlreadyReported();
}

export function deleteCommand(program: Command, io: Io): void {
  filenameOption(program.command('delete'), 'manifests of the objects to delete')
    .description('delete objects by name, by manifest, or by label selector, and wait until they are gone')
    .argument('[resources...]', 'TYPE NAME... or TYPE/NAME ...')
    .option('-l, --selector <selector>', 'delete the objects matching this label selector')
    .option('--all', 'delete every object of the type in the namespace')
    .option('-A, --all-namespaces', 'with -l or --all, across all namespaces')
    .option(
      '--cascade <policy>',
      'background, foreground (dependents first) or orphan (keep them)',
      cascadeArg,
      'Background' as Cascade,
    )
    .option('--grace-period <seconds>', 'seconds a pod gets to stop; -1 uses its own', parseGracePeriod, -1)
    .option('--now', 'a grace period of 1 second')
    .option('--force', 'delete at once without waiting for the pod to stop (grace period 0)')
    .option('--wait [bool]', 'wait until the objects are gone (--wait=false not to)', boolArg, true)
    .option(
      '--timeout <duration>',
      'give up waiting after this long (0: no limit)',
      parseDurationMs,
      5 * 60_000,
    )
    .option('--ignore-not-found', 'an object that does not exist is not an error')
    .addHelpText(
      'after',
      '\nExamples:\n  labctl delete pod web\n  labctl delete -f exporter.yaml\n  labctl delete pods -l app=web\n  labctl delete ds exporter --cascade=orphan',
    )
    .action(verb<[string[]], DeleteOptions>(io, (s, o, args) => del(s, o, args)));
}
