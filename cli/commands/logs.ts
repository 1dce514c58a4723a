/**
 * `labctl logs (POD | TYPE/NAME) [CONTAINER]` and `labctl logs -l SELECTOR`: containers' logs
 * relayed from their nodes' agents, as kubectl prints them. ds/NAME reads one pod of the
 * DaemonSet (or all with --all-pods); -l reads every matching pod (the last 10 lines of each
 * unless --tail says otherwise); -f follows, several logs at once up to --max-log-requests;
 * --prefix names each line's pod and container; --tail, --previous, --timestamps, --since,
 * --since-time and --limit-bytes as kubectl.
 */
import type { Command } from 'commander';
import type { LogsOptions as ReadOptions } from '../../client/client.js';
import { verb } from '../command.js';
import { parseCount, parseDurationSeconds } from '../duration.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { relayLogs } from '../logs/relay.js';
import { logSources } from '../logs/sources.js';
import type { Session } from '../session.js';

interface LogsOptions {
  container?: string;
  selector?: string;
  allContainers?: boolean;
  allPods?: boolean;
  prefix?: boolean;
  maxLogRequests: number;
  ignoreErrors?: boolean;
  follow?: boolean;
  tail?: number;
  previous?: boolean;
  timestamps?: boolean;
  since?: number;
  sinceTime?: string;
  limitBytes?: number;
}

const USAGE = 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]';
/** kubectl reads only the last lines of each pod a selector matches, unless --tail is given. */
const SELECTOR_TAIL = 10;
const MAX_LOG_REQUESTS = 5;

function checkArguments(
  opts: LogsOptions,
  resource: string | undefined,
  container: string | undefined,
): void {
  if (!resource && opts.selector === undefined) {
    throw new CliError(
      `expected '${USAGE}'.\nPOD or TYPE/NAME is a required argument for the logs command, or select pods with -l, e.g. -l app=web (see \`labctl logs --help\`)`,
    );
  }
  if (resource && opts.selector !== undefined) {
    throw new CliError('only a selector (-l) or a POD name is allowed: drop one of them');
  }
  if (opts.container && container) {
    throw new CliError('only one of -c or an inline [CONTAINER] arg is allowed: name the container once');
  }
  const named = opts.container ?? container;
  if (opts.allContainers && named) {
    throw new CliError(
      `--all-containers=true should not be specified with container name ${named}: drop one of them`,
    );
  }
  if (opts.since !== undefined && opts.sinceTime) {
    throw new CliError(
      'at most one of `sinceTime` or `sinceSeconds` may be specified: drop --since or --since-time',
    );
  }
}

function readOptions(opts: LogsOptions): ReadOptions {
  const tail = opts.tail ?? (opts.selector !== undefined ? SELECTOR_TAIL : -1);
  return {
    follow: opts.follow,
    previous: opts.previous,
    timestamps: opts.timestamps,
    ...(tail >= 0 ? { tailLines: tail } : {}),
    ...(opts.since !== undefined ? { sinceSeconds: opts.since } : {}),
    ...(opts.sinceTime ? { sinceTime: opts.sinceTime } : {}),
    ...(opts.limitBytes !== undefined ? { limitBytes: opts.limitBytes } : {}),
  };
}

async function logs(
  session: Session,
  opts: LogsOptions,
  resource: string | undefined,
  containerArg: string | undefined,
): Promise<void> {
  checkArguments(opts, resource, containerArg);
  const io = session.io;
  const client = session.client();
  const sources = await logSources(io, client, session.namespace, {
    resource,
    selector: opts.selector,
    container: opts.container ?? containerArg,
    allContainers: opts.allContainers,
    allPods: opts.allPods,
  });
  const parallel = opts.follow === true && sources.length > 1;
  if (parallel && sources.length > opts.maxLogRequests) {
    throw new CliError(
      `you are attempting to follow ${sources.length} log streams, but maximum allowed concurrency is ${opts.maxLogRequests}, use --max-log-requests to increase the limit`,
    );
  }
  const read = readOptions(opts);
  await relayLogs(io, sources, (s) => client.logs(s.namespace, s.pod, { ...read, container: s.container }), {
    parallel,
    prefix: opts.prefix === true || opts.allPods === true,
    ignoreErrors: opts.ignoreErrors === true,
  });
}

export function logsCommand(program: Command, io: Io): void {
  program
    .command('logs')
    .description(
      "print a container's log (-f to follow it); a DaemonSet's pod's, or those of every pod -l selects",
    )
    .argument('[pod]', 'the pod (NAME or pod/NAME), or a DaemonSet (ds/NAME)')
    .argument('[container]', 'the container (or -c)')
    .option('-c, --container <name>', 'the container; the first one when left out')
    .option('-l, --selector <selector>', 'every pod this label selector matches (instead of a name)')
    .option('--all-containers', "every container's log in the pod(s)")
    .option('--all-pods', 'every pod of a DaemonSet, not one of them (sets --prefix)')
    .option('--prefix', 'start each line with its source, [pod/NAME/CONTAINER]')
    .option(
      '--max-log-requests <n>',
      'how many logs -f may follow at once with -l, --all-pods or --all-containers',
      parseCount,
      MAX_LOG_REQUESTS,
    )
    .option('--ignore-errors', 'report a log that fails and go on with the others')
    .option('-f, --follow', 'keep printing new lines until interrupted')
    .option('--tail <lines>', 'only the last lines (-1: all; with -l the default is 10)', (v) =>
      v === '-1' ? -1 : parseCount(v),
    )
    .option('-p, --previous', "the container's previous instance (before its last restart)")
    .option('--timestamps', 'prefix each line with its RFC 3339 time')
    .option('--since <duration>', 'only lines newer than this, e.g. 5m', parseDurationSeconds)
    .option('--since-time <time>', 'only lines at or after this RFC 3339 time')
    .option('--limit-bytes <bytes>', 'stop after this many bytes', parseCount)
    .addHelpText(
      'after',
      `
Examples:
  labctl logs web
  labctl logs -f web -c app --tail 20
  labctl logs ds/exporter                  # one pod of the DaemonSet
  labctl logs ds/exporter --all-pods -f    # every pod of it, each line prefixed
  labctl logs -l app=exporter --prefix     # the last 10 lines of every matching pod`,
    )
    .action(
      verb<[string | undefined, string | undefined], LogsOptions>(io, (s, o, pod, c) => logs(s, o, pod, c)),
    );
}
