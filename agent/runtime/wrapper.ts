/**
 * The small POSIX `sh` script every container process runs under. The agent is not the
 * container's parent after an agent restart, so it cannot collect the exit status itself; the
 * wrapper outlives the agent, waits for the container and writes its exit status to a file the
 * next agent reads.
 *
 * What it does, in order:
 *   1. joins the container's cgroup when it is given one (before starting the container, so every
 *      process the container starts is inside it — moving the pid from outside would race with
 *      the container's first fork);
 *   2. traps TERM, INT, HUP, QUIT, USR1, USR2 and ALRM with a no-op, so a signal sent to the
 *      container's process group does not end the wrapper before the container;
 *   3. runs the container's argv as a foreground child: `( exec "$@" )`. Not a builtin (`exec`
 *      looks up a program in PATH), the argv passed as positional arguments, never re-parsed.
 *      The child first creates the "started" file: from then on the child has its default signal
 *      dispositions back (a subshell resets trapped signals), so a TERM to the group reaches it.
 *      The runtime's start() waits for that file: a TERM sent after the wrapper set its traps but
 *      before the child existed would otherwise be taken by the wrapper alone, and lost;
 *   4. writes the child's status to `<exit file>.tmp`, renames it to the exit file, exits with it.
 *
 * Why a foreground child and no signal forwarding: a child started with `&` from a
 * non-interactive sh gets SIGINT and SIGQUIT set to ignored (POSIX; dash sets it so that a
 * `trap - INT` in the child cannot undo it, and `set -m` fails without a terminal), which would
 * alter the container's signal dispositions. A foreground child keeps the dispositions the
 * runtime gave it (traps with an action are reset to the default in a child). Stopping needs no
 * forwarding: the runtime signals the whole process group, which reaches the container and the
 * wrapper once each; a wrapper that also forwarded would deliver TERM twice to the container
 * (many programs treat a second TERM/INT as "quit now"). A signal sent to the wrapper's pid
 * alone is held by the wrapper until the container ends: signal the group (`kill -TERM -<pid>`).
 *
 * Exit status, shell convention: the code for a normal exit, 128+N for a child ended by signal N
 * (143 for SIGTERM, 137 for SIGKILL); 127 when the command was not found, 126 when it could not
 * be executed. If the container and the wrapper are both SIGKILLed (the grace period ran out),
 * no exit file is written: the runtime reports 137, SIGKILL.
 *
 * The wrapper's own stderr goes to /dev/null (fd 3 keeps the log for the container): sh prints
 * "Terminated" when a foreground child dies of a signal, which does not belong in the
 * container's log. The "exec: x: not found" message still reaches the log: it is printed inside
 * the child, where stderr is the log again.
 */
import os from 'node:os';

/** argv[1] of the wrapper's sh: shows up in `ps`, so the script starts with a telling comment. */
export const WRAPPER_NAME = 'kubelab-wrapper';

/**
 * Positional: $1 exit file, $2 started file, $3 cgroup.procs to join ("" for none), $4... the
 * container's argv. (`true`, not `:`, creates the started file: a failed redirection of the
 * special builtin `:` would end the subshell, and the container with it.)
 */
export const WRAPPER_SCRIPT = `# kubelab container wrapper: runs "$@" after three arguments, records its exit status
__kubelab_exit_file=$1
__kubelab_started_file=$2
__kubelab_cgroup_procs=$3
shift 3
if [ -n "$__kubelab_cgroup_procs" ]; then
  echo $$ >"$__kubelab_cgroup_procs" || echo "kubelab: could not join cgroup $__kubelab_cgroup_procs: cpu/memory limits are not enforced for this container" >&2
fi
trap : TERM INT HUP QUIT USR1 USR2 ALRM
exec 3>&2 2>/dev/null
( true >"$__kubelab_started_file"; exec "$@" 2>&3 3>&- )
__kubelab_status=$?
printf '%s\\n' "$__kubelab_status" >"$__kubelab_exit_file.tmp" && command -p mv -f "$__kubelab_exit_file.tmp" "$__kubelab_exit_file"
exit "$__kubelab_status"
`;

export interface WrapperInvocation {
  /** The shell to spawn (an absolute path: the container's PATH may not lead to one). */
  file: string;
  /** Its arguments (what to pass to spawn after `file`). */
  args: string[];
}

/**
 * How to spawn `argv` under the wrapper: `/bin/sh -c <script> kubelab-wrapper <exitFile>
 * <startedFile> <cgroupProcs> argv...`. The files must be absolute paths (the wrapper runs in
 * the container's working directory).
 */
export function wrapperInvocation(opts: {
  argv: string[];
  exitFile: string;
  /** Created by the container's process just before it execs the command. */
  startedFile: string;
  /** `<cgroup>/cgroup.procs` for the wrapper to join, or undefined. */
  cgroupProcs?: string;
  shell?: string;
}): WrapperInvocation {
  if (opts.argv.length === 0) throw new Error('a container needs a command: argv is empty');
  for (const file of [opts.exitFile, opts.startedFile]) {
    if (!file.startsWith('/'))
      throw new Error(`the wrapper's status files must be absolute paths, got ${file}`);
  }
  return {
    file: opts.shell ?? '/bin/sh',
    args: [
      '-c',
      WRAPPER_SCRIPT,
      WRAPPER_NAME,
      opts.exitFile,
      opts.startedFile,
      opts.cgroupProcs ?? '',
      ...opts.argv,
    ],
  };
}

/** An exit status in the shell convention, split into code and signal. */
export interface WrappedStatus {
  exitCode: number;
  /** "SIGTERM" for 143, and so on: a status above 128 that names a signal. */
  signal?: string;
}

/**
 * Reads the exit file's content ("143\n"). Undefined for anything else (a file cut short cannot
 * happen — it is renamed into place — but a hand-edited one can).
 */
export function parseExitFile(content: string): WrappedStatus | undefined {
  const text = content.trim();
  if (!/^\d{1,3}$/.test(text)) return undefined;
  return statusFromCode(Number(text));
}

/** A shell status: 128+N names signal N (when N is a signal of this platform). */
export function statusFromCode(exitCode: number): WrappedStatus {
  const signal = exitCode > 128 ? signalName(exitCode - 128) : undefined;
  return signal ? { exitCode, signal } : { exitCode };
}

/** What a process killed by `signal` reports in the shell convention (SIGKILL → 137). */
export function statusFromSignal(signal: string): WrappedStatus {
  const number = os.constants.signals[signal as keyof typeof os.constants.signals];
  return { exitCode: 128 + (number ?? 9), signal };
}

function signalName(number: number): string | undefined {
  for (const [name, value] of Object.entries(os.constants.signals)) {
    if (value === number) return name;
  }
  return undefined;
}
