/**
 * `labctl taint nodes NAME key=value:Effect key:Effect- key-`: add taints (same key and effect
 * replaced only with --overwrite) and remove them by key and effect, or by key alone.
 */
import type { Command } from 'commander';
import { isConflict } from '../../client/api/errors.js';
import { sameTaint } from '../../client/api/taints.js';
import type { Node, Taint } from '../../client/api/types.js';
import { isQualifiedName, isValidLabelValue } from '../../client/api/validation.js';
import { verb } from '../command.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { kindOrFail } from '../resources.js';
import type { Session } from '../session.js';
import { selectNodes } from './cordon.js';

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

interface TaintOptions {
  overwrite?: boolean;
  selector?: string;
  all?: boolean;
}

export interface TaintChanges {
  add: Taint[];
  /** Effect undefined: every taint with the key. */
  remove: Array<{ key: string; effect?: string }>;
}

function checkKeyAndEffect(spec: string, key: string, effect: string | undefined): void {
  const problems = isQualifiedName(key);
  if (problems.length) throw new CliError(`invalid taint spec "${spec}": ${problems.join('; ')}`);
  if (effect !== undefined && !EFFECTS.includes(effect)) {
    throw new CliError(`invalid taint effect "${effect}" in "${spec}": use ${EFFECTS.join(', ')}`);
  }
}

/** kubectl's taint specs: key=value:Effect, key:Effect, key:Effect-, key-. */
export function parseTaintSpecs(specs: string[]): TaintChanges {
  const changes: TaintChanges = { add: [], remove: [] };
  for (const spec of specs) {
    if (spec.endsWith('-')) {
      const body = spec.slice(0, -1);
      const [keyValue, effect] = body.split(':');
      const key = keyValue.split('=')[0];
      checkKeyAndEffect(spec, key, effect);
      changes.remove.push({ key, ...(effect ? { effect } : {}) });
      continue;
    }
    const m = /^([^=:]+)(?:=([^:]*))?:([^:]+)$/.exec(spec);
    if (!m)
      throw new CliError(
        `invalid taint spec "${spec}": use key=value:Effect, key:Effect, key:Effect- or key-`,
      );
    const [, key, value, effect] = m;
    checkKeyAndEffect(spec, key, effect);
    if (value) {
      const problems = isValidLabelValue(value);
      if (problems.length) throw new CliError(`invalid taint value in "${spec}": ${problems.join('; ')}`);
    }
    changes.add.push({ key, ...(value ? { value } : {}), effect });
  }
  if (!changes.add.length && !changes.remove.length)
    throw new CliError('at least one taint update is required');
  return changes;
}

/** The node's new taints and what happened, or an error kubectl would give. */
export function applyTaints(
  node: Node,
  changes: TaintChanges,
  overwrite: boolean,
): { taints: Taint[]; outcome: string } {
  let taints = [...(node.spec?.taints ?? [])];
  const name = node.metadata?.name;
  let removed = false;
  for (const r of changes.remove) {
    const kept = taints.filter(
      (t) => !(t.key === r.key && (r.effect === undefined || t.effect === r.effect)),
    );
    if (kept.length === taints.length)
      throw new CliError(`taint "${r.key}${r.effect ? `:${r.effect}` : ''}" not found`);
    taints = kept;
    removed = true;
  }
  let added = false;
  for (const t of changes.add) {
    const existing = taints.find((e) => sameTaint(e, t));
    if (existing && (existing.value ?? '') === (t.value ?? '')) continue;
    if (existing && !overwrite) {
      throw new CliError(
        `node ${name} already has ${t.key} taint(s) with same effect(s) and --overwrite is false`,
      );
    }
    taints = [...taints.filter((e) => !sameTaint(e, t)), t];
    added = true;
  }
  return {
    taints,
    outcome: added && removed ? 'modified' : removed ? 'untainted' : added ? 'tainted' : 'not tainted',
  };
}

async function taint(session: Session, opts: TaintOptions, args: string[]): Promise<void> {
  const [type, ...rest] = args;
  if (!type || kindOrFail(type.split('/')[0]).kind !== 'Node')
    throw new CliError('only nodes can be tainted: labctl taint nodes NAME key=value:Effect');
  const names = type.includes('/') ? [type.split('/')[1]] : [];
  const specs: string[] = [];
  for (const a of rest) (a.includes(':') || a.includes('=') || a.endsWith('-') ? specs : names).push(a);
  const changes = parseTaintSpecs(specs);
  const client = session.client();
  const nodes = opts.all
    ? (await client.list('Node')).items
    : await selectNodes(client, names, opts.selector);
  for (let node of nodes) {
    const name = node.metadata?.name ?? '';
    for (let attempt = 0; ; attempt++) {
      const { taints, outcome } = applyTaints(node, changes, Boolean(opts.overwrite));
      try {
        if (outcome !== 'not tainted') {
          // Pinned to the version read, so a taint written meanwhile (say by the node lifecycle controller) is not lost.
          await client.patch('Node', name, {
            metadata: { resourceVersion: node.metadata?.resourceVersion },
            spec: { taints: taints.length ? taints : null },
          });
        }
        session.io.out(`node/${name} ${outcome}\n`);
        break;
      } catch (err) {
        if (!isConflict(err) || attempt >= 5) throw err;
        node = await client.get('Node', name);
      }
    }
  }
}

export function taintCommand(program: Command, io: Io): void {
  program
    .command('taint')
    .description('update the taints of nodes: key=value:Effect adds, key:Effect- or key- removes')
    .argument('<args...>', 'nodes NAME... then taint specs')
    .option('--overwrite', 'replace a taint of the same key and effect')
    .option('-l, --selector <selector>', 'the nodes matching this label selector')
    .option('--all', 'every node')
    .addHelpText(
      'after',
      '\nExamples:\n  labctl taint nodes lab-1 dedicated=gpu:NoSchedule\n  labctl taint nodes lab-1 dedicated:NoSchedule-\n  labctl taint nodes lab-1 dedicated-',
    )
    .action(verb<[string[]], TaintOptions>(io, (s, o, args) => taint(s, o, args)));
}
