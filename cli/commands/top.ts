/**
 * `labctl top nodes`: each node's CPU and memory use from its NodeMetrics (reported by its
 * agent every 10 s), against what the node can allocate — kubectl top node's columns.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { formatCPUMillis } from '../../client/api/quantity.js';
import { nodeAllocatable, resourcesOf } from '../../client/api/resources.js';
import type { Node, NodeMetrics } from '../../client/api/types.js';
import { verb } from '../command.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { formatTable } from '../print/table.js';
import type { Session } from '../session.js';

interface TopOptions {
  selector?: string;
  sortBy?: 'cpu' | 'memory';
  headers: boolean;
}

const MI = 1024 * 1024;

interface Usage {
  name: string;
  cpu?: number;
  memory?: number;
  allocCpu?: number;
  allocMemory?: number;
}

const pct = (used: number | undefined, of: number | undefined) =>
  used === undefined || !of ? '<unknown>' : `${Math.round((used / of) * 100)}%`;

async function topNodes(session: Session, opts: TopOptions, names: string[]): Promise<void> {
  const client = session.client();
  const nodes: Node[] = names.length
    ? await Promise.all(names.map((n) => client.get('Node', n)))
    : (await client.list('Node', { labelSelector: opts.selector })).items;
  const metrics = new Map<string, NodeMetrics>(
    (await client.list('NodeMetrics')).items.map((m) => [m.metadata?.name ?? '', m]),
  );
  if (!metrics.size)
    throw new CliError('metrics not available yet: agents report NodeMetrics every 10 s after they join');
  const usages: Usage[] = nodes.map((n) => {
    const m = metrics.get(n.metadata?.name ?? '');
    const used = m?.usage?.cpu !== undefined ? resourcesOf(m.usage) : undefined;
    const allocatable = nodeAllocatable(n);
    return {
      name: n.metadata?.name ?? '',
      cpu: used?.milliCPU,
      memory: m?.usage?.memory !== undefined ? used?.memory : undefined,
      allocCpu: allocatable.milliCPU,
      allocMemory: allocatable.memory,
    };
  });
  const measured = usages.filter((u) => u.cpu !== undefined);
  if (opts.sortBy) measured.sort((a, b) => (b[opts.sortBy!] ?? 0) - (a[opts.sortBy!] ?? 0));
  // Nodes without a sample yet come last, as kubectl lists them.
  const rows = [...measured, ...usages.filter((u) => u.cpu === undefined)].map((u) =>
    u.cpu === undefined
      ? [u.name, '<unknown>', '<unknown>', '<unknown>', '<unknown>']
      : [
          u.name,
          formatCPUMillis(u.cpu),
          pct(u.cpu, u.allocCpu),
          u.memory === undefined ? '<unknown>' : `${Math.round(u.memory / MI)}Mi`,
          pct(u.memory, u.allocMemory),
        ],
  );
  const header = ['NAME', 'CPU(cores)', 'CPU(%)', 'MEMORY(bytes)', 'MEMORY(%)'];
  session.io.out(`${formatTable(opts.headers ? [header, ...rows] : rows)}\n`);
}

export function topCommand(program: Command, io: Io): void {
  const top = program.command('top').description('show resource use (CPU, memory) of nodes');
  top
    .command('nodes')
    .alias('node')
    .alias('no')
    .description("nodes' CPU and memory use, from the NodeMetrics their agents report")
    .argument('[names...]', 'only these nodes')
    .option('-l, --selector <selector>', 'the nodes matching this label selector')
    .option('--sort-by <what>', 'cpu or memory', (v) => {
      if (v !== 'cpu' && v !== 'memory') throw new InvalidArgumentError('sort by cpu or memory');
      return v;
    })
    .option('--no-headers', 'leave out the header row')
    .action(verb<[string[]], TopOptions>(io, (s, o, names) => topNodes(s, o, names)));
}
