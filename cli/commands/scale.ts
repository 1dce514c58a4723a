/**
 * `labctl scale deployment/NAME --replicas=N` (and replicasets), as kubectl scale: sets
 * spec.replicas; with --current-replicas, only if the size is still that (a precondition, so a
 * scale decided on stale numbers does not land).
 */
import type { Command } from 'commander';
import { isConflict } from '../../client/api/errors.js';
import type { Deployment, ReplicaSet } from '../../client/api/types.js';
import { verb } from '../command.js';
import { parseCount } from '../duration.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { kindOrFail } from '../resources.js';
import type { Session } from '../session.js';

const SCALABLE = new Set(['Deployment', 'ReplicaSet']);

interface ScaleOptions {
  replicas?: number;
  currentReplicas?: number;
}

async function scale(session: Session, opts: ScaleOptions, args: string[]): Promise<void> {
  if (opts.replicas === undefined) throw new CliError('give the new size: --replicas=COUNT');
  const [first, ...rest] = args;
  const targets = first?.includes('/') ? args : rest.map((n) => `${first}/${n}`);
  if (!targets.length) throw new CliError('give what to scale: deployment/NAME or deployment NAME');
  const client = session.client();
  for (const t of targets) {
    const [type, name] = t.split('/');
    const info = kindOrFail(type);
    if (!SCALABLE.has(info.kind) || !name)
      throw new CliError(`cannot scale ${info.plural}: labctl scales deployments and replicasets`);
    const kind = info.kind as 'Deployment' | 'ReplicaSet';
    const current = (await client.get(kind, name, { namespace: session.namespace })) as
      Deployment | ReplicaSet;
    if (opts.currentReplicas !== undefined && (current.spec?.replicas ?? 1) !== opts.currentReplicas) {
      throw new CliError(
        `Expected replicas to be ${opts.currentReplicas}, was ${current.spec?.replicas ?? 1}: ${info.plural}.${info.group}/${name} not scaled`,
      );
    }
    try {
      // Pinned to the version read when a precondition was asked for.
      await client.patch(
        kind,
        name,
        {
          ...(opts.currentReplicas !== undefined
            ? { metadata: { resourceVersion: current.metadata?.resourceVersion } }
            : {}),
          spec: { replicas: opts.replicas },
        },
        { namespace: session.namespace },
      );
    } catch (err) {
      if (isConflict(err))
        throw new CliError(
          `${info.plural}.${info.group}/${name} changed while scaling; run labctl scale again`,
        );
      throw err;
    }
    session.io.out(`${info.singular}.${info.group}/${name} scaled\n`);
  }
}

export function scaleCommand(program: Command, io: Io): void {
  program
    .command('scale')
    .description('set the number of replicas of a Deployment or ReplicaSet')
    .argument('<resource...>', 'deployment/NAME, rs/NAME, or deployment NAME...')
    .option('--replicas <count>', 'the new number of replicas', parseCount)
    .option('--current-replicas <count>', 'scale only if the current size is this', parseCount)
    .action(verb<[string[]], ScaleOptions>(io, (s, o, a) => scale(s, o, a)));
}
