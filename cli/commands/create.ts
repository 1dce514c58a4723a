/**
 * `labctl create -f` (objects from manifests; existing ones are errors), `labctl create
 * namespace NAME`, and `labctl create job NAME --from=cronjob/CRONJOB` (run a CronJob now, as
 * kubectl does: its job template, owned by it, annotated cronjob.kubernetes.io/instantiate=manual).
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { kindInfo } from '../../client/api/kinds.js';
import type { Job } from '../../client/api/types.js';
import { verb } from '../command.js';
import { AlreadyReported, CliError, formatError } from '../errors.js';
import type { Io } from '../io.js';
import { manifestNamespace, readManifests } from '../manifests.js';
import { kindOrFail, objectRef } from '../resources.js';
import type { Session } from '../session.js';
import { filenameOption } from './apply.js';

interface CreateOptions {
  filename?: string[];
  recursive?: boolean;
  dryRun?: boolean;
}

async function create(session: Session, opts: CreateOptions): Promise<void> {
  const io = session.io;
  const client = session.client();
  let failed = false;
  for (const m of await readManifests(io, opts.filename ?? [], opts.recursive)) {
    try {
      const namespace = manifestNamespace(m, session.namespace, session.explicitNamespace);
      const created = await client.create(
        { ...m.object, metadata: { ...m.object.metadata, ...(namespace ? { namespace } : {}) } },
        { namespace, dryRun: opts.dryRun },
      );
      io.out(`${objectRef(m.info, created)} created${opts.dryRun ? ' (dry run)' : ''}\n`);
    } catch (err) {
      io.err(`${formatError(err)}\n`);
      failed = true;
    }
  }
  if (failed) throw new AlreadyReported();
}

async function createNamespace(session: Session, opts: CreateOptions, name: string): Promise<void> {
  const info = kindInfo('Namespace');
  const created = await session
    .client()
    .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { dryRun: opts.dryRun });
  session.io.out(`${objectRef(info, created)} created${opts.dryRun ? ' (dry run)' : ''}\n`);
}

async function createJobFrom(
  session: Session,
  opts: CreateOptions & { from?: string },
  name: string,
): Promise<void> {
  const [type, source] = (opts.from ?? '').split('/');
  if (!source || kindOrFail(type).kind !== 'CronJob')
    throw new CliError('give the CronJob to run: --from=cronjob/NAME');
  const client = session.client();
  const cj = await client.get('CronJob', source, { namespace: session.namespace });
  const template = cj.spec?.jobTemplate ?? {};
  const created = await client.create<Job>(
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name,
        namespace: session.namespace,
        labels: { ...template.metadata?.labels },
        annotations: { ...template.metadata?.annotations, 'cronjob.kubernetes.io/instantiate': 'manual' },
        ownerReferences: [
          { apiVersion: 'batch/v1', kind: 'CronJob', name: source, uid: cj.metadata?.uid, controller: true },
        ],
      },
      spec: template.spec ?? {},
    },
    { dryRun: opts.dryRun },
  );
  session.io.out(`${objectRef(kindInfo('Job'), created)} created${opts.dryRun ? ' (dry run)' : ''}\n`);
}

interface FromOptions extends CreateOptions {
  fromLiteral: string[];
  fromFile: string[];
  type?: string;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * The keys of `create configmap|secret`: --from-literal=KEY=VALUE, --from-file=[KEY=]PATH (the
 * file's base name is the key), as kubectl reads them; a key given twice is an error.
 */
async function keysFrom(opts: FromOptions): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const put = (key: string, value: Buffer) => {
    if (out.has(key)) throw new CliError(`cannot add key "${key}", another key by that name already exists`);
    out.set(key, value);
  };
  for (const literal of opts.fromLiteral) {
    const eq = literal.indexOf('=');
    if (eq <= 0) throw new CliError(`invalid literal source ${literal}, expected key=value`);
    put(literal.slice(0, eq), Buffer.from(literal.slice(eq + 1), 'utf8'));
  }
  for (const spec of opts.fromFile) {
    const eq = spec.indexOf('=');
    const [key, file] = eq > 0 ? [spec.slice(0, eq), spec.slice(eq + 1)] : [basename(spec), spec];
    try {
      put(key, await readFile(file));
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
    }
  }
  return out;
}

async function createConfigMap(session: Session, opts: FromOptions, name: string): Promise<void> {
  const data: Record<string, string> = {};
  const binaryData: Record<string, string> = {};
  for (const [k, v] of await keysFrom(opts)) {
    const text = v.toString('utf8');
    // Text that survives a round trip as UTF-8 goes in data; anything else in binaryData.
    if (Buffer.from(text, 'utf8').equals(v)) data[k] = text;
    else binaryData[k] = v.toString('base64');
  }
  const created = await session.client().create(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: session.namespace },
      data,
      ...(Object.keys(binaryData).length ? { binaryData } : {}),
    },
    { dryRun: opts.dryRun },
  );
  session.io.out(`${objectRef(kindInfo('ConfigMap'), created)} created${opts.dryRun ? ' (dry run)' : ''}\n`);
}

async function createSecret(session: Session, opts: FromOptions, name: string): Promise<void> {
  const data: Record<string, string> = {};
  for (const [k, v] of await keysFrom(opts)) data[k] = v.toString('base64');
  const created = await session.client().create(
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: session.namespace },
      type: opts.type ?? 'Opaque',
      data,
    },
    { dryRun: opts.dryRun },
  );
  session.io.out(`${objectRef(kindInfo('Secret'), created)} created${opts.dryRun ? ' (dry run)' : ''}\n`);
}

export function createCommand(program: Command, io: Io): void {
  const create_ = filenameOption(program.command('create'), 'the manifests to create')
    .description('create objects from manifests (an object that exists is an error; see apply)')
    .option('--dry-run', 'show what would happen; change nothing')
    .addHelpText(
      'after',
      '\nExamples:\n  labctl create -f pod.yaml\n  labctl create namespace lab\n  labctl create job backup-now --from=cronjob/nightly-backup',
    )
    .action(verb<[], CreateOptions>(io, (s, o) => create(s, o)));
  create_
    .command('namespace')
    .alias('ns')
    .description('create a namespace')
    .argument('<name>', 'the namespace')
    .option('--dry-run', 'show what would happen; change nothing')
    .action(verb<[string], CreateOptions>(io, (s, o, name) => createNamespace(s, o, name)));
  create_
    .command('configmap')
    .alias('cm')
    .description('create a ConfigMap from literals and files')
    .argument('<name>', 'the ConfigMap')
    .option('--from-literal <key=value>', 'a key and its value (repeat for more)', collect, [])
    .option(
      '--from-file <[key=]path>',
      "a file's contents, keyed by its name or the key given (repeat for more)",
      collect,
      [],
    )
    .option('--dry-run', 'show what would happen; change nothing')
    .action(verb<[string], FromOptions>(io, (s, o, name) => createConfigMap(s, o, name)));
  create_
    .command('secret')
    .description('create a Secret: labctl create secret generic NAME --from-literal=… --from-file=…')
    .argument('<type>', 'generic')
    .argument('<name>', 'the Secret')
    .option('--from-literal <key=value>', 'a key and its value (repeat for more)', collect, [])
    .option(
      '--from-file <[key=]path>',
      "a file's contents, keyed by its name or the key given (repeat for more)",
      collect,
      [],
    )
    .option('--type <type>', 'the Secret type (default Opaque)')
    .option('--dry-run', 'show what would happen; change nothing')
    .action(
      verb<[string, string], FromOptions>(io, (s, o, kind, name) => {
        if (kind !== 'generic')
          throw new CliError(
            `labctl creates generic Secrets: labctl create secret generic ${name} --from-literal=KEY=VALUE`,
          );
        return createSecret(s, o, name);
      }),
    );
  create_
    .command('job')
    .description("run a CronJob's job now: a Job from its template")
    .argument('<name>', 'the Job')
    .requiredOption('--from <cronjob>', 'the CronJob to run, as cronjob/NAME')
    .option('--dry-run', 'show what would happen; change nothing')
    .action(verb<[string], CreateOptions & { from?: string }>(io, (s, o, name) => createJobFrom(s, o, name)));
}
