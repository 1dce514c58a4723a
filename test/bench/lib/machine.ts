/** What the figures were measured on: they mean nothing without it. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';

export interface MachineInfo {
  cpu: string;
  cores: number;
  ramGiB: number;
  os: string;
  node: string;
  etcd: string;
  /** The kubelab commit measured, and whether the working tree had changes. */
  commit: string;
  /** Files changed or added in the working tree (not committed); test/bench/, BENCHMARKS.md, package.json and a linked node_modules left out. */
  changed: string[];
}

/** What the working tree held besides the commit, for a report: '' when nothing. */
export function changedNote(m: MachineInfo): string {
  if (!m.changed.length) return '';
  const shown = m.changed.slice(0, 12);
  return (
    `Measured with uncommitted changes in the tree (work in progress by others): ${shown.map((f) => `\`${f}\``).join(', ')}` +
    `${m.changed.length > shown.length ? ` and ${m.changed.length - shown.length} more` : ''}.`
  );
}

function changedFiles(dir: string): string[] {
  try {
    const out = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], {
      cwd: dir,
      encoding: 'utf8',
    });
    return (
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(3).replace(/^.* -> /, ''))
        // A bench clone links the working copy's node_modules: not a change to what is measured.
        .filter(
          (f) =>
            !f.startsWith('test/bench/') &&
            f !== 'BENCHMARKS.md' &&
            f !== 'package.json' &&
            f !== 'node_modules',
        )
    );
  } catch {
    return [];
  }
}

function commitOf(dir: string): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
    const head = git('rev-parse', '--short', 'HEAD');
    return git('status', '--porcelain', '--untracked-files=no') ? `${head} + uncommitted changes` : head;
  } catch {
    return 'unknown';
  }
}

function osName(): string {
  try {
    const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    if (m) return `${m[1]} (kernel ${release()})`;
  } catch {
    // not Linux, or no os-release
  }
  return `${process.platform} ${release()}`;
}

function cpuModel(): string {
  const model = cpus()[0]?.model?.trim() ?? 'unknown';
  try {
    // os.cpus() gives only the marketing name on some VMs; /proc/cpuinfo may know more.
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const m = /^model name\s*:\s*(.+)$/m.exec(info);
    if (m && m[1].trim().length > model.length) return m[1].trim();
  } catch {
    // not Linux
  }
  return model;
}

export async function machineInfo(etcdEndpoint: string, repoDir: string): Promise<MachineInfo> {
  let etcd = 'unknown';
  try {
    const res = await fetch(`${etcdEndpoint}/version`);
    etcd = ((await res.json()) as { etcdserver?: string }).etcdserver ?? etcd;
  } catch {
    // reported as unknown
  }
  return {
    cpu: cpuModel(),
    cores: cpus().length,
    ramGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    os: osName(),
    node: process.version,
    etcd,
    commit: commitOf(repoDir),
    changed: changedFiles(repoDir),
  };
}
