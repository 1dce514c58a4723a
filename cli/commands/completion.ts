/**
 * `labctl completion bash|zsh|fish`: shell completion generated from the commander tree —
 * every command, subcommand and flag, plus resource types after the verbs that take them —
 * so it never falls behind the commands themselves.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { KINDS } from '../../client/api/kinds.js';
import type { Io } from '../io.js';

/** Verbs whose first argument is a resource type. */
const RESOURCE_VERBS = new Set(['get', 'describe', 'delete', 'edit', 'label', 'annotate']);

const RESOURCE_WORDS = [...new Set(KINDS.flatMap((k) => [k.plural, ...k.shortNames]))];

interface Node {
  /** "config get-contexts" */
  path: string;
  command: Command;
}

function walk(command: Command, prefix = ''): Node[] {
  return command.commands.flatMap((c) => {
    const path = prefix ? `${prefix} ${c.name()}` : c.name();
    return [{ path, command: c }, ...walk(c, path)];
  });
}

function flagsOf(command: Command): string[] {
  return command.options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
}

/** For each command path (the root is ""), the words that may come next. */
export function completionWords(program: Command): Map<string, string[]> {
  const global = flagsOf(program);
  const words = new Map<string, string[]>();
  const childrenOf = (c: Command) => c.commands.flatMap((s) => [s.name(), ...s.aliases()]);
  words.set('', [...childrenOf(program), ...global]);
  for (const { path, command } of walk(program)) {
    const resources = RESOURCE_VERBS.has(path)
      ? RESOURCE_WORDS
      : path === 'taint'
        ? ['nodes']
        : path.startsWith('rollout ')
          ? ['daemonsets', 'ds']
          : [];
    const entry = [...childrenOf(command), ...resources, ...flagsOf(command), ...global];
    words.set(path, entry);
    for (const alias of command.aliases()) words.set(path.replace(/[^ ]+$/, alias), entry);
  }
  return words;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function bashCompletion(program: Command): string {
  const table = [...completionWords(program)]
    .map(([path, w]) => `  [${quote(path)}]=${quote(w.join(' '))}`)
    .join('\n');
  return `# labctl completion for bash. Load it with:  source <(labctl completion bash)
declare -A _labctl_words=(
${table}
)
_labctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath="" candidate i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in -*) continue ;; esac
    candidate="\${cmdpath:+$cmdpath }\${COMP_WORDS[i]}"
    if [[ -n "\${_labctl_words[$candidate]+x}" ]]; then cmdpath="$candidate"; fi
  done
  COMPREPLY=($(compgen -W "\${_labctl_words[$cmdpath]}" -- "$cur"))
}
complete -o default -F _labctl labctl
`;
}

export function zshCompletion(program: Command): string {
  const table = [...completionWords(program)]
    .map(([path, w]) => `  ${quote(path)} ${quote(w.join(' '))}`)
    .join('\n');
  return `#compdef labctl
# labctl completion for zsh. Load it with:  source <(labctl completion zsh)
typeset -gA _labctl_words
_labctl_words=(
${table}
)
_labctl() {
  local cmdpath="" candidate w
  for w in "\${(@)words[2,CURRENT-1]}"; do
    [[ $w == -* ]] && continue
    candidate="\${cmdpath:+$cmdpath }$w"
    (( \${+_labctl_words[$candidate]} )) && cmdpath=$candidate
  done
  compadd -- \${=_labctl_words[$cmdpath]}
}
if (( $+functions[compdef] )); then compdef _labctl labctl; fi
`;
}

export function fishCompletion(program: Command): string {
  const lines = [
    '# labctl completion for fish. Load it with:  labctl completion fish | source',
    'complete -c labctl -f',
  ];
  const describe = (c: Command) => quote(c.description().split('\n')[0]);
  const option = (cond: string, c: Command) => {
    for (const o of c.options) {
      const long = o.long ? ` -l ${o.long.replace(/^--/, '')}` : '';
      const short = o.short ? ` -s ${o.short.replace(/^-/, '')}` : '';
      lines.push(
        `complete -c labctl -n ${quote(cond)}${long}${short}${o.required || o.optional ? ' -r' : ''} -d ${quote(o.description)}`,
      );
    }
  };
  option('true', program);
  for (const c of program.commands) {
    lines.push(`complete -c labctl -n '__fish_use_subcommand' -a ${quote(c.name())} -d ${describe(c)}`);
  }
  for (const { path, command } of walk(program)) {
    const names = path.split(' ');
    const own = names[names.length - 1];
    const children = command.commands.map((s) => s.name());
    const notYet = children.length ? `; and not __fish_seen_subcommand_from ${children.join(' ')}` : '';
    const cond = `__fish_seen_subcommand_from ${own}`;
    for (const s of command.commands)
      lines.push(`complete -c labctl -n ${quote(cond + notYet)} -a ${quote(s.name())} -d ${describe(s)}`);
    if (RESOURCE_VERBS.has(path))
      lines.push(`complete -c labctl -n ${quote(cond)} -a ${quote(RESOURCE_WORDS.join(' '))}`);
    option(cond, command);
  }
  return `${lines.join('\n')}\n`;
}

export function completionCommand(program: Command, io: Io): void {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .argument('<shell>', 'bash, zsh or fish', (v) => {
      if (v !== 'bash' && v !== 'zsh' && v !== 'fish')
        throw new InvalidArgumentError('use bash, zsh or fish');
      return v;
    })
    .addHelpText(
      'after',
      '\nExamples:\n  source <(labctl completion bash)\n  labctl completion fish > ~/.config/fish/completions/labctl.fish',
    )
    .action((shell: 'bash' | 'zsh' | 'fish') => {
      const script =
        shell === 'bash'
          ? bashCompletion(program)
          : shell === 'zsh'
            ? zshCompletion(program)
            : fishCompletion(program);
      io.out(script);
    });
}
