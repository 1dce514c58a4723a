/**
 * `labctl config`: the contexts of ~/.kubelab/config — get-contexts, use-context,
 * current-context, set-context (create or change one; --current for the one in use),
 * delete-context, and view (tokens redacted unless --raw).
 */
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { globalFlags } from '../command.js';
import {
  configPath,
  encodeCa,
  findContext,
  loadConfig,
  readCaFile,
  saveConfig,
  upsertContext,
  type ContextEntry,
} from '../config.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { formatTable } from '../print/table.js';
import { normalizeServer } from '../server.js';

function getContexts(io: Io, name: string | undefined, opts: { output?: string }): void {
  const cfg = loadConfig(configPath(io.env));
  const contexts = name ? cfg.contexts.filter((c) => c.name === name) : cfg.contexts;
  if (name && !contexts.length) throw new CliError(`context ${name} not found`);
  if (opts.output === 'name') {
    io.out(contexts.map((c) => `${c.name}\n`).join(''));
    return;
  }
  const rows = contexts.map((c) => [
    c.name === cfg['current-context'] ? '*' : '',
    c.name,
    c.server,
    c.namespace ?? '',
  ]);
  io.out(`${formatTable([['CURRENT', 'NAME', 'SERVER', 'NAMESPACE'], ...rows])}\n`);
}

function useContext(io: Io, name: string): void {
  const path = configPath(io.env);
  const cfg = loadConfig(path);
  if (!findContext(cfg, name))
    throw new CliError(`no context exists with the name: "${name}"; see \`labctl config get-contexts\``);
  cfg['current-context'] = name;
  saveConfig(path, cfg);
  io.out(`Switched to context "${name}".\n`);
}

function currentContext(io: Io): void {
  const cfg = loadConfig(configPath(io.env));
  if (!cfg['current-context'])
    throw new CliError(
      'current-context is not set; run `labctl login` or `labctl config use-context <name>`',
    );
  io.out(`${cfg['current-context']}\n`);
}

interface SetContextOptions {
  current?: boolean;
}

function setContext(io: Io, cmd: Command, nameArg: string | undefined, opts: SetContextOptions): void {
  const flags = globalFlags(cmd);
  const path = configPath(io.env);
  const cfg = loadConfig(path);
  const name = opts.current ? cfg['current-context'] : nameArg;
  if (!name)
    throw new CliError(
      opts.current
        ? 'no current context to modify; run `labctl login` first'
        : 'give the context name, or --current',
    );
  const existing = findContext(cfg, name);
  if (!existing && !flags.server)
    throw new CliError(
      `context "${name}" does not exist: give --server (and --token, --certificate-authority) to create it`,
    );
  const entry: ContextEntry = { ...(existing ?? { name, server: '' }) };
  if (flags.server) entry.server = normalizeServer(flags.server);
  if (flags.token) entry.token = flags.token;
  if (flags.certificateAuthority) {
    entry['certificate-authority-data'] = encodeCa(readCaFile(flags.certificateAuthority));
    delete entry['certificate-authority'];
  }
  if (flags.namespace) entry.namespace = flags.namespace;
  upsertContext(cfg, entry);
  saveConfig(path, cfg);
  io.out(`Context "${name}" ${existing ? 'modified' : 'created'}.\n`);
}

function deleteContext(io: Io, name: string): void {
  const path = configPath(io.env);
  const cfg = loadConfig(path);
  if (!findContext(cfg, name)) throw new CliError(`context "${name}" not found in ${path}`);
  cfg.contexts = cfg.contexts.filter((c) => c.name !== name);
  if (cfg['current-context'] === name) {
    delete cfg['current-context'];
    io.err(
      `warning: this removed your active context, use "labctl config use-context" to select a different one\n`,
    );
  }
  saveConfig(path, cfg);
  io.out(`deleted context ${name} from ${path}\n`);
}

function view(io: Io, opts: { raw?: boolean }): void {
  const cfg = loadConfig(configPath(io.env));
  const shown = opts.raw
    ? cfg
    : {
        ...cfg,
        contexts: cfg.contexts.map((c) => ({
          ...c,
          ...(c.token ? { token: 'REDACTED' } : {}),
          ...(c['certificate-authority-data'] ? { 'certificate-authority-data': 'DATA+OMITTED' } : {}),
        })),
      };
  io.out(stringify(shown));
}

/** Wraps a synchronous config action for commander (it passes args, options, command). */
function run(fn: (...all: never[]) => void): (...all: unknown[]) => void {
  return (...all) => fn(...(all as never[]));
}

export function configCommand(program: Command, io: Io): void {
  const config = program
    .command('config')
    .description('manage the contexts in ~/.kubelab/config ($KUBELAB_CONFIG)');
  config
    .command('get-contexts')
    .description('list the contexts; * marks the current one')
    .argument('[name]', 'only this context')
    .option('-o, --output <format>', 'name: only the names')
    .action(run((name: string | undefined, opts: { output?: string }) => getContexts(io, name, opts)));
  config
    .command('use-context')
    .description('make a context the current one')
    .argument('<name>', 'the context')
    .action(run((name: string) => useContext(io, name)));
  config
    .command('current-context')
    .description('print the name of the current context')
    .action(run(() => currentContext(io)));
  config
    .command('set-context')
    .description('create a context or change one: --server, --token, --certificate-authority, --namespace')
    .argument('[name]', 'the context (or --current)')
    .option('--current', 'change the current context')
    .addHelpText(
      'after',
      '\nExamples:\n  labctl config set-context --current --namespace lab\n  labctl config set-context home --server https://10.0.0.2:6443 --token … --certificate-authority ca.crt',
    )
    .action(
      run((name: string | undefined, opts: SetContextOptions, cmd: Command) =>
        setContext(io, cmd, name, opts),
      ),
    );
  config
    .command('delete-context')
    .description('remove a context')
    .argument('<name>', 'the context')
    .action(run((name: string) => deleteContext(io, name)));
  config
    .command('view')
    .description('print the configuration (tokens and CA data hidden unless --raw)')
    .option('--raw', 'show tokens and CA data')
    .action(run((opts: { raw?: boolean }) => view(io, opts)));
}
