/**
 * `kubelab kubeconfig`: a kubeconfig for kubectl, Helm, k9s and client libraries — the cluster's
 * CA, the API address (REST and gRPC share the port) and a token of its own, made for it, so
 * that deleting that token (`kubelab token delete`) takes the kubeconfig's access away and
 * nothing else's. `--merge` adds it to ~/.kube/config as its own context.
 */
import type { Command } from 'commander';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { agentAddress } from '../agentaddress.js';
import { splitHostPort } from '../grpc/server.js';
import { kubeconfigFor, mergeKubeconfig, type Kubeconfig } from '../kubeconfig.js';
import { caOf, localServerOptions, targetOf, withTokensClient, type ConnectFlags } from './localserver.js';

interface KubeconfigFlags extends ConnectFlags {
  role: 'admin' | 'viewer';
  name?: string;
  /** The API address written into the kubeconfig (default: where other machines reach it). */
  url?: string;
  context: string;
  merge: boolean;
  ttl?: number;
}

/** kubectl's file: the first path of $KUBECONFIG, else ~/.kube/config. */
function defaultKubeconfigPath(): string {
  const first = (process.env.KUBECONFIG ?? '').split(process.platform === 'win32' ? ';' : ':')[0];
  return first || join(homedir(), '.kube', 'config');
}

function writePrivate(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.kubelab-${process.pid}`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, path);
}

/** The URL kubectl should use: the one asked for, else where other machines reach the server. */
function apiUrl(flags: KubeconfigFlags, tls: boolean): string {
  if (flags.url) return flags.url;
  const target = targetOf(flags);
  const { host, port } = splitHostPort(target.listen ?? target.server);
  return agentAddress(host, port, tls).url;
}

export function kubeconfigCommand(program: Command): void {
  localServerOptions(
    program
      .command('kubeconfig')
      .description(
        'print a kubeconfig for kubectl, Helm and k9s (the CA, the API address, a new token of its own); --merge adds it to ~/.kube/config',
      ),
  )
    .option('--role <role>', 'admin or viewer (read-only)', 'admin')
    .option('--name <name>', 'who the token is for (shown by `kubelab token list`)')
    .option(
      '--url <url>',
      "the API address kubectl dials (default: this machine's address the server listens on)",
    )
    .option('--context <name>', 'the name of the context, cluster and user in the kubeconfig', 'kubelab')
    .option('--merge', 'add it to $KUBECONFIG or ~/.kube/config instead of printing it', false)
    .action(async (flags: KubeconfigFlags) => {
      try {
        if (flags.role !== 'admin' && flags.role !== 'viewer')
          throw new Error(`--role "${flags.role}" is not one a kubeconfig can have: use admin or viewer`);
        const caPem = caOf(flags.dataDir);
        const created = await withTokensClient(flags, (c) =>
          c.create({
            role: flags.role,
            name: flags.name ?? `kubeconfig-${flags.context}`,
            description: `kubeconfig (${flags.role}), made by kubelab kubeconfig`,
          }),
        );
        const config = kubeconfigFor({
          server: apiUrl(flags, caPem !== undefined),
          caPem,
          token: created.token!,
          context: flags.context,
          user: `${flags.context}-${flags.role}`,
        });
        if (!flags.merge) {
          process.stdout.write(stringify(config));
          return;
        }
        const path = defaultKubeconfigPath();
        const existing = existsSync(path)
          ? (parse(readFileSync(path, 'utf8')) as Partial<Kubeconfig> | null)
          : null;
        const merged = mergeKubeconfig(existing, config);
        writePrivate(path, stringify(merged));
        process.stdout.write(
          `added the context "${flags.context}" to ${path}` +
            (merged['current-context'] === flags.context
              ? ' (the current context)\n'
              : `; switch to it with: kubectl config use-context ${flags.context}\n`),
        );
      } catch (err) {
        process.stderr.write(`error: ${(err as Error).message}\n`);
        process.exit(1);
      }
    });
}
