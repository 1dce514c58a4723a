/**
 * `labctl` — kubelab's command-line client, with kubectl's verbs and habits. Builds the
 * commander tree, runs it, prints failures the kubectl way and returns the exit code.
 */
import { Command, CommanderError, Option } from 'commander';
import { applyCommand } from './commands/apply.js';
import { completionCommand } from './commands/completion.js';
import { configCommand } from './commands/config.js';
import { cordonCommands } from './commands/cordon.js';
import { createCommand } from './commands/create.js';
import { deleteCommand } from './commands/delete.js';
import { describeCommand } from './commands/describe.js';
import { drainCommand } from './commands/drain.js';
import { editCommand } from './commands/edit.js';
import { getCommand } from './commands/get.js';
import { labelCommands } from './commands/label.js';
import { loginCommand } from './commands/login.js';
import { logsCommand } from './commands/logs.js';
import { rolloutCommand } from './commands/rollout.js';
import { scaleCommand } from './commands/scale.js';
import { taintCommand } from './commands/taint.js';
import { tokenCommand } from './commands/token.js';
import { topCommand } from './commands/top.js';
import { versionCommand } from './commands/version.js';
import { parseDurationMs } from './duration.js';
import { AlreadyReported, EXIT_ERROR, EXIT_OK, formatError } from './errors.js';
import { processIo, type Io } from './io.js';

const EPILOG = `
Configuration:
  Contexts live in ~/.kubelab/config (or $KUBELAB_CONFIG): \`labctl login\` writes one,
  \`labctl config get-contexts|use-context|set-context\` manage them. Flags override
  environment variables, which override the current context:
    --context      KUBELAB_CONTEXT      which context to use
    --server       KUBELAB_SERVER       https://host:port of the control plane
    --token        KUBELAB_TOKEN        bearer token
    --certificate-authority  KUBELAB_CERTIFICATE_AUTHORITY  the cluster CA file
    -n/--namespace KUBELAB_NAMESPACE    namespace (default "default")

Exit codes:
  0  the command did what was asked
  1  it did not: a usage error, a server error (not found, invalid, conflict, forbidden),
     an unreachable server or failed login, or a wait that timed out
`;

export function buildProgram(io: Io): Command {
  const program = new Command('labctl')
    .description("labctl controls a kubelab cluster, with kubectl's verbs")
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .addOption(new Option('--context <name>', 'the context of ~/.kubelab/config to use'))
    .addOption(new Option('-s, --server <url>', 'the control plane, https://host:port'))
    .addOption(new Option('--token <token>', 'bearer token for the API'))
    .addOption(new Option('--certificate-authority <file>', 'the cluster CA certificate file'))
    .addOption(new Option('-n, --namespace <namespace>', 'the namespace to act in'))
    .addOption(
      new Option('--request-timeout <duration>', 'how long one call may take, e.g. 10s').argParser(
        parseDurationMs,
      ),
    )
    .addHelpText('after', EPILOG);
  getCommand(program, io);
  describeCommand(program, io);
  applyCommand(program, io);
  createCommand(program, io);
  deleteCommand(program, io);
  editCommand(program, io);
  logsCommand(program, io);
  cordonCommands(program, io);
  drainCommand(program, io);
  labelCommands(program, io);
  taintCommand(program, io);
  rolloutCommand(program, io);
  scaleCommand(program, io);
  tokenCommand(program, io);
  topCommand(program, io);
  loginCommand(program, io);
  configCommand(program, io);
  versionCommand(program, io);
  completionCommand(program, io);
  return program;
}

/** Runs labctl with `argv` (process.argv shape) and returns the exit code. */
export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv);
    return EXIT_OK;
  } catch (err) {
    // commander has printed its own message (or the help, which is a success).
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT_OK : EXIT_ERROR;
    if (!(err instanceof AlreadyReported)) io.err(`${formatError(err)}\n`);
    return EXIT_ERROR;
  }
}
