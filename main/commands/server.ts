/** `kubelab server`: the control plane, headless. */
import { Option, type Command } from 'commander';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureUiToken } from '../bridge/uitoken.js';
import { DEFAULT_UI_LISTEN, defaultRendererDir, startUiServer, type UiServer } from '../bridge/websocket.js';
import { ControlPlane } from '../controlplane.js';
import { parseDuration } from './common.js';
import { DEFAULT_SERVER_LIMITS } from '../grpc/limits.js';
import { isLoopback, splitHostPort } from '../grpc/server.js';
import { createLogger } from '../logging.js';
import { agentAddress } from '../agentaddress.js';
import { DEFAULT_METRICS_LISTEN } from '../metrics.js';
import { localDialAddress } from '../serverrecord.js';
import { defaultDataDir, listenArg, onSignals, splitList, VERSION } from './common.js';
import { addControllerFlags, controllerConfig, count, type ControllerFlags } from './controllerflags.js';

interface ServerFlags extends ControllerFlags {
  dataDir: string;
  listen: string;
  store: 'sqlite' | 'etcd';
  etcdEndpoints?: string;
  etcdPrefix: string;
  encryptionKeyFile?: string;
  agentDir?: string;
  plaintext: boolean;
  tlsSan?: string;
  maxConnectionsPerAddress: number;
  controllers: string;
  controllerManager: boolean;
  metricsListen: string;
  eventTtl?: number;
  logLevel: string;
  ui: boolean;
  uiListen?: string;
}

/**
 * What the server prints once it runs: where it is, and the commands a newcomer needs next —
 * with this server's real address, port and files — to sign labctl in, add a lab machine and
 * reach the API from any gRPC tool.
 */
function banner(cp: ControlPlane, dataDir: string, flags: ServerFlags, guiUrl?: string): string {
  const { host } = splitHostPort(flags.listen);
  const listen = `${host.includes(':') ? `[${host}]` : host}:${cp.port}`;
  const dial = localDialAddress(listen);
  const tokenPath = cp.tokens.adminTokenPath;
  const caPath = cp.pki?.caPath;
  const agents = agentAddress(host, cp.port);
  const token = `"$(cat ${tokenPath})"`;
  const dataDirFlag = dataDir === resolve(defaultDataDir()) ? '' : ` --data-dir ${dataDir}`;
  return [
    `kubelab control plane ${VERSION} is running`,
    `  listening on    ${listen} (${cp.pki ? 'TLS' : 'plaintext, loopback only'})`,
    `  store           ${flags.store === 'sqlite' ? `sqlite at ${join(dataDir, 'state.db')}` : `etcd at ${flags.etcdEndpoints}`}`,
    ...(caPath ? [`  CA certificate  ${caPath}`] : []),
    `  admin token     ${tokenPath}`,
    `  controllers     ${cp.controllerManager ? cp.controllerManager.controllerNames.join(', ') : 'none (run kubelab controller-manager)'}`,
    ...(cp.metricsPort !== undefined
      ? [`  metrics         http://${splitHostPort(flags.metricsListen).host}:${cp.metricsPort}/metrics`]
      : []),
    ...(guiUrl
      ? [
          '',
          `GUI: ${guiUrl}`,
          `  (the link signs you in as admin: keep it to yourself; the token is in ${join(dataDir, 'ui.token')})`,
        ]
      : ['', 'GUI: start the server with --ui to open it in a browser (or run the desktop app: npm start)']),
    '',
    "Sign labctl in (kubectl's verbs for kubelab):",
    caPath
      ? `  npx labctl login https://${dial} --token ${token} --certificate-authority ${caPath}`
      : `  npx labctl login ${dial} --plaintext --token ${token}`,
    '  npx labctl get nodes',
    '',
    'Use kubectl, Helm or k9s (the Kubernetes API is served on the same port):',
    `  npx kubelab kubeconfig${dataDirFlag} --merge && kubectl get nodes`,
    '',
    ...(cp.pki
      ? [
          'Add a lab machine: make a join token here, then run the agent there (npm run build:agent builds it):',
          `  npx kubelab token create${dataDirFlag}`,
          `  KUBELAB_TOKEN='<the join token>' kubelab-agent --server ${agents.url}`,
          ...(agents.reachable
            ? []
            : [
                `  (this server listens on ${host} only: no other machine can reach it; to add machines, start it with --listen 0.0.0.0:${cp.port})`,
              ]),
        ]
      : ['Lab machines join a TLS server only: drop --plaintext to add them.']),
    '',
    'Any gRPC tool works too (server reflection is on), for example:',
    caPath
      ? `  npx buf curl --protocol grpc --cacert ${caPath} -H "authorization: Bearer $(cat ${tokenPath})" --reflect-header "authorization: Bearer $(cat ${tokenPath})" --list-methods https://${dial}`
      : `  npx buf curl --protocol grpc --http2-prior-knowledge -H "authorization: Bearer $(cat ${tokenPath})" --reflect-header "authorization: Bearer $(cat ${tokenPath})" --list-methods http://${dial}`,
    '',
    'Stop with Ctrl-C.',
  ].join('\n');
}

export function serverCommand(program: Command): void {
  const command = program
    .command('server')
    .description('run the control plane headless (store, apiserver, gRPC API, controllers)')
    .option('--data-dir <dir>', 'where the store, certificates and tokens live', defaultDataDir())
    .option(
      '--listen <host:port>',
      'the API address (gRPC and the Kubernetes REST API)',
      listenArg,
      '0.0.0.0:6443',
    )
    .addOption(
      new Option('--store <backend>', 'where objects are stored')
        .choices(['sqlite', 'etcd'])
        .default('sqlite'),
    )
    .option('--etcd-endpoints <urls>', 'comma-separated etcd client URLs (with --store etcd)')
    .option('--etcd-prefix <prefix>', 'key prefix in etcd', '/kubelab')
    .option(
      '--encryption-key-file <file>',
      'the keys Secrets are encrypted with at rest (default <data-dir>/secrets-encryption.key, made on first start; replicas on one etcd must share it)',
    )
    .option(
      '--agent-dir <dir>',
      'where the agent executables and install scripts that machines download come from (default: dist/agent, made by npm run build:agent)',
    )
    .option('--plaintext', 'serve without TLS (only on a loopback address, for development)', false)
    .option('--tls-san <names>', 'extra comma-separated names or addresses for the serving certificate')
    .option(
      '--max-connections-per-address <n>',
      'gRPC connections one client address may hold open at once, 0 for no limit (raise it when many agents reach this server from one NAT address: each holds two)',
      count,
      DEFAULT_SERVER_LIMITS.maxConnectionsPerAddress,
    )
    .option(
      '--controllers <list>',
      'controllers to run in-process: * for the defaults, name to add, -name to drop',
      '*',
    )
    .option(
      '--no-controller-manager',
      'run no controllers here (a separate `kubelab controller-manager` does)',
    )
    .option(
      '--metrics-listen <host:port>',
      'serve Prometheus /metrics here',
      listenArg,
      DEFAULT_METRICS_LISTEN,
    )
    .option(
      '--event-ttl <duration>',
      'how long Events are kept, e.g. 30m, 1h (as kube-apiserver --event-ttl; default 1h)',
      parseDuration,
    )
    .option('--log-level <level>', 'debug, info, warn or error', process.env.KUBELAB_LOG_LEVEL ?? 'info')
    .option(
      '--ui',
      'also serve the GUI for a browser, on a loopback address (build it first: npm run build)',
      false,
    )
    .option(
      '--ui-listen <host:port>',
      `where --ui serves the GUI (a loopback address; default ${DEFAULT_UI_LISTEN}); implies --ui`,
      listenArg,
    );
  addControllerFlags(command).action(async (flags: ServerFlags) => {
    const { host } = splitHostPort(flags.listen);
    if (flags.plaintext && !isLoopback(host)) {
      command.error(
        'error: --plaintext is only allowed on a loopback address (127.0.0.1, ::1, localhost); use --listen 127.0.0.1:6443 or drop --plaintext',
      );
    }
    if (flags.store === 'etcd' && !flags.etcdEndpoints) {
      command.error(
        'error: --store etcd needs --etcd-endpoints, e.g. --etcd-endpoints http://127.0.0.1:2379',
      );
    }
    const uiListen = flags.uiListen ?? (flags.ui ? DEFAULT_UI_LISTEN : undefined);
    if (uiListen && !isLoopback(splitHostPort(uiListen).host)) {
      command.error(
        `error: --ui-listen must be a loopback address (127.0.0.1, ::1, localhost): the GUI is served over plain HTTP; to reach it from another machine use ssh -L 6080:127.0.0.1:6080 <this machine>`,
      );
    }
    let config;
    try {
      config = controllerConfig(flags);
    } catch (err) {
      command.error(`error: ${(err as Error).message}`);
    }
    const logger = createLogger({ level: flags.logLevel });
    const dataDir = resolve(flags.dataDir);
    let cp: ControlPlane;
    try {
      cp = await ControlPlane.start({
        dataDir,
        listen: flags.listen,
        store: flags.store,
        etcdEndpoints: splitList(flags.etcdEndpoints),
        etcdPrefix: flags.etcdPrefix,
        ...(flags.encryptionKeyFile ? { encryptionKeyFile: resolve(flags.encryptionKeyFile) } : {}),
        ...(flags.agentDir ? { agentDir: resolve(flags.agentDir) } : {}),
        plaintext: flags.plaintext,
        tlsSans: splitList(flags.tlsSan),
        serverLimits: { maxConnectionsPerAddress: flags.maxConnectionsPerAddress },
        controllers: flags.controllerManager ? splitList(flags.controllers) : false,
        controllerConfig: config,
        metricsListen: flags.metricsListen,
        eventTtlMs: flags.eventTtl === undefined ? undefined : flags.eventTtl * 1000,
        logger,
      });
    } catch (err) {
      process.stderr.write(`kubelab server could not start: ${(err as Error).message}\n`);
      process.exit(1);
    }
    let ui: UiServer | undefined;
    if (uiListen) {
      try {
        ui = await startUiServer({
          controlPlane: cp,
          listen: uiListen,
          logger: logger.child({ component: 'ui' }),
        });
      } catch (err) {
        process.stderr.write(`kubelab server could not serve the GUI: ${(err as Error).message}\n`);
        await cp.stop();
        process.exit(1);
      }
    }
    const guiUrl = ui?.url(ensureUiToken(cp.tokens, dataDir));
    if (ui && !existsSync(join(defaultRendererDir(), 'index.html'))) {
      process.stderr.write(
        `warning: the GUI is not built (no ${defaultRendererDir()}): run \`npm run build\`; the page answers 503 until then\n`,
      );
    }
    process.stdout.write(banner(cp, dataDir, flags, guiUrl) + '\n');
    logger.info({ port: cp.port, dataDir, store: flags.store, ui: ui?.port }, 'control plane started');
    onSignals(async (signal) => {
      logger.info({ signal }, 'shutting down');
      await ui?.close();
      await cp.stop();
      logger.info('stopped; every acknowledged write is on disk');
    });
  });
}
