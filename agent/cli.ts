/**
 * `kubelab-agent`: joins this machine to a kubelab cluster and reports its health; with
 * --hollow N, runs N simulated nodes instead (tests, benchmarks).
 */
import { parsePodUser } from './pods/users.js';
import { Command, InvalidArgumentError, Option } from 'commander';
import { execFileSync } from 'node:child_process';
import { homedir, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { isApiError } from '../client/api/errors.js';
import type { Client } from '../client/client.js';
import { failoverClient } from '../client/grpc/transport.js';
import { NodeAgent } from './agent.js';
import {
  AGENT_VERSION,
  DEFAULT_EVICTION_HARD,
  defaultConfig,
  parseDurationMs,
  parseEvictionHard,
  parseLabels,
  parseResourceList,
  parseTaints,
  type AgentConfig,
} from './config.js';
import {
  credentialsPath,
  loadCredentials,
  nodePasswordPath,
  obtainCredentials,
  type ObtainOptions,
  type StoredCredentials,
} from './credentials.js';
import { lockDataDir } from './datadirlock.js';
import { machineRuntimes } from './pods/runtimes.js';
import { HollowFleet } from './hollow.js';
import { createAgentLogger } from './logger.js';
import { RESTART_SERVICE, runsAsExecutable, upgradeExecutable } from './upgrade.js';
import { defaultMachineReader } from './machine/index.js';
import { checkNodeIP } from './nodeip.js';

interface AgentFlags {
  server: string[];
  token?: string;
  dataDir: string;
  nodeName: string;
  nodeIp?: string;
  nodeLabels?: string;
  registerWithTaints?: string;
  evictionHard: string;
  systemReserved?: string;
  kubeReserved?: string;
  maxPods: number;
  nodeStatusUpdateFrequency: string;
  nodeStatusReportFrequency: string;
  evictionPressureTransitionPeriod: string;
  nodeLeaseDuration: string;
  hollow?: number;
  hollowPrefix: string;
  hollowPods: boolean;
  logLevel: string;
  force: boolean;
  podUser?: string;
  refuseRootPods: boolean;
  syncFrequency: string;
}

function defaultDataDir(): string {
  return process.getuid?.() === 0 ? '/var/lib/kubelab-agent' : join(homedir(), '.kubelab', 'agent');
}

/** The machine's hostname as a node name: lowercase, dots kept, nothing a name may not hold. */
export function defaultNodeName(): string {
  return hostname()
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
}

function positiveInt(flag: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0)
      throw new InvalidArgumentError(`${flag} must be a positive whole number`);
    return n;
  };
}

function collect(v: string, previous: string[]): string[] {
  return [
    ...previous,
    ...v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ];
}

/** Turns flags into the agent's settings; every mistake names its flag. */
export function configFromFlags(flags: AgentFlags, nodeName: string): AgentConfig {
  const config = defaultConfig(nodeName);
  config.labels = flags.nodeLabels ? parseLabels(flags.nodeLabels) : {};
  config.taints = flags.registerWithTaints ? parseTaints(flags.registerWithTaints) : [];
  config.evictionHard = parseEvictionHard(flags.evictionHard);
  config.reserved = {
    ...(flags.kubeReserved ? parseResourceList(flags.kubeReserved, '--kube-reserved') : {}),
    ...(flags.systemReserved ? parseResourceList(flags.systemReserved, '--system-reserved') : {}),
  };
  config.maxPods = flags.maxPods;
  config.statusUpdateMs = parseDurationMs(flags.nodeStatusUpdateFrequency, '--node-status-update-frequency');
  config.statusReportMs = parseDurationMs(flags.nodeStatusReportFrequency, '--node-status-report-frequency');
  config.pressureTransitionMs = parseDurationMs(
    flags.evictionPressureTransitionPeriod,
    '--eviction-pressure-transition-period',
  );
  const leaseMs = parseDurationMs(flags.nodeLeaseDuration, '--node-lease-duration');
  config.leaseDurationSeconds = Math.max(1, Math.round(leaseMs / 1000));
  config.leaseRenewMs = Math.max(1000, leaseMs / 4);
  if (flags.nodeIp) config.nodeIP = flags.nodeIp;
  if (flags.podUser) config.podUser = parsePodUser(flags.podUser);
  config.refuseRootPods = flags.refuseRootPods;
  config.syncFrequencyMs = parseDurationMs(flags.syncFrequency, '--sync-frequency');
  return config;
}

/** The agent's client: its writes and gets on one Calls stream (its heartbeats every 10 s). */
const agentClient = (creds: StoredCredentials): Client =>
  failoverClient(creds.servers, { token: creds.token, caPem: creds.caPem, callStream: true });

/**
 * A client with this node's credential. A stored credential is checked once: if the control
 * plane refuses it (the Node was deleted), join again with --token if there is one.
 */
async function connect(
  join: Omit<ObtainOptions, 'rejoin'>,
): Promise<{ client: Client; creds: StoredCredentials }> {
  const { path, joinToken: token } = join;
  let creds = await obtainCredentials(join);
  let client = agentClient(creds);
  try {
    await client.get('Namespace', 'default');
  } catch (err) {
    if (!isApiError(err, 'Unauthorized')) return { client, creds }; // unreachable now: the loops will retry
    client.close();
    if (!token) {
      throw new Error(
        `the stored credential in ${path} was refused (was the Node deleted?): join again with --token <a new join token>`,
      );
    }
    creds = await obtainCredentials({ ...join, rejoin: true });
    client = agentClient(creds);
  }
  return { client, creds };
}

export function buildAgentProgram(): Command {
  const program = new Command('kubelab-agent')
    .description(
      'Joins this machine to a kubelab cluster: registers its Node, reports its health (memory, disk and PID pressure), renews its heartbeat lease and sends usage metrics.',
    )
    .version(AGENT_VERSION)
    // `kubelab-agent upgrade --data-dir …` is the subcommand's own option, not the agent's.
    .enablePositionalOptions()
    .showHelpAfterError()
    .option(
      '--server <url>',
      'the control plane, e.g. https://10.0.0.2:6443 (repeat, or comma-separate, for replicas: the agent fails over)',
      collect,
      [],
    )
    .addOption(
      new Option(
        '--token <token>',
        'a join token from `kubelab token create` (only needed the first time); prefer the KUBELAB_TOKEN environment variable: a flag shows in `ps` to every user of this machine',
      ).env('KUBELAB_TOKEN'),
    )
    .addOption(
      new Option('--data-dir <dir>', 'where the credential, state and pod logs live (one agent per folder)')
        .default(defaultDataDir())
        .env('KUBELAB_AGENT_DATA_DIR'),
    )
    .addOption(
      new Option('--node-name <name>', 'the Node name').default(
        defaultNodeName(),
        `this machine's hostname, "${defaultNodeName()}"`,
      ),
    )
    .option(
      '--node-ip <ip>',
      "the address to publish as InternalIP, one of this machine's (default: the first non-loopback IPv4)",
    )
    .option(
      '--node-labels <k=v,...>',
      'labels to register the node with (not in the kubernetes.io or k8s.io namespaces, except those the node may set)',
    )
    .option(
      '--register-with-taints <k=v:Effect,...>',
      'taints to register the node with, e.g. dedicated=gpu:NoSchedule',
    )
    .option(
      '--eviction-hard <spec>',
      'pressure thresholds (memory.available, nodefs.available, nodefs.inodesFree, pid.available), quantities or percentages',
      DEFAULT_EVICTION_HARD,
    )
    .option(
      '--system-reserved <cpu=..,memory=..>',
      'resources kept for the system, subtracted from allocatable',
    )
    .option(
      '--kube-reserved <cpu=..,memory=..>',
      'resources kept for kubelab itself, subtracted from allocatable',
    )
    .option('--max-pods <n>', 'pods this node takes at most', positiveInt('--max-pods'), 110)
    .option('--node-status-update-frequency <duration>', 'how often status is computed', '10s')
    .option(
      '--node-status-report-frequency <duration>',
      'how often status is written even when nothing changed',
      '5m',
    )
    .option(
      '--eviction-pressure-transition-period <duration>',
      'how long a pressure condition stays after its signal clears',
      '5m',
    )
    .option(
      '--node-lease-duration <duration>',
      'the heartbeat lease duration (renewed every quarter of it)',
      '40s',
    )
    .option(
      '--hollow <n>',
      'run n simulated nodes instead of reporting this machine (tests, benchmarks)',
      positiveInt('--hollow'),
    )
    .option(
      '--hollow-prefix <prefix>',
      'hollow nodes are named <prefix>-0, <prefix>-1, …',
      `hollow-${defaultNodeName()}`,
    )
    .option('--no-hollow-pods', 'hollow nodes only report status; they do not run the pods bound to them')
    .option(
      '--pod-user <user>',
      'who process containers run as when their pod names no runAsUser: a user name or UID[:GID] (the install script makes and passes "kubelab-pods"); default: the agent\'s own user',
    )
    .option(
      '--refuse-root-pods',
      'start no container as root: pods must set a non-zero runAsUser (or get one from --pod-user)',
      false,
    )
    .option(
      '--sync-frequency <duration>',
      'how often the files of mounted ConfigMaps and Secrets are brought up to date',
      '1m',
    )
    .option(
      '--force',
      'when joining, take the node name over even if another machine holds it (its credential is revoked): for a machine that replaces one whose Node you did not delete',
      false,
    )
    .addOption(
      new Option('--log-level <level>', 'debug, info, warn or error')
        .default('info')
        .env('KUBELAB_LOG_LEVEL'),
    )
    .addHelpText(
      'after',
      `
First start (on the lab machine), the token in the environment so that \`ps\` does not show it:
  KUBELAB_TOKEN='K10<hash>::<id>.<secret>' kubelab-agent --server https://10.0.0.2:6443
A control plane that does not answer yet is waited for; a refused token ends it at once.
Later starts need no token: the credential is kept in --data-dir (0600), with this machine's
node password, which lets only this machine join again under its node name. A join under a
name another machine holds is refused: delete that Node (labctl delete node <name>), pick
another --node-name, or pass --force.
Deleting the Node revokes its credential; join again with a new token.`,
    )
    .action(async (flags: AgentFlags) => {
      const logger = createAgentLogger(flags.logLevel);
      // The loops' timers do not hold the process open (tests need that); this does.
      const keepAlive = setInterval(() => undefined, 1 << 30);
      const dataDir = resolve(flags.dataDir);
      let unlock: (() => void) | undefined;
      const exit = (code: number) => {
        unlock?.();
        process.exit(code);
      };
      try {
        const servers = flags.server.map((s) => (/^[a-z]+:\/\//.test(s) ? s : `https://${s}`));
        const onWaiting = (message: string) => process.stderr.write(`kubelab-agent: ${message}\n`);
        if (flags.hollow) {
          configFromFlags(flags, 'check');
          unlock = lockDataDir(dataDir);
          const fleet = new HollowFleet({
            count: flags.hollow,
            prefix: flags.hollowPrefix,
            servers,
            dataDir,
            joinToken: flags.token,
            force: flags.force,
            config: (name) => configFromFlags(flags, name),
            logger,
            pods: flags.hollowPods,
            onWaiting,
          });
          const stopFleet = () => void fleet.stop().then(() => exit(0));
          process.on('SIGINT', stopFleet);
          process.on('SIGTERM', stopFleet);
          await fleet.start();
          process.stdout.write(
            `kubelab-agent ${AGENT_VERSION}: ${flags.hollow} hollow nodes (${flags.hollowPrefix}-0 …) running\n`,
          );
          return;
        }
        const config = configFromFlags(flags, flags.nodeName);
        // Before joining, as the kubelet refuses a --node-ip that is not this machine's: a
        // wrong one would be published as the node's address. (Hollow nodes have made-up
        // addresses of their own, so they are not checked above.)
        if (config.nodeIP) checkNodeIP(config.nodeIP);
        unlock = lockDataDir(dataDir);
        const { client, creds } = await connect({
          path: credentialsPath(dataDir),
          passwordPath: nodePasswordPath(dataDir),
          servers,
          joinToken: flags.token,
          nodeName: config.nodeName,
          force: flags.force,
          onWaiting,
        });
        const agent = new NodeAgent({
          client,
          reader: defaultMachineReader(dataDir),
          config,
          logger,
          pods: await machineRuntimes({ dataDir, logger }),
          tunnel: { servers: creds.servers, token: creds.token, caPem: creds.caPem },
          selfUpgrade: { server: creds.servers[0], caPem: creds.caPem },
        });
        agent.start();
        process.stdout.write(
          `kubelab-agent ${AGENT_VERSION}: node ${config.nodeName} reporting to ${(servers.length ? servers : loadCredentials(credentialsPath(dataDir))!.servers).join(', ')}\n`,
        );
        const stop = () => void agent.stop().then(() => exit(0));
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      } catch (err) {
        clearInterval(keepAlive);
        process.stderr.write(`kubelab-agent: ${(err as Error).message}\n`);
        exit(1);
      }
    });
  program
    .command('upgrade')
    .description(
      "replace this agent's executable with the one its control plane serves (checked against its checksum, over TLS pinned to the cluster CA), then restart it under its service manager; its pods keep running",
    )
    .addOption(
      new Option('--data-dir <dir>', "the agent's data folder (where its credential is)")
        .default(defaultDataDir())
        .env('KUBELAB_AGENT_DATA_DIR'),
    )
    .option('--force', 'replace it even when the control plane serves the same version', false)
    .action(async (flags: { dataDir: string; force: boolean }) => {
      const say = (line: string) => process.stdout.write(`kubelab-agent upgrade: ${line}\n`);
      try {
        const creds = loadCredentials(credentialsPath(resolve(flags.dataDir)));
        if (!creds)
          throw new Error(
            `no credential in ${resolve(flags.dataDir)}: this agent has not joined a control plane (pass --data-dir where it keeps its files)`,
          );
        if (!runsAsExecutable())
          throw new Error(
            'this agent runs from sources under Node, not as the kubelab-agent executable: update the sources instead (git pull), or install the executable (see the README)',
          );
        const result = await upgradeExecutable({
          server: creds.servers[0],
          caPem: creds.caPem,
          executable: process.execPath,
          current: AGENT_VERSION,
          force: flags.force,
          log: say,
        });
        if (!result.upgraded) {
          say(`already at ${result.to}, the control plane's version: nothing to do`);
          return;
        }
        say(`replaced ${process.execPath}: ${result.from} → ${result.to}`);
        say(restartInstalledAgent());
      } catch (err) {
        process.stderr.write(`kubelab-agent upgrade: ${(err as Error).message}\n`);
        process.exit(1);
      }
    });
  return program;
}

/** Restarts the installed agent's service, if there is one; says what it did or what to do. */
function restartInstalledAgent(): string {
  const tryRun = (argv: string[]) => {
    try {
      execFileSync(argv[0], argv.slice(1), { stdio: 'ignore', timeout: 60_000 });
      return true;
    } catch {
      return false;
    }
  };
  if (process.platform === 'linux' && tryRun(['systemctl', 'is-active', '--quiet', 'kubelab-agent'])) {
    if (tryRun([...RESTART_SERVICE.systemd])) return 'restarted the kubelab-agent service';
  }
  if (process.platform === 'darwin' && tryRun([...RESTART_SERVICE.launchd]))
    return 'restarted the io.kubelab.agent daemon';
  return 'no kubelab-agent service runs here: restart the agent yourself to run the new version (its pods keep running)';
}

export async function main(argv: string[]): Promise<void> {
  await buildAgentProgram().parseAsync(argv);
}
