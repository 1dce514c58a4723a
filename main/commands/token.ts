/**
 * `kubelab token create|list|delete`: run on the control plane machine; talks to the local
 * server with the admin token and CA from its data folder.
 */
import type { Command } from 'commander';
import { parseDuration } from './common.js';
import type { TokenInfo } from '../../client/grpc/cluster.js';
import { installCommands } from '../../client/api/installcommands.js';
import { agentAddress } from '../agentaddress.js';
import { splitHostPort } from '../grpc/server.js';
import {
  localServerOptions,
  targetOf,
  withTokensClient as withClient,
  type ConnectFlags,
} from './localserver.js';

function table(tokens: TokenInfo[]): string {
  const rows = [
    ['ID', 'ROLE', 'NAME', 'EXPIRES', 'DESCRIPTION'],
    ...tokens.map((t) => [
      t.id,
      t.role,
      t.nodeName ? `node ${t.nodeName}` : t.name,
      t.expiresAt ?? 'never',
      t.description ?? '',
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]))
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

/** How to join a machine with a fresh join token, with this server's real address. */
function joinHint(flags: ConnectFlags, token: string, expiresAt: string | undefined): string {
  const listen = targetOf(flags).listen;
  const lines = ['Add a machine: run on it (the token in the environment keeps it out of `ps`)'];
  if (listen) {
    const { host, port } = splitHostPort(listen);
    const agents = agentAddress(host, port);
    for (const c of installCommands(agents.url, token)) lines.push(`  ${c.os}:`, `    ${c.line}`);
    lines.push('Or, where kubelab-agent is already installed:');
    lines.push(`  KUBELAB_TOKEN='${token}' kubelab-agent --server ${agents.url}`);
    if (!agents.reachable)
      lines.push(
        `The server listens on ${host} only, so no other machine can reach it: restart it with --listen 0.0.0.0:${port}.`,
      );
  } else {
    lines.push(
      `  KUBELAB_TOKEN='${token}' kubelab-agent --server https://<this machine's address>:<its port>`,
    );
  }
  lines.push(`The token expires ${expiresAt ?? 'never'}.`);
  return lines.join('\n') + '\n';
}

export function tokenCommand(program: Command): void {
  const token = program.command('token').description('create, list and delete join, admin and viewer tokens');
  const common = localServerOptions;
  const fail = (err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(1);
  };

  common(token.command('create'))
    .description('create a token (a join token for a new machine, unless --role says otherwise)')
    .option(
      '--ttl <duration>',
      'how long it stays valid, e.g. 24h, 7d (join tokens default to 24h)',
      parseDuration,
    )
    .option('--role <role>', 'join, admin or viewer', 'join')
    .option('--name <name>', 'who an admin or viewer token is for')
    .option('--description <text>', 'a note to find it by later')
    .action(
      async (
        flags: ConnectFlags & {
          ttl?: number;
          role: 'join' | 'admin' | 'viewer';
          name?: string;
          description?: string;
        },
      ) => {
        try {
          const created = await withClient(flags, (c) =>
            c.create({
              role: flags.role,
              ttlSeconds: flags.ttl,
              name: flags.name,
              description: flags.description,
            }),
          );
          process.stdout.write(created.token + '\n');
          if (flags.role === 'join') process.stderr.write(joinHint(flags, created.token!, created.expiresAt));
        } catch (err) {
          fail(err);
        }
      },
    );

  common(token.command('list'))
    .description('list tokens and node credentials (never their secrets)')
    .action(async (flags: ConnectFlags) => {
      try {
        process.stdout.write(table(await withClient(flags, (c) => c.list())) + '\n');
      } catch (err) {
        fail(err);
      }
    });

  common(token.command('delete'))
    .description('delete a token by its ID: it stops working at once')
    .argument('<id>', 'the token ID (the part before the dot)')
    .action(async (id: string, flags: ConnectFlags) => {
      try {
        await withClient(flags, (c) => c.delete(id.split('.')[0].replace(/^K10[0-9a-f]{64}::/, '')));
        process.stdout.write(`token ${id} deleted\n`);
      } catch (err) {
        fail(err);
      }
    });
}
