/**
 * `labctl rollout status|restart|undo|history` for DaemonSets, as kubectl does them: status
 * waits for the rolling update (kubectl's DaemonSetStatusViewer messages), restart stamps the
 * pod template with kubectl.kubernetes.io/restartedAt, history lists the ControllerRevisions,
 * undo puts an earlier revision's template back.
 */
import type { Command } from 'commander';
import { isConflict } from '../../client/api/errors.js';
import type { ControllerRevision, DaemonSet, PodTemplateSpec } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { rfc3339 } from '../../client/util/clock.js';
import { deepEqual } from '../../client/util/objects.js';
import { verb } from '../command.js';
import { writePodTemplate } from '../describe/daemonset.js';
import { DescribeWriter } from '../describe/writer.js';
import { parseCount, parseDurationMs } from '../duration.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { formatTable } from '../print/table.js';
import { kindOrFail } from '../resources.js';
import type { Session } from '../session.js';
import { waitUntil } from '../wait.js';
import { boolArg } from './delete.js';

export const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';
const CHANGE_CAUSE_ANNOTATION = 'kubernetes.io/change-cause';

/** `ds/NAME`, `daemonset NAME` or `daemonsets.apps/NAME`: the DaemonSet's name. */
function daemonSetName(args: string[]): string {
  const [first, second] = args;
  const [type, name] = first?.includes('/') ? first.split('/') : [first, second];
  if (!type || !name) throw new CliError('give the DaemonSet: ds/NAME or daemonset NAME');
  const info = kindOrFail(type);
  if (info.kind !== 'DaemonSet')
    throw new CliError(`no rollout support for ${info.plural}: kubelab rolls out DaemonSets`);
  return name;
}

/** kubectl's DaemonSetStatusViewer: the message and whether the rollout is done. */
export function rolloutStatus(ds: DaemonSet): { message: string; done: boolean } {
  const name = ds.metadata?.name;
  const type = ds.spec?.updateStrategy?.type ?? 'RollingUpdate';
  if (type !== 'RollingUpdate')
    throw new CliError(
      `rollout status is only available for RollingUpdate strategy type (${name} uses ${type})`,
    );
  const s = ds.status ?? {};
  if ((ds.metadata?.generation ?? 0) > (s.observedGeneration ?? 0)) {
    return { message: 'Waiting for daemon set spec update to be observed...', done: false };
  }
  const desired = s.desiredNumberScheduled ?? 0;
  if ((s.updatedNumberScheduled ?? 0) < desired) {
    return {
      message: `Waiting for daemon set "${name}" rollout to finish: ${s.updatedNumberScheduled ?? 0} out of ${desired} new pods have been updated...`,
      done: false,
    };
  }
  if ((s.numberAvailable ?? 0) < desired) {
    return {
      message: `Waiting for daemon set "${name}" rollout to finish: ${s.numberAvailable ?? 0} of ${desired} updated pods are available...`,
      done: false,
    };
  }
  return { message: `daemon set "${name}" successfully rolled out`, done: true };
}

/** The DaemonSet's revisions, oldest first. */
async function revisionsOf(client: Client, ds: DaemonSet): Promise<ControllerRevision[]> {
  const all = await client.list('ControllerRevision', { namespace: ds.metadata?.namespace });
  return all.items
    .filter((r) => r.metadata?.ownerReferences?.some((o) => o.uid === ds.metadata?.uid))
    .sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
}

/** The template a revision holds (it stores `spec.template` as a replace patch). */
export function templateOfRevision(r: ControllerRevision): PodTemplateSpec {
  const template = {
    ...((r.data as { spec?: { template?: object } } | undefined)?.spec?.template ?? {}),
  } as Record<string, unknown>;
  delete template.$patch;
  return template as PodTemplateSpec;
}

interface StatusOptions {
  watch: boolean;
  timeout: number;
}

async function status(session: Session, opts: StatusOptions, args: string[]): Promise<void> {
  const io = session.io;
  const client = session.client();
  const name = daemonSetName(args);
  const namespace = session.namespace;
  let last = '';
  const check = async () => {
    const { message, done } = rolloutStatus(await client.get('DaemonSet', name, { namespace }));
    if (message !== last) io.out(`${message}\n`);
    last = message;
    return done || !opts.watch;
  };
  await waitUntil(io.clock, check, opts.timeout, `the rollout of daemonset.apps/${name}`);
}

async function restart(session: Session, _opts: object, args: string[]): Promise<void> {
  const name = daemonSetName(args);
  const at = rfc3339(session.io.clock.now());
  await session
    .client()
    .patch(
      'DaemonSet',
      name,
      { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: at } } } } },
      { namespace: session.namespace },
    );
  session.io.out(`daemonset.apps/${name} restarted\n`);
}

async function history(session: Session, opts: { revision?: number }, args: string[]): Promise<void> {
  const io = session.io;
  const client = session.client();
  const name = daemonSetName(args);
  const ds = await client.get('DaemonSet', name, { namespace: session.namespace });
  const revisions = await revisionsOf(client, ds);
  if (opts.revision !== undefined && opts.revision > 0) {
    const r = revisions.find((x) => x.revision === opts.revision);
    if (!r)
      throw new CliError(`unable to find the specified revision ${opts.revision} of daemonset.apps/${name}`);
    const w = new DescribeWriter();
    w.line(0, 'Pod Template:');
    writePodTemplate(w, 1, templateOfRevision(r));
    io.out(`daemonset.apps/${name} with revision #${opts.revision}\n${w.toString()}`);
    return;
  }
  const rows = revisions.map((r) => [
    String(r.revision ?? 0),
    r.metadata?.annotations?.[CHANGE_CAUSE_ANNOTATION] ?? '<none>',
  ]);
  io.out(`daemonset.apps/${name} \n${formatTable([['REVISION', 'CHANGE-CAUSE'], ...rows])}\n\n`);
}

async function undo(session: Session, opts: { toRevision: number }, args: string[]): Promise<void> {
  const io = session.io;
  const client = session.client();
  const name = daemonSetName(args);
  for (let attempt = 0; ; attempt++) {
    const ds = await client.get('DaemonSet', name, { namespace: session.namespace });
    const revisions = await revisionsOf(client, ds);
    let target: ControllerRevision | undefined;
    if (opts.toRevision > 0) {
      target = revisions.find((r) => r.revision === opts.toRevision);
      if (!target)
        throw new CliError(
          `unable to find the specified revision ${opts.toRevision} of daemonset.apps/${name}`,
        );
    } else {
      // The revision before the newest, as kubectl's rollback picks it.
      if (revisions.length < 2)
        throw new CliError(
          `no rollout history found for daemonset.apps/${name}: there is no earlier revision to go back to`,
        );
      target = revisions[revisions.length - 2];
    }
    const template = templateOfRevision(target);
    if (deepEqual(template, ds.spec?.template)) {
      io.out(
        `daemonset.apps/${name} skipped rollback (current template already matches revision ${target.revision})\n`,
      );
      return;
    }
    try {
      // An update pinned to the version read: a change made meanwhile is not overwritten.
      await client.update({ ...ds, spec: { ...ds.spec, template } });
      io.out(`daemonset.apps/${name} rolled back\n`);
      return;
    } catch (err) {
      if (!isConflict(err) || attempt >= 3) throw err;
    }
  }
}

export function rolloutCommand(program: Command, io: Io): void {
  const rollout = program
    .command('rollout')
    .description('manage the rollout of DaemonSets: status, restart, undo, history');
  rollout
    .command('status')
    .description('wait until the rollout finishes, showing its progress')
    .argument('<daemonset...>', 'ds/NAME or daemonset NAME')
    .option('-w, --watch [bool]', 'wait until done (--watch=false prints the status once)', boolArg, true)
    .option('--timeout <duration>', 'give up after this long (0: no limit)', parseDurationMs, 0)
    .action(verb<[string[]], StatusOptions>(io, (s, o, a) => status(s, o, a)));
  rollout
    .command('restart')
    .description('restart every pod of the DaemonSet through a rolling update')
    .argument('<daemonset...>', 'ds/NAME or daemonset NAME')
    .action(verb<[string[]], object>(io, (s, o, a) => restart(s, o, a)));
  rollout
    .command('history')
    .description("list the DaemonSet's revisions, or show one with --revision")
    .argument('<daemonset...>', 'ds/NAME or daemonset NAME')
    .option('--revision <n>', 'show the pod template of this revision', parseCount)
    .action(verb<[string[]], { revision?: number }>(io, (s, o, a) => history(s, o, a)));
  rollout
    .command('undo')
    .description('roll back to the previous revision, or to --to-revision')
    .argument('<daemonset...>', 'ds/NAME or daemonset NAME')
    .option('--to-revision <n>', 'the revision to go back to (0: the previous one)', parseCount, 0)
    .action(verb<[string[]], { toRevision: number }>(io, (s, o, a) => undo(s, o, a)));
}
