/**
 * Dropping privileges for a process container (the process runtime's share of a security
 * context): the container's argv is run through util-linux's `setpriv`, which sets the user,
 * the group and the supplementary groups, no_new_privs and the capability bounding set, then
 * execs the command — so the wrapper above it keeps running as the agent (it writes the exit
 * file and joins the cgroup) and only the container's own process runs as the pod's user.
 */
import { existsSync } from 'node:fs';
import type { ContainerSecurity } from './types.js';

export const SETPRIV_PATHS = ['/usr/bin/setpriv', '/bin/setpriv', '/usr/sbin/setpriv'];

export function findSetpriv(paths = SETPRIV_PATHS): string | undefined {
  return paths.find((p) => existsSync(p));
}

/** Whether the security context changes anything for a process started by an agent of `agentUid`. */
export function needsPrivilegeDrop(sec: ContainerSecurity | undefined, agentUid: number): boolean {
  if (!sec) return false;
  return (
    (sec.uid !== undefined && sec.uid !== agentUid) ||
    (sec.gid !== undefined && sec.uid !== agentUid) ||
    sec.groups.length > 0 ||
    sec.noNewPrivs ||
    sec.dropCaps.length > 0
  );
}

/** `setpriv … --` before the container's argv. */
export function setprivArgs(setpriv: string, sec: ContainerSecurity): string[] {
  const args = [setpriv];
  if (sec.uid !== undefined) args.push(`--reuid=${sec.uid}`);
  if (sec.gid !== undefined) args.push(`--regid=${sec.gid}`);
  args.push(sec.groups.length ? `--groups=${sec.groups.join(',')}` : '--clear-groups');
  if (sec.noNewPrivs) args.push('--no-new-privs');
  if (sec.dropCaps.length)
    args.push(
      `--bounding-set=${sec.dropCaps.map((c) => (c === 'ALL' ? '-all' : `-${c.toLowerCase()}`)).join(',')}`,
    );
  args.push('--');
  return args;
}
