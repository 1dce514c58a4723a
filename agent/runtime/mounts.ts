/**
 * Volumes for a process container: a process has no image and no root filesystem of its own,
 * so its volumes are bind-mounted at their mountPaths in a private mount namespace made for
 * it alone (util-linux `unshare --mount --propagation private`): the container sees its files
 * at /etc/app, the machine and every other process see nothing there, and the mounts vanish
 * with the container's last process. Only root may make a mount namespace, so an agent that
 * does not run as root refuses such a container (and says what to do).
 *
 * The script runs between the wrapper and the container's own command (and before setpriv, so
 * the mounts are made with the agent's privileges and the command runs with the pod's): for
 * each mount it creates the mount point if the machine has none (an empty directory, or an
 * empty file for a file, as `docker run -v` does), bind-mounts the source there and, for a
 * read-only mount, remounts it read-only; then it execs the command. A mount that fails ends
 * the container with the reason in its log (exit 125, before the command ran).
 */
import { existsSync } from 'node:fs';

/** One volume mount of a container. */
export interface Mount {
  /** The directory (or, with a subPath to a file, the file) on the machine. */
  source: string;
  /** The mountPath (absolute). */
  target: string;
  readOnly: boolean;
  /** The source is a file, not a directory (a subPath naming a file). */
  file?: boolean;
}

export const UNSHARE_PATHS = ['/usr/bin/unshare', '/bin/unshare', '/usr/sbin/unshare'];

export function findUnshare(paths = UNSHARE_PATHS): string | undefined {
  return paths.find((p) => existsSync(p));
}

/** argv[0] of the script's sh, seen in `ps` for the instant before the exec. */
export const MOUNTS_NAME = 'kubelab-mounts';

/** Positional: $1 the number of mounts, then source, target, ro|rw, dir|file for each; then the argv. */
export const MOUNTS_SCRIPT = `# kubelab volume mounts: bind-mounts volumes in this private mount namespace, then runs "$@"
__kubelab_n=$1
shift
while [ "$__kubelab_n" -gt 0 ]; do
  __kubelab_src=$1 __kubelab_dst=$2 __kubelab_mode=$3 __kubelab_type=$4
  shift 4
  if [ ! -e "$__kubelab_dst" ]; then
    if [ "$__kubelab_type" = file ]; then
      mkdir -p "$(dirname "$__kubelab_dst")" && : >"$__kubelab_dst"
    else
      mkdir -p "$__kubelab_dst"
    fi || { echo "kubelab: cannot create the mount point $__kubelab_dst" >&2; exit 125; }
  fi
  mount --bind "$__kubelab_src" "$__kubelab_dst" || { echo "kubelab: cannot mount the volume at $__kubelab_dst" >&2; exit 125; }
  if [ "$__kubelab_mode" = ro ]; then
    mount -o remount,bind,ro "$__kubelab_dst" || { echo "kubelab: cannot make $__kubelab_dst read-only" >&2; exit 125; }
  fi
  __kubelab_n=$((__kubelab_n - 1))
done
exec "$@"
`;

/** `unshare … sh -c <script> …` before the container's argv (and its setpriv, if any). */
export function mountArgs(unshare: string, shell: string, mounts: readonly Mount[]): string[] {
  const args = [
    unshare,
    '--mount',
    '--propagation',
    'private',
    '--',
    shell,
    '-c',
    MOUNTS_SCRIPT,
    MOUNTS_NAME,
  ];
  args.push(String(mounts.length));
  for (const m of mounts) {
    if (!m.target.startsWith('/')) throw new Error(`a mountPath must be absolute, got ${m.target}`);
    args.push(m.source, m.target, m.readOnly ? 'ro' : 'rw', m.file ? 'file' : 'dir');
  }
  return args;
}

/** Whether `file` lies on one of the mounts (it cannot be checked on the machine before they exist). */
export function underMount(file: string, mounts: readonly Mount[]): boolean {
  return mounts.some(
    (m) => file === m.target || file.startsWith(m.target.endsWith('/') ? m.target : `${m.target}/`),
  );
}
