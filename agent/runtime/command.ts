/**
 * Finding a container's program the way execvp(3) will, before it is started, so that a command
 * which cannot run ends with a reason and a message a person can act on, instead of only the
 * shell's "exec: x: not found" in the log. The wrapper still makes the real attempt (and exits
 * 127/126 if it fails); this only explains it.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export type CommandCheck =
  | { ok: true; path: string }
  /** `exitCode` is what the wrapper's exec will fail with: 127 not found, 126 not executable. */
  | { ok: false; exitCode: 126 | 127; message: string };

/**
 * Looks `command` up like execvp: a name with a "/" is taken as a path (relative to `cwd`);
 * otherwise the PATH entries are tried in order (an empty entry is the working directory) and
 * the first executable regular file wins; a file found but not executable is skipped, and only
 * reported (126) when nothing executable is found.
 */
export function checkCommand(command: string, searchPath: string, cwd: string): CommandCheck {
  if (command === '') {
    return {
      ok: false,
      exitCode: 127,
      message: 'the command is an empty string: set command (or args) in the container spec',
    };
  }
  if (command.includes('/')) {
    const file = path.resolve(cwd, command);
    const problem = executableProblem(file);
    if (problem === undefined) return { ok: true, path: file };
    if (problem === 'missing') {
      return {
        ok: false,
        exitCode: 127,
        message: `${command} does not exist on the node (resolved to ${file}): install it there, or fix the command`,
      };
    }
    return { ok: false, exitCode: 126, message: notExecutableMessage(file, problem) };
  }
  let firstProblem: { file: string; problem: 'directory' | 'not-executable' } | undefined;
  for (const dir of searchPath.split(':')) {
    const file = path.resolve(cwd, dir, command);
    const problem = executableProblem(file);
    if (problem === undefined) return { ok: true, path: file };
    if (problem !== 'missing') firstProblem ??= { file, problem };
  }
  if (firstProblem) {
    return {
      ok: false,
      exitCode: 126,
      message: notExecutableMessage(firstProblem.file, firstProblem.problem),
    };
  }
  return {
    ok: false,
    exitCode: 127,
    message: `"${command}" was not found in PATH (${searchPath || 'empty'}): install it on the node, give its absolute path in command, or set PATH in the container's env`,
  };
}

function executableProblem(file: string): 'missing' | 'directory' | 'not-executable' | undefined {
  try {
    const stat = statSync(file);
    if (stat.isDirectory()) return 'directory';
    accessSync(file, constants.X_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'not-executable';
  }
}

function notExecutableMessage(file: string, problem: 'directory' | 'not-executable'): string {
  return problem === 'directory'
    ? `${file} is a directory, not a program: fix the command`
    : `${file} is not executable by the agent's user: chmod +x it, or run it through its interpreter (command: [sh, ${file}])`;
}
