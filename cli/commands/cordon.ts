/** `labctl cordon` / `uncordon`: mark nodes (un)schedulable; pods already there keep running. */
import type { Command } from 'commander';
import type { Node } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { verb } from '../command.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import type { Session } from '../session.js';

interface NodeSelection {
  selector?: string;
}

/** The nodes named, or those matching -l. */
export async function selectNodes(
  client: Client,
  names: string[],
  selector: string | undefined,
): Promise<Node[]> {
  if (names.length && selector) throw new CliError('give node names or -l, not both');
  if (!names.length && !selector) throw new CliError('give the node to act on (or -l <selector>)');
  if (names.length) return Promise.all(names.map((n) => client.get('Node', n)));
  return (await client.list('Node', { labelSelector: selector })).items;
}

/** Sets spec.unschedulable; says whether it changed anything. */
export async function setUnschedulable(client: Client, node: Node, unschedulable: boolean): Promise<boolean> {
  if (Boolean(node.spec?.unschedulable) === unschedulable) return false;
  // null removes the field: an uncordoned node looks like one never cordoned.
  await client.patch('Node', node.metadata?.name ?? '', {
    spec: { unschedulable: unschedulable ? true : null },
  });
  return true;
}

async function cordon(
  session: Session,
  opts: NodeSelection,
  names: string[],
  unschedulable: boolean,
): Promise<void> {
  const client = session.client();
  const verbDone = unschedulable ? 'cordoned' : 'uncordoned';
  for (const node of await selectNodes(client, names, opts.selector)) {
    const changed = await setUnschedulable(client, node, unschedulable);
    session.io.out(`node/${node.metadata?.name} ${changed ? '' : 'already '}${verbDone}\n`);
  }
}

export function cordonCommands(program: Command, io: Io): void {
  for (const [name, unschedulable, what] of [
    ['cordon', true, 'mark nodes unschedulable: no new pods are placed there'],
    ['uncordon', false, 'mark nodes schedulable again'],
  ] as const) {
    program
      .command(name)
      .description(what)
      .argument('[nodes...]', 'node names')
      .option('-l, --selector <selector>', 'the nodes matching this label selector')
      .action(verb<[string[]], NodeSelection>(io, (s, o, nodes) => cordon(s, o, nodes, unschedulable)));
  }
}
