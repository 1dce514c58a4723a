/**
 * `labctl rollout status|restart|undo|history|pause|resume` for Deployments and DaemonSets, as
 * kubectl does them: status waits for the rollout (kubectl's status viewers' messages), restart
 * stamps the pod template with kubectl.kubernetes.io/restartedAt, history lists the revisions,
 * undo puts an earlier revision's template back, pause and resume set a Deployment's
 * spec.paused. What differs by kind is in cli/rollout/.
 */
import type { Command } from 'commander';
import type { KubeObject } from '../../client/api/types.js';
import { rfc3339 } from '../../client/util/clock.js';
import { retryOnConflict } from '../../client/util/retryonconflict.js';
import { verb } from '../command.js';
import { writePodTemplate } from '../describe/daemonset.js';
import { DescribeWriter } from '../describe/writer.js';
import { parseCount, parseDurationMs } from '../duration.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { formatTable } from '../print/table.js';
import { kindOrFail } from '../resources.js';
import { daemonSetRollout } from '../rollout/daemonset.js';
import { deploymentRollout } from '../rollout/deployment.js';
import type { Revision, RolloutKind } from '../rollout/types.js';
import type { Session } from '../session.js';
import { waitUntil } from '../wait.js';
import { boolArg } from './delete.js';

export const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

const ROLLOUTS: Record<string, RolloutKind> = {
  Deployment: deploymentRollout as unknown as RolloutKind,
  DaemonSet: daemonSetRollout as unknown as RolloutKind,
};

/** `deploy/NAME`, `deployment NAME`, `ds/NAME`, `daemonsets.apps/NAME`: what to roll out. */
function target(args: string[], only?: 'Deployment'): { rollout: RolloutKind; name: string } {
  const [first, second] = args;
  const [type, name] = first?.includes('/') ? first.split('/') : [first, second];
  if (!type || !name) throw new CliError('give what to roll out: deployment/NAME or daemonset/NAME');
  const info = kindOrFail(type);
  const rollout = ROLLOUTS[info.kind];
  if (!rollout || (only && info.kind !== only))
    throw new CliError(
      `no rollout support for ${info.plural}: labctl rolls out ${only ? 'deployments' : 'deployments and daemonsets'}`,
    );
  return { rollout, name };
}

async function getTarget(session: Session, args: string[], only?: 'Deployment') {
  const { rollout, name } = target(args, only);
  const obj = await session.client().get(rollout.kind, name, { namespace: session.namespace });
  return { rollout, name, obj: obj as KubeObject };
}

interface StatusOptions {
  watch: boolean;
  timeout: number;
}

async function status(session: Session, opts: StatusOptions, args: string[]): Promise<void> {
  const io = session.io;
  const client = session.client();
  const { rollout, name } = target(args);
  const namespace = session.namespace;
  let last = '';
  const check = async () => {
    const { message, done } = rollout.status(await client.get(rollout.kind, name, { namespace }));
    if (message !== last) io.out(`${message}\n`);
    last = message;
    return done || !opts.watch;
  };
  await waitUntil(io.clock, check, opts.timeout, `the rollout of ${rollout.resource}/${name}`);
}

async function restart(session: Session, _opts: object, args: string[]): Promise<void> {
  const { rollout, name } = target(args);
  const at = rfc3339(session.io.clock.now());
  await session
    .client()
    .patch(
      rollout.kind,
      name,
      { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: at } } } } },
      { namespace: session.namespace },
    );
  session.io.out(`${rollout.resource}/${name} restarted\n`);
}

async function history(session: Session, opts: { revision?: number }, args: string[]): Promise<void> {
  const io = session.io;
  const { rollout, name, obj } = await getTarget(session, args);
  const revisions = await rollout.revisions(session.client(), obj);
  if (opts.revision !== undefined && opts.revision > 0) {
    const r = revisions.find((x) => x.revision === opts.revision);
    if (!r)
      throw new CliError(
        `unable to find the specified revision ${opts.revision} of ${rollout.resource}/${name}`,
      );
    const w = new DescribeWriter();
    w.line(0, 'Pod Template:');
    writePodTemplate(w, 1, r.template);
    io.out(`${rollout.resource}/${name} with revision #${opts.revision}\n${w.toString()}`);
    return;
  }
  const rows = revisions.map((r) => [String(r.revision), r.changeCause ?? '<none>']);
  io.out(`${rollout.resource}/${name} \n${formatTable([['REVISION', 'CHANGE-CAUSE'], ...rows])}\n\n`);
}

async function undo(session: Session, opts: { toRevision: number }, args: string[]): Promise<void> {
  const io = session.io;
  // The controller may write status between the read and the rollback: read again and decide again.
  await retryOnConflict(4, async () => {
    const { rollout, name, obj } = await getTarget(session, args);
    const refusal = rollout.refuseRollback?.(obj);
    if (refusal) throw new CliError(refusal);
    const revisions = await rollout.revisions(session.client(), obj);
    let chosen: Revision | undefined;
    if (opts.toRevision > 0) {
      chosen = revisions.find((r) => r.revision === opts.toRevision);
      if (!chosen)
        throw new CliError(
          `unable to find the specified revision ${opts.toRevision} of ${rollout.resource}/${name}`,
        );
    } else {
      // The revision before the newest, as kubectl's rollback picks it.
      if (revisions.length < 2)
        throw new CliError(
          `no rollout history found for ${rollout.resource}/${name}: there is no earlier revision to go back to`,
        );
      chosen = revisions[revisions.length - 2];
    }
    if (rollout.isCurrent(obj, chosen)) {
      io.out(
        `${rollout.resource}/${name} skipped rollback (current template already matches revision ${chosen.revision})\n`,
      );
      return;
    }
    await rollout.rollback(session.client(), obj, chosen);
    io.out(`${rollout.resource}/${name} rolled back\n`);
  });
}

/** kubectl rollout pause/resume: sets spec.paused, refusing a change that changes nothing. */
async function setPaused(session: Session, args: string[], paused: boolean): Promise<void> {
  const { rollout, name, obj } = await getTarget(session, args, 'Deployment');
  if (!!(obj as { spec?: { paused?: boolean } }).spec?.paused === paused)
    throw new CliError(`deployments.apps "${name}" is ${paused ? 'already' : 'not'} paused`);
  await session.client().patch(rollout.kind, name, { spec: { paused } }, { namespace: session.namespace });
  session.io.out(`${rollout.resource}/${name} ${paused ? 'paused' : 'resumed'}\n`);
}

export function rolloutCommand(program: Command, io: Io): void {
  const rollout = program
    .command('rollout')
    .description(
      'manage the rollout of Deployments and DaemonSets: status, restart, undo, history, pause, resume',
    );
  rollout
    .command('status')
    .description('wait until the rollout finishes, showing its progress')
    .argument('<resource...>', 'deployment/NAME, ds/NAME or daemonset NAME')
    .option('-w, --watch [bool]', 'wait until done (--watch=false prints the status once)', boolArg, true)
    .option('--timeout <duration>', 'give up after this long (0: no limit)', parseDurationMs, 0)
    .action(verb<[string[]], StatusOptions>(io, (s, o, a) => status(s, o, a)));
  rollout
    .command('restart')
    .description('restart every pod through a rolling update')
    .argument('<resource...>', 'deployment/NAME, ds/NAME or daemonset NAME')
    .action(verb<[string[]], object>(io, (s, o, a) => restart(s, o, a)));
  rollout
    .command('history')
    .description('list the revisions, or show one with --revision')
    .argument('<resource...>', 'deployment/NAME, ds/NAME or daemonset NAME')
    .option('--revision <n>', 'show the pod template of this revision', parseCount)
    .action(verb<[string[]], { revision?: number }>(io, (s, o, a) => history(s, o, a)));
  rollout
    .command('undo')
    .description('roll back to the previous revision, or to --to-revision')
    .argument('<resource...>', 'deployment/NAME, ds/NAME or daemonset NAME')
    .option('--to-revision <n>', 'the revision to go back to (0: the previous one)', parseCount, 0)
    .action(verb<[string[]], { toRevision: number }>(io, (s, o, a) => undo(s, o, a)));
  rollout
    .command('pause')
    .description('pause a Deployment: template changes wait until it is resumed; scaling still works')
    .argument('<resource...>', 'deployment/NAME or deployment NAME')
    .action(verb<[string[]], object>(io, (s, _o, a) => setPaused(s, a, true)));
  rollout
    .command('resume')
    .description('resume a paused Deployment: its pending template changes roll out')
    .argument('<resource...>', 'deployment/NAME or deployment NAME')
    .action(verb<[string[]], object>(io, (s, _o, a) => setPaused(s, a, false)));
}
