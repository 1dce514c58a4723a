/**
 * `labctl token create|list|delete`: the cluster's join, admin and viewer tokens, through the
 * Tokens service as `kubelab token` does on the control plane machine — from anywhere, with an
 * admin context.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { verb } from '../command.js';
import { parseDurationSeconds } from '../duration.js';
import type { Io } from '../io.js';
import { ageOf } from '../../client/print/age.js';
import { formatTable } from '../print/table.js';
import type { Session } from '../session.js';

interface CreateOptions {
  ttl?: number;
  role: 'join' | 'admin' | 'viewer';
  name?: string;
  description?: string;
}

function roleArg(v: string): CreateOptions['role'] {
  if (v !== 'join' && v !== 'admin' && v !== 'viewer')
    throw new InvalidArgumentError(`"${v}" is not a role: use join, admin or viewer`);
  return v;
}

async function create(session: Session, opts: CreateOptions): Promise<void> {
  const created = await session.tokens().create({
    role: opts.role,
    ttlSeconds: opts.ttl,
    name: opts.name,
    description: opts.description,
  });
  session.io.out(`${created.token}\n`);
  if (opts.role === 'join') {
    const server = session.resolve().server;
    session.io.err(
      `Join a machine with (the token in the environment keeps it out of \`ps\`):\n  KUBELAB_TOKEN='${created.token}' kubelab-agent --server ${server.includes('://') ? server : `https://${server}`}\nThe token expires ${created.expiresAt ?? 'never'}.\n`,
    );
  }
}

async function list(session: Session): Promise<void> {
  const now = session.io.clock.now();
  const tokens = await session.tokens().list();
  const rows = tokens.map((t) => [
    t.id,
    t.role,
    t.nodeName ? `system:node:${t.nodeName}` : t.name,
    t.expiresAt ? t.expiresAt : '<never>',
    ageOf(t.createdAt, now),
    t.description || '<none>',
  ]);
  session.io.out(`${formatTable([['ID', 'ROLE', 'NAME', 'EXPIRES', 'AGE', 'DESCRIPTION'], ...rows])}\n`);
}

async function remove(session: Session, ids: string[]): Promise<void> {
  const tokens = session.tokens();
  for (const raw of ids) {
    // Accept the whole token as printed, as well as its ID.
    const id = raw.replace(/^K10[0-9a-f]{64}::/, '').split('.')[0];
    await tokens.delete(id);
    session.io.out(`token "${id}" deleted\n`);
  }
}

export function tokenCommand(program: Command, io: Io): void {
  const token = program
    .command('token')
    .description("manage the cluster's join, admin and viewer tokens (needs an admin token)");
  token
    .command('create')
    .description(
      'create a token: a join token for a new machine unless --role says otherwise; prints it once',
    )
    .option(
      '--ttl <duration>',
      'how long it stays valid, e.g. 24h, 7d (join tokens default to 24h)',
      parseDurationSeconds,
    )
    .option('--role <role>', 'join, admin or viewer', roleArg, 'join' as CreateOptions['role'])
    .option('--name <name>', 'who an admin or viewer token is for')
    .option('--description <text>', 'a note to find it by later')
    .action(verb<[], CreateOptions>(io, (s, o) => create(s, o)));
  token
    .command('list')
    .description('list tokens and node credentials (never their secrets)')
    .action(verb<[], object>(io, (s) => list(s)));
  token
    .command('delete')
    .description('delete tokens by ID: they stop working at once')
    .argument('<ids...>', 'token IDs (the part before the dot)')
    .action(verb<[string[]], object>(io, (s, _o, ids) => remove(s, ids)));
}
