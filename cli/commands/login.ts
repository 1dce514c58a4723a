/**
 * `labctl login <server> --token <token>`: checks the server's CA and the token, then saves a
 * context and makes it current. The CA comes from --certificate-authority, or is fetched and
 * checked against a pin — the sha256 in a `K10<sha256>::…` token (as an agent's join checks
 * it) or --ca-hash — before the token is ever sent.
 */
import type { Command } from 'commander';
import { X509Certificate } from 'node:crypto';
import { ApiError } from '../../client/api/errors.js';
import { fetchClusterCA } from '../../client/grpc/cluster.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { caHashOf } from '../../client/util/tls.js';
import { globalFlags } from '../command.js';
import {
  configPath,
  encodeCa,
  loadConfig,
  readCaFile,
  saveConfig,
  upsertContext,
  type ContextEntry,
} from '../config.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { normalizeServer } from '../server.js';

interface LoginOptions {
  caHash?: string;
  name?: string;
  plaintext?: boolean;
}

const PINNED_TOKEN = /^K10([0-9a-f]{64})::(.+)$/;

/** A context name from the server: its host, and the port when it is not 6443. */
export function contextNameFor(server: string): string {
  const url = new URL(server);
  return url.port && url.port !== '6443' ? `${url.hostname}-${url.port}` : url.hostname;
}

/** "sha256:AB:CD…" (openssl's form) or hex: lower-case hex. */
function normalizeHash(h: string): string {
  return h
    .replace(/^sha256:/i, '')
    .replace(/:/g, '')
    .toLowerCase();
}

async function caFor(
  server: string,
  token: string,
  opts: LoginOptions,
  caFile: string | undefined,
): Promise<{ caPem?: string; bearer: string }> {
  const pinned = PINNED_TOKEN.exec(token.trim());
  const bearer = pinned ? pinned[2] : token.trim();
  if (opts.plaintext) return { bearer };
  if (caFile) return { caPem: readCaFile(caFile), bearer };
  const pin = opts.caHash ? normalizeHash(opts.caHash) : pinned?.[1];
  const caPem = await fetchClusterCA(server);
  const actual = caHashOf(caPem);
  if (!pin) {
    const subject = new X509Certificate(caPem).subject.replace(/\n/g, ', ');
    throw new CliError(
      `${server} presents a CA certificate (${subject}) with sha256 ${actual}.\nIf that is your cluster's CA (compare with the K10<sha256>:: part of \`kubelab token create\`, or \`openssl x509 -in <data-dir>/pki/ca.crt -noout -fingerprint -sha256\` on the control plane), log in again with --ca-hash ${actual}; or pass the CA file with --certificate-authority.`,
    );
  }
  if (pin !== actual) {
    throw new CliError(
      `the CA certificate of ${server} does not match the pinned hash (expected sha256 ${pin.slice(0, 16)}…, the server has ${actual.slice(0, 16)}…): check that the address is your control plane's; nothing was sent to it`,
    );
  }
  return { caPem, bearer };
}

async function login(io: Io, cmd: Command, serverArg: string, opts: LoginOptions): Promise<void> {
  const flags = globalFlags(cmd);
  const token = flags.token ?? io.env.KUBELAB_TOKEN;
  if (!token)
    throw new CliError(
      'a token is needed: pass --token <token> (create one on the control plane with `kubelab token create --role admin --name <you>`)',
    );
  const server = normalizeServer(serverArg);
  const { caPem, bearer } = await caFor(server, token, opts, flags.certificateAuthority);
  // Prove the token before saving it: a list any role may do.
  const client = grpcClient({
    server,
    token: bearer,
    caPem,
    plaintext: opts.plaintext,
    timeoutMs: flags.requestTimeout,
    retry: { attempts: 2 },
  });
  try {
    await client.list('Namespace', { limit: 1 });
  } catch (err) {
    if (err instanceof ApiError && err.reason === 'Unauthorized') {
      throw new CliError(
        `${server} refused the token (unknown, deleted or expired): create a new one on the control plane with \`kubelab token create --role admin --name <you>\``,
      );
    }
    throw err;
  } finally {
    client.close();
  }
  const path = configPath(io.env);
  const cfg = loadConfig(path);
  const name = opts.name ?? contextNameFor(server);
  const entry: ContextEntry = {
    name,
    server,
    ...(caPem ? { 'certificate-authority-data': encodeCa(caPem) } : {}),
    token: bearer,
    ...(flags.namespace ? { namespace: flags.namespace } : {}),
    ...(opts.plaintext ? { plaintext: true } : {}),
  };
  upsertContext(cfg, entry);
  cfg['current-context'] = name;
  saveConfig(path, cfg);
  io.out(`Logged in to ${server} as context "${name}" (saved in ${path}).\n`);
}

export function loginCommand(program: Command, io: Io): void {
  program
    .command('login')
    .description('check a server and a token, save them as a context and switch to it')
    .argument('<server>', 'the control plane, https://host:port (port 6443 if left out)')
    .option(
      '--ca-hash <sha256>',
      "the sha256 of the cluster's CA certificate, checked before the token is sent",
    )
    .option('--name <context>', 'the name of the context (default: the server host)')
    .option('--plaintext', 'a loopback development server started with --plaintext (no TLS)')
    .addHelpText(
      'after',
      `\nThe CA is taken from --certificate-authority, or fetched and checked against --ca-hash or
the K10<sha256>:: prefix of the token. Without either, login prints the server's CA hash
for you to compare and stops.

Examples:
  labctl login https://lab.local:6443 --token abcdef.0123456789abcdef0123456789abcdef --certificate-authority ca.crt
  labctl login lab.local --token "$(cat admin.token)" --ca-hash 3f2a…`,
    )
    .action(async (server: string, opts: LoginOptions, cmd: Command) => login(io, cmd, server, opts));
}
