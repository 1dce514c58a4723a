/**
 * `kubelab token create|list|delete`: run on the control plane machine; talks to the local
 * server with the admin token and CA from its data folder.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TokensClient, type TokenInfo } from '../../client/grpc/cluster.js';
import { defaultDataDir } from './common.js';

interface ConnectFlags {
  dataDir: string;
  server: string;
}

/** "24h", "30m", "7d", "90s" or plain seconds. */
export function parseDuration(v: string): number {
  const m = /^(\d+)(s|m|h|d)?$/.exec(v.trim());
  if (!m) throw new InvalidArgumentError(`"${v}" is not a duration: use e.g. 90s, 30m, 24h or 7d`);
  const n = Number(m[1]);
  return n * { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
}

function connect(flags: ConnectFlags): TokensClient {
  const tokenPath = join(flags.dataDir, 'admin.token');
  if (!existsSync(tokenPath)) {
    throw new Error(
      `no admin token at ${tokenPath}: run this on the control plane machine, or pass --data-dir`,
    );
  }
  const caPath = join(flags.dataDir, 'pki', 'ca.crt');
  const plaintext = !existsSync(caPath);
  return new TokensClient({
    server: flags.server,
    token: readFileSync(tokenPath, 'utf8').trim(),
    caPem: plaintext ? undefined : readFileSync(caPath, 'utf8'),
    plaintext,
  });
}

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

async function withClient<T>(flags: ConnectFlags, fn: (c: TokensClient) => Promise<T>): Promise<T> {
  const client = connect(flags);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

export function tokenCommand(program: Command): void {
  const token = program.command('token').description('create, list and delete join, admin and viewer tokens');
  const common = (c: Command) =>
    c
      .option(
        '--data-dir <dir>',
        'the control plane data folder (holds admin.token and pki/ca.crt)',
        defaultDataDir(),
      )
      .option('--server <host:port>', 'the control plane', '127.0.0.1:6443');
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
          if (flags.role === 'join') {
            process.stderr.write(
              `Join a machine with:\n  kubelab-agent --server https://<this machine's address>:6443 --token ${created.token}\nThe token expires ${created.expiresAt ?? 'never'}.\n`,
            );
          }
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
