/**
 * `labctl drain`: cordon the node, then evict its pods as `kubectl drain --ignore-daemonsets`
 * does and wait until they are gone. kubelab has no Eviction subresource, so evicting is a
 * graceful delete with the pod's grace period (or --grace-period). DaemonSet pods stay (their
 * controller would put them back at once): drain refuses unless --ignore-daemonsets says to
 * leave them; pods no controller would recreate are refused unless --force; pods with emptyDir
 * data unless --delete-emptydir-data.
 */
import type { Command } from 'commander';
import { isNotFound } from '../../client/api/errors.js';
import { kindInfo } from '../../client/api/kinds.js';
import type { Pod } from '../../client/api/types.js';
import { verb } from '../command.js';
import { parseDurationMs, parseGracePeriod } from '../duration.js';
import { CliError } from '../errors.js';
import { listAll } from '../fetch.js';
import type { Io } from '../io.js';
import type { Session } from '../session.js';
import { waitForDeletion, type Doomed } from '../wait.js';
import { setUnschedulable } from './cordon.js';

interface DrainOptions {
  ignoreDaemonsets?: boolean;
  force?: boolean;
  deleteEmptydirData?: boolean;
  gracePeriod: number;
  timeout: number;
  podSelector?: string;
}

const key = (p: Pod) => `${p.metadata?.namespace}/${p.metadata?.name}`;

interface Plan {
  evict: Pod[];
  /** DaemonSet pods left in place (with --ignore-daemonsets). */
  ignored: Pod[];
  /** Why drain cannot go on, one line per kind of problem. */
  errors: string[];
}

/** kubectl drain's pod filters: what to evict, what to leave, what forbids draining. */
export function planDrain(pods: Pod[], opts: DrainOptions): Plan {
  const plan: Plan = { evict: [], ignored: [], errors: [] };
  const daemonSetPods: Pod[] = [];
  const unmanaged: Pod[] = [];
  const localData: Pod[] = [];
  for (const pod of pods) {
    const phase = pod.status?.phase;
    const finished = phase === 'Succeeded' || phase === 'Failed';
    const controller = pod.metadata?.ownerReferences?.find((r) => r.controller);
    if (controller?.kind === 'DaemonSet' && !finished) {
      daemonSetPods.push(pod);
      continue;
    }
    if (!controller && !finished && !opts.force) {
      unmanaged.push(pod);
      continue;
    }
    if (!finished && pod.spec?.volumes?.some((v) => v.emptyDir) && !opts.deleteEmptydirData) {
      localData.push(pod);
      continue;
    }
    plan.evict.push(pod);
  }
  if (daemonSetPods.length && !opts.ignoreDaemonsets) {
    plan.errors.push(
      `cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): ${daemonSetPods.map(key).join(', ')}`,
    );
  } else plan.ignored = daemonSetPods;
  if (unmanaged.length) {
    plan.errors.push(
      `cannot delete Pods that declare no controller (use --force to override): ${unmanaged.map(key).join(', ')}`,
    );
  }
  if (localData.length) {
    plan.errors.push(
      `cannot delete Pods with local storage (use --delete-emptydir-data to override): ${localData.map(key).join(', ')}`,
    );
  }
  return plan;
}

async function drain(session: Session, opts: DrainOptions, nodeName: string): Promise<void> {
  const io = session.io;
  const client = session.client();
  const node = await client.get('Node', nodeName);
  const changed = await setUnschedulable(client, node, true);
  io.out(`node/${nodeName} ${changed ? '' : 'already '}cordoned\n`);

  const podInfo = kindInfo('Pod');
  const { items } = await listAll(client, podInfo, '', {
    fieldSelector: `spec.nodeName=${nodeName}`,
    labelSelector: opts.podSelector,
  });
  const plan = planDrain(items as Pod[], opts);
  if (plan.errors.length) {
    throw new CliError(
      `unable to drain node "${nodeName}" (it stays cordoned; \`labctl uncordon ${nodeName}\` undoes that):\n${plan.errors.join('\n')}`,
    );
  }
  if (plan.ignored.length)
    io.err(`Warning: ignoring DaemonSet-managed Pods: ${plan.ignored.map(key).join(', ')}\n`);
  if (opts.force) {
    const unmanaged = plan.evict.filter((p) => !p.metadata?.ownerReferences?.some((r) => r.controller));
    if (unmanaged.length)
      io.err(`Warning: deleting Pods that declare no controller: ${unmanaged.map(key).join(', ')}\n`);
  }

  const evicting: Doomed[] = [];
  for (const pod of plan.evict) {
    io.out(`evicting pod ${key(pod)}\n`);
    try {
      await client.delete('Pod', pod.metadata?.name ?? '', {
        namespace: pod.metadata?.namespace,
        preconditions: { uid: pod.metadata?.uid },
        ...(opts.gracePeriod >= 0 ? { gracePeriodSeconds: opts.gracePeriod } : {}),
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    evicting.push({
      info: podInfo,
      name: pod.metadata?.name ?? '',
      namespace: pod.metadata?.namespace ?? '',
      uid: pod.metadata?.uid,
    });
  }
  await waitForDeletion(client, evicting, {
    clock: io.clock,
    timeoutMs: opts.timeout,
    onGone: (d) => io.out(`pod/${d.name} evicted\n`),
    onWaiting: (left) =>
      io.err(
        `waiting for ${left.length} pod(s) to stop: ${left.map((l) => `${l.d.namespace}/${l.d.name}`).join(', ')}\n`,
      ),
  });
  io.out(`node/${nodeName} drained\n`);
}

export function drainCommand(program: Command, io: Io): void {
  program
    .command('drain')
    .description('cordon a node and evict its pods (DaemonSet pods stay), waiting until they are gone')
    .argument('<node>', 'the node to drain')
    .option('--ignore-daemonsets', 'leave DaemonSet-managed pods in place (required when there are any)')
    .option('--force', 'also delete pods no controller manages (they are not recreated elsewhere)')
    .option('--delete-emptydir-data', 'also delete pods with emptyDir volumes (their data is lost)')
    .option(
      '--grace-period <seconds>',
      'seconds each pod gets to stop; -1 uses its own',
      parseGracePeriod,
      -1,
    )
    .option('--timeout <duration>', 'give up after this long (0: no limit)', parseDurationMs, 5 * 60_000)
    .option('--pod-selector <selector>', 'only evict the pods matching this label selector')
    .addHelpText('after', '\nExamples:\n  labctl drain lab-2 --ignore-daemonsets\n  labctl uncordon lab-2')
    .action(verb<[string], DrainOptions>(io, (s, o, node) => drain(s, o, node)));
}
