/** `labctl describe`: a person's view of objects, with their related events, like kubectl's. */
import type { Command } from 'commander';
import { isNotFound } from '../../client/api/errors.js';
import { kindInfo, type KindInfo } from '../../client/api/kinds.js';
import { labelSelectorFromObject } from '../../client/api/selectors.js';
import { NODE_LEASE_NAMESPACE } from '../../client/api/wellknown.js';
import type {
  CronJob,
  DaemonSet,
  Deployment,
  Job,
  KindName,
  KubeObject,
  Node,
  Pod,
  ReplicaSet,
} from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { verb } from '../command.js';
import { describeDaemonSet } from '../describe/daemonset.js';
import { eventsFor, writeEvents } from '../describe/events.js';
import { describeGeneric } from '../describe/generic.js';
import { describeNode } from '../describe/node.js';
import { describePod } from '../describe/pod.js';
import {
  describeCronJob,
  describeDeployment,
  describeJob,
  describeReplicaSet,
} from '../describe/workloads.js';
import { DescribeWriter } from '../describe/writer.js';
import { AlreadyReported, formatError } from '../errors.js';
import { listAll, namespaceFor, noResourcesMessage } from '../fetch.js';
import type { Io } from '../io.js';
import { parseResourceArgs } from '../resources.js';
import type { Session } from '../session.js';

interface DescribeOptions {
  selector?: string;
  allNamespaces?: boolean;
  showEvents: boolean;
}

const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

/** The pods an object controls. */
async function ownedPods(client: Client, owner: KubeObject): Promise<Pod[]> {
  const pods = await client.list('Pod', { namespace: owner.metadata?.namespace });
  return pods.items.filter((p) =>
    p.metadata?.ownerReferences?.some((r) => r.controller && r.uid === owner.metadata?.uid),
  );
}

async function describeOne(
  session: Session,
  info: KindInfo,
  object: KubeObject,
  showEvents: boolean,
): Promise<string> {
  const client = session.client();
  const w = new DescribeWriter();
  const now = session.io.clock.now();
  switch (info.kind) {
    case 'Pod':
      describePod(w, object as Pod);
      break;
    case 'Node': {
      const name = object.metadata?.name ?? '';
      const pods = (await listAll(client, kindInfo('Pod'), '', { fieldSelector: `spec.nodeName=${name}` }))
        .items as Pod[];
      const lease = await client
        .get('Lease', name, { namespace: NODE_LEASE_NAMESPACE })
        .catch(() => undefined);
      describeNode(w, object as Node, pods, lease, now);
      break;
    }
    case 'DaemonSet': {
      const ds = object as DaemonSet;
      let pods: Pod[] = [];
      try {
        const selector = labelSelectorFromObject(ds.spec?.selector).toString();
        pods = (
          await client.list('Pod', { namespace: ds.metadata?.namespace, labelSelector: selector })
        ).items.filter((p) => p.metadata?.ownerReferences?.some((r) => r.uid === ds.metadata?.uid));
      } catch {
        // An unusable selector selects nothing: the counts stay zero.
      }
      describeDaemonSet(w, ds, pods);
      break;
    }
    case 'Deployment': {
      const d = object as Deployment;
      const rss = (await client.list('ReplicaSet', { namespace: d.metadata?.namespace })).items.filter((rs) =>
        rs.metadata?.ownerReferences?.some((r) => r.controller && r.uid === d.metadata?.uid),
      );
      // The new ReplicaSet carries the Deployment's revision (the controller keeps them equal).
      const revision = d.metadata?.annotations?.[REVISION_ANNOTATION];
      const current = rss.find(
        (rs) => revision && rs.metadata?.annotations?.[REVISION_ANNOTATION] === revision,
      );
      describeDeployment(
        w,
        d,
        current,
        rss.filter((rs) => rs !== current),
      );
      break;
    }
    case 'ReplicaSet':
      describeReplicaSet(w, object as ReplicaSet, await ownedPods(client, object));
      break;
    case 'Job':
      describeJob(w, object as Job);
      break;
    case 'CronJob':
      describeCronJob(w, object as CronJob);
      break;
    default:
      describeGeneric(w, info, object);
  }
  if (showEvents && info.kind !== 'Event') writeEvents(w, await eventsFor(client, info, object), now);
  return w.toString();
}

async function describe(session: Session, opts: DescribeOptions, args: string[]): Promise<void> {
  const io = session.io;
  const selections = parseResourceArgs(args);
  const namespace = opts.allNamespaces ? '' : session.namespace;
  const client = session.client();
  const outputs: string[] = [];
  const failures: unknown[] = [];
  for (const sel of selections) {
    let objects: KubeObject[] = [];
    if (sel.names.length) {
      for (const name of sel.names) {
        try {
          objects.push(
            await client.get(sel.info.kind as KindName, name, {
              namespace: namespaceFor(sel.info, namespace),
            }),
          );
        } catch (err) {
          if (!isNotFound(err)) throw err;
          failures.push(err);
        }
      }
    } else {
      objects = (await listAll(client, sel.info, namespace, { labelSelector: opts.selector })).items;
    }
    for (const o of objects) outputs.push(await describeOne(session, sel.info, o, opts.showEvents));
  }
  if (outputs.length) io.out(outputs.join('\n\n'));
  for (const err of failures) io.err(`${formatError(err)}\n`);
  if (failures.length) throw new AlreadyReported();
  if (!outputs.length)
    io.err(
      noResourcesMessage(
        selections.length === 1 ? selections[0].info : undefined,
        namespace,
        Boolean(opts.allNamespaces),
      ),
    );
}

export function describeCommand(program: Command, io: Io): void {
  program
    .command('describe')
    .description('show details of objects, with their recent events')
    .argument('<resources...>', 'TYPE [NAME...] or TYPE/NAME ...')
    .option('-l, --selector <selector>', 'label selector (when no name is given)')
    .option('-A, --all-namespaces', 'across all namespaces')
    .option('--no-show-events', 'leave out the Events section')
    .addHelpText(
      'after',
      '\nExamples:\n  labctl describe node lab-1\n  labctl describe pod web\n  labctl describe ds -l app=exporter',
    )
    .action(verb<[string[]], DescribeOptions>(io, (s, o, args) => describe(s, o, args)));
}
