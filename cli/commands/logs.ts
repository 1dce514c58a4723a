/**
 * `labctl logs POD [-c CONTAINER]`: a container's log relayed from its node's agent; -f follows
 * it until interrupted, --tail, --previous, --timestamps, --since and --limit-bytes as kubectl.
 */
import type { Command } from 'commander';
import { verb } from '../command.js';
import { parseCount, parseDurationSeconds } from '../duration.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { kindOrFail } from '../resources.js';
import type { Session } from '../session.js';

interface LogsOptions {
  container?: string;
  follow?: boolean;
  tail?: number;
  previous?: boolean;
  timestamps?: boolean;
  since?: number;
  sinceTime?: string;
  limitBytes?: number;
}

function podName(arg: string): string {
  if (!arg.includes('/')) return arg;
  const [type, name] = arg.split('/');
  if (kindOrFail(type).kind !== 'Pod')
    throw new CliError(`logs are read from pods: use pod/NAME, not ${arg}`);
  return name;
}

async function logs(
  session: Session,
  opts: LogsOptions,
  podArg: string,
  containerArg: string | undefined,
): Promise<void> {
  const io = session.io;
  const client = session.client();
  const name = podName(podArg);
  const namespace = session.namespace;
  let container = opts.container ?? containerArg;
  if (!container) {
    const pod = await client.get('Pod', name, { namespace });
    const names = (pod.spec?.containers ?? []).map((c) => c.name ?? '');
    container = names[0];
    if (names.length > 1) io.err(`Defaulted container "${container}" out of: ${names.join(', ')}\n`);
  }
  const stream = await client.logs(namespace, name, {
    container,
    follow: opts.follow,
    previous: opts.previous,
    timestamps: opts.timestamps,
    ...(opts.tail !== undefined && opts.tail >= 0 ? { tailLines: opts.tail } : {}),
    ...(opts.since !== undefined ? { sinceSeconds: opts.since } : {}),
    ...(opts.sinceTime ? { sinceTime: opts.sinceTime } : {}),
    ...(opts.limitBytes !== undefined ? { limitBytes: opts.limitBytes } : {}),
  });
  for await (const chunk of stream) io.out(chunk);
}

export function logsCommand(program: Command, io: Io): void {
  program
    .command('logs')
    .description("print a container's log (-f to follow it)")
    .argument('<pod>', 'the pod (NAME or pod/NAME)')
    .argument('[container]', 'the container (or -c)')
    .option('-c, --container <name>', 'the container; the first one when left out')
    .option('-f, --follow', 'keep printing new lines until interrupted')
    .option('--tail <lines>', 'only the last lines', (v) => (v === '-1' ? -1 : parseCount(v)))
    .option('-p, --previous', "the container's previous instance (before its last restart)")
    .option('--timestamps', 'prefix each line with its RFC 3339 time')
    .option('--since <duration>', 'only lines newer than this, e.g. 5m', parseDurationSeconds)
    .option('--since-time <time>', 'only lines at or after this RFC 3339 time')
    .option('--limit-bytes <bytes>', 'stop after this many bytes', parseCount)
    .addHelpText('after', '\nExamples:\n  labctl logs web\n  labctl logs -f web -c app --tail 20')
    .action(verb<[string, string | undefined], LogsOptions>(io, (s, o, pod, c) => logs(s, o, pod, c)));
}
