/**
 * `kubelab` — the headless entry: `kubelab server` runs the same ControlPlane the desktop app
 * hosts. Banner to stdout, structured logs to stderr; SIGINT/SIGTERM stop it cleanly.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ControlPlane } from './controlplane.js';
import { createLogger } from './logging.js';
import { isLoopback, splitHostPort } from './grpc/server.js';

export const VERSION = '0.1.0';

export function defaultDataDir(): string {
  return process.env.KUBELAB_DATA_DIR ?? join(homedir(), '.kubelab', 'server');
}

function listenArg(v: string): string {
  try {
    splitHostPort(v);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return v;
}

function banner(cp: ControlPlane, dataDir: string, store: string): string {
  const { host } = splitHostPort(cp.options.listen ?? '0.0.0.0:6443');
  const reach = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const address = `${reach.includes(':') ? `[${reach}]` : reach}:${cp.port}`;
  const tokenPath = cp.tokens.adminTokenPath;
  const lines = [
    `kubelab control plane ${VERSION} is running`,
    `  listening on    ${host}:${cp.port} (${cp.pki ? 'TLS' : 'plaintext, loopback only'})`,
    `  store           ${store === 'sqlite' ? `sqlite at ${join(dataDir, 'state.db')}` : `etcd at ${cp.options.etcdEndpoints?.join(',')}`}`,
    ...(cp.pki ? [`  CA certificate  ${cp.pki.caPath}`] : []),
    `  admin token     ${tokenPath}`,
    '',
    'Connect with any gRPC tool (server reflection is on), for example:',
    cp.pki
      ? `  grpcurl -cacert ${cp.pki.caPath} -authority localhost -H "authorization: Bearer $(cat ${tokenPath})" ${address} list`
      : `  grpcurl -plaintext -H "authorization: Bearer $(cat ${tokenPath})" ${address} list`,
    `  grpcurl ... -d '{"kind":"Namespace"}' ${address} kubelab.v1.Resources/List`,
    '',
    'Stop with Ctrl-C.',
  ];
  return lines.join('\n');
}

export function buildProgram(): Command {
  const program = new Command('kubelab')
    .description('kubelab: a Kubernetes-style control plane for the home lab')
    .version(VERSION)
    .showHelpAfterError();

  program
    .command('server')
    .description('run the control plane headless (store, apiserver, gRPC API)')
    .option('--data-dir <dir>', 'where the store, certificates and tokens live', defaultDataDir())
    .option('--listen <host:port>', 'gRPC address', listenArg, '0.0.0.0:6443')
    .addOption(
      new Option('--store <backend>', 'where objects are stored')
        .choices(['sqlite', 'etcd'])
        .default('sqlite'),
    )
    .option('--etcd-endpoints <urls>', 'comma-separated etcd client URLs (with --store etcd)')
    .option('--etcd-prefix <prefix>', 'key prefix in etcd', '/kubelab')
    .option('--plaintext', 'serve without TLS (only on a loopback address, for development)', false)
    .option('--tls-san <names>', 'extra comma-separated names or addresses for the serving certificate')
    .option('--log-level <level>', 'debug, info, warn or error', process.env.KUBELAB_LOG_LEVEL ?? 'info')
    .action(
      async (opts: {
        dataDir: string;
        listen: string;
        store: 'sqlite' | 'etcd';
        etcdEndpoints?: string;
        etcdPrefix: string;
        plaintext: boolean;
        tlsSan?: string;
        logLevel: string;
      }) => {
        const { host } = splitHostPort(opts.listen);
        if (opts.plaintext && !isLoopback(host)) {
          program.error(
            `error: --plaintext is only allowed on a loopback address (127.0.0.1, ::1, localhost); use --listen 127.0.0.1:6443 or drop --plaintext`,
          );
        }
        if (opts.store === 'etcd' && !opts.etcdEndpoints)
          program.error(
            'error: --store etcd needs --etcd-endpoints, e.g. --etcd-endpoints http://127.0.0.1:2379',
          );
        const logger = createLogger({ level: opts.logLevel });
        const dataDir = resolve(opts.dataDir);
        let cp: ControlPlane;
        try {
          cp = await ControlPlane.start({
            dataDir,
            listen: opts.listen,
            store: opts.store,
            etcdEndpoints: opts.etcdEndpoints
              ?.split(',')
              .map((s) => s.trim())
              .filter(Boolean),
            etcdPrefix: opts.etcdPrefix,
            plaintext: opts.plaintext,
            tlsSans: opts.tlsSan
              ?.split(',')
              .map((s) => s.trim())
              .filter(Boolean),
            logger,
          });
        } catch (err) {
          process.stderr.write(`kubelab server could not start: ${(err as Error).message}\n`);
          process.exit(1);
        }
        process.stdout.write(banner(cp, dataDir, opts.store) + '\n');
        logger.info({ port: cp.port, dataDir, store: opts.store }, 'control plane started');
        let stopping = false;
        const shutdown = (signal: string) => {
          if (stopping) return;
          stopping = true;
          logger.info({ signal }, 'shutting down');
          cp.stop().then(
            () => {
              logger.info('stopped; every acknowledged write is on disk');
              process.exit(0);
            },
            (err) => {
              logger.error({ err: (err as Error).message }, 'shutdown failed');
              process.exit(1);
            },
          );
        };
        process.on('SIGINT', () => shutdown('SIGINT'));
        process.on('SIGTERM', () => shutdown('SIGTERM'));
      },
    );

  return program;
}

export async function main(argv: string[]): Promise<void> {
  await buildProgram().parseAsync(argv);
}
