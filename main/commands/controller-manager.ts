/** `kubelab controller-manager`: the controllers as their own process, under leader election. */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { grpcClient } from '../../client/grpc/transport.js';
import { ControllerManager } from '../controllers/manager.js';
import { createLogger } from '../logging.js';
import { startMetricsServer } from '../metrics.js';
import { listenArg, onSignals, splitList, VERSION } from './common.js';
import { addControllerFlags, controllerConfig, type ControllerFlags } from './controllerflags.js';

interface ControllerManagerFlags extends ControllerFlags {
  server: string;
  token?: string;
  tokenFile?: string;
  caFile?: string;
  plaintext: boolean;
  controllers: string;
  leaderElect: boolean;
  identity: string;
  metricsListen?: string;
  logLevel: string;
}

export function controllerManagerCommand(program: Command): void {
  const command = program
    .command('controller-manager')
    .description('run the controllers against a control plane, under leader election')
    .requiredOption('--server <address>', 'the control plane, e.g. https://10.0.0.2:6443')
    .option(
      '--token <token>',
      'a bearer token with the admin role (or KUBELAB_TOKEN)',
      process.env.KUBELAB_TOKEN,
    )
    .option('--token-file <path>', 'read the token from this file')
    .option('--ca-file <path>', "the cluster CA certificate (the server's <data-dir>/pki/ca.crt)")
    .option('--plaintext', 'connect without TLS (loopback servers started with --plaintext)', false)
    .option('--controllers <list>', 'controllers to run: * for the defaults, name to add, -name to drop', '*')
    .option(
      '--no-leader-elect',
      'run without leader election (only when this is the only controller manager)',
    )
    .option('--identity <id>', 'this replica in leader election', `${hostname()}_${process.pid}`)
    .option('--metrics-listen <host:port>', 'serve Prometheus /metrics here', listenArg)
    .option('--log-level <level>', 'debug, info, warn or error', process.env.KUBELAB_LOG_LEVEL ?? 'info');
  addControllerFlags(command).action(async (flags: ControllerManagerFlags) => {
    const token = flags.tokenFile ? readFileSync(flags.tokenFile, 'utf8').trim() : flags.token;
    if (!token) command.error('error: a token is needed: --token, --token-file or KUBELAB_TOKEN');
    if (!flags.plaintext && !flags.caFile) {
      command.error(
        "error: --ca-file is needed for TLS (the server's <data-dir>/pki/ca.crt), or --plaintext for a loopback server",
      );
    }
    const logger = createLogger({ level: flags.logLevel, name: 'kubelab-controller-manager' });
    // The controllers' timers do not hold the process open (tests need that); this does.
    setInterval(() => undefined, 1 << 30);
    const client = grpcClient({
      server: flags.server,
      token: token!,
      caPem: flags.caFile ? readFileSync(flags.caFile, 'utf8') : undefined,
      plaintext: flags.plaintext,
    });
    const metrics = new Registry();
    collectDefaultMetrics({ register: metrics });
    let manager: ControllerManager;
    try {
      manager = new ControllerManager({
        client,
        logger,
        controllers: splitList(flags.controllers),
        config: controllerConfig(flags),
        metrics,
        leaderElection: flags.leaderElect ? { identity: flags.identity } : undefined,
        onLostLeadership: () => {
          logger.error('lost leadership; exiting so a fresh start rejoins the election');
          process.exit(1);
        },
      });
    } catch (err) {
      command.error(`error: ${(err as Error).message}`);
    }
    const metricsServer = flags.metricsListen
      ? await startMetricsServer(metrics, flags.metricsListen)
      : undefined;
    await manager!.start();
    const election = flags.leaderElect ? ` (leader election as ${flags.identity})` : '';
    process.stdout.write(
      `kubelab controller-manager ${VERSION}: ${manager!.controllerNames.join(', ')} against ${flags.server}${election}\n`,
    );
    onSignals(async () => {
      await manager.stop();
      await metricsServer?.close();
      client.close();
    });
  });
}
