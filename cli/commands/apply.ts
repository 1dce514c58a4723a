/**
 * `labctl apply -f`: creates what does not exist and brings what does to the manifest with a
 * three-way merge patch against the last applied manifest (kept, as kubectl keeps it, in the
 * kubectl.kubernetes.io/last-applied-configuration annotation). Prints created, configured or
 * unchanged per object; applying the same manifests twice changes nothing.
 */
import type { Command } from 'commander';
import { isNotFound } from '../../client/api/errors.js';
import type { KindName, KubeObject } from '../../client/api/types.js';
import { clone } from '../../client/util/objects.js';
import { threeWayMergePatch } from '../apply/threeway.js';
import { verb } from '../command.js';
import { AlreadyReported, formatError } from '../errors.js';
import type { Io } from '../io.js';
import { manifestNamespace, readManifests, type Manifest } from '../manifests.js';
import { objectRef } from '../resources.js';
import type { Session } from '../session.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

interface ApplyOptions {
  filename: string[];
  recursive?: boolean;
  dryRun?: boolean;
}

type Json = Record<string, unknown>;

/** The manifest as it is recorded: without its own record, in a stable JSON text. */
function lastAppliedOf(object: KubeObject): string {
  const copy = clone(object);
  const annotations = copy.metadata?.annotations;
  if (annotations) {
    delete annotations[LAST_APPLIED_ANNOTATION];
    if (!Object.keys(annotations).length) delete copy.metadata!.annotations;
  }
  return JSON.stringify(copy);
}

function withLastApplied(object: KubeObject, namespace: string): KubeObject {
  const copy = clone(object);
  const meta = (copy.metadata ??= {});
  if (namespace) meta.namespace = namespace;
  meta.annotations = { ...meta.annotations, [LAST_APPLIED_ANNOTATION]: lastAppliedOf(object) };
  return copy;
}

function parseLastApplied(live: KubeObject): Json | undefined {
  const text = live.metadata?.annotations?.[LAST_APPLIED_ANNOTATION];
  if (!text) return undefined;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

export type ApplyOutcome = 'created' | 'configured' | 'unchanged';

export async function applyOne(session: Session, m: Manifest, dryRun: boolean): Promise<ApplyOutcome> {
  const client = session.client();
  const namespace = manifestNamespace(m, session.namespace, session.explicitNamespace);
  const name = m.object.metadata?.name;
  if (!name) throw new Error(`${m.source}: a ${m.info.kind} to apply needs metadata.name`);
  const desired = withLastApplied(m.object, namespace);
  let live: KubeObject;
  try {
    live = await client.get(m.info.kind as KindName, name, { namespace });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await client.create(desired, { namespace, dryRun });
    return 'created';
  }
  const patch = threeWayMergePatch(parseLastApplied(live), desired as Json, live as Json);
  if (!Object.keys(patch).length) return 'unchanged';
  const updated = await client.patch(m.info.kind as KindName, name, patch, { namespace, dryRun });
  // The server writes nothing when the patched object equals the stored one (its defaults
  // filled in): the same resourceVersion comes back.
  return updated.metadata?.resourceVersion === live.metadata?.resourceVersion ? 'unchanged' : 'configured';
}

async function apply(session: Session, opts: ApplyOptions): Promise<void> {
  const io = session.io;
  const manifests = await readManifests(io, opts.filename, opts.recursive);
  let failed = false;
  for (const m of manifests) {
    try {
      const outcome = await applyOne(session, m, Boolean(opts.dryRun));
      io.out(`${objectRef(m.info, m.object)} ${outcome}${opts.dryRun ? ' (dry run)' : ''}\n`);
    } catch (err) {
      // Like kubectl: report and go on with the other objects; the exit code says it failed.
      io.err(`${formatError(err)}\n`);
      failed = true;
    }
  }
  if (failed) throw new AlreadyReported();
}

export function filenameOption(cmd: Command, what: string): Command {
  return cmd
    .option(
      '-f, --filename <path>',
      `${what}: a file, a folder, or - for stdin (repeatable)`,
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option('-R, --recursive', 'also read the folders inside folders given with -f');
}

export function applyCommand(program: Command, io: Io): void {
  filenameOption(program.command('apply'), 'the manifests to apply')
    .description('create or update objects from YAML or JSON manifests (created / configured / unchanged)')
    .option('--dry-run', 'show what would happen; change nothing')
    .addHelpText(
      'after',
      '\nExamples:\n  labctl apply -f exporter.yaml\n  labctl apply -f manifests/\n  cat pod.yaml | labctl apply -f -',
    )
    .action(verb<[], ApplyOptions>(io, (s, o) => apply(s, { ...o, filename: o.filename ?? [] })));
}
