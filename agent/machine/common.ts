/**
 * Small pieces shared by the real machine readers: Kubernetes GOOS/GOARCH names, the addresses
 * to publish, and statfs on the filesystem holding a directory that may not exist yet.
 */
import { promises as fsp, type StatsFs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Node's `process.arch` → Kubernetes GOARCH (`kubernetes.io/arch`). Unknown names pass through. */
export function goArch(arch: string = process.arch, endianness: 'BE' | 'LE' = os.endianness()): string {
  switch (arch) {
    case 'x64':
      return 'amd64';
    case 'ia32':
      return '386';
    case 'ppc64':
      return endianness === 'LE' ? 'ppc64le' : 'ppc64';
    case 'mipsel':
      return 'mipsle';
    default:
      // arm, arm64, s390x, riscv64, loong64, mips already carry their Go names.
      return arch;
  }
}

/** Node's `process.platform` → Kubernetes GOOS (`kubernetes.io/os`). Unknown names pass through. */
export function goOS(platform: string = process.platform): string {
  switch (platform) {
    case 'win32':
    case 'cygwin':
      return 'windows';
    case 'sunos':
      return 'solaris';
    default:
      // linux, darwin, freebsd, openbsd, netbsd, aix, android already carry their Go names.
      return platform;
  }
}

type Interfaces = NodeJS.Dict<os.NetworkInterfaceInfo[]>;

/**
 * The addresses to publish, best first: non-internal IPv4 (link-local 169.254/16 after the
 * others, so an auto-configured adapter never comes first), then non-internal IPv6 that is not
 * link-local (fe80::/10). Interface order is Node's; duplicates are dropped.
 */
export function internalIPs(interfaces: Interfaces = os.networkInterfaces()): string[] {
  const v4: string[] = [];
  const v4LinkLocal: string[] = [];
  const v6: string[] = [];
  for (const addrs of Object.values(interfaces)) {
    for (const a of addrs ?? []) {
      if (a.internal) continue;
      // Node 18.0–18.3 reported family as a number.
      const family = String(a.family);
      if (family === 'IPv4' || family === '4') {
        (a.address.startsWith('169.254.') ? v4LinkLocal : v4).push(a.address);
      } else if (family === 'IPv6' || family === '6') {
        if (!isIPv6LinkLocal(a.address)) v6.push(a.address);
      }
    }
  }
  return [...new Set([...v4, ...v4LinkLocal, ...v6])];
}

function isIPv6LinkLocal(address: string): boolean {
  const first = parseInt(address.split(':')[0] || '0', 16);
  return (first & 0xffc0) === 0xfe80;
}

/**
 * statfs of the filesystem holding `dir`. When `dir` does not exist yet (the agent has not
 * created its data directory), the nearest existing ancestor answers: that is where the
 * directory will live. Nothing is created.
 */
export async function statfsNearest(dir: string): Promise<StatsFs> {
  let p = path.resolve(dir);
  for (;;) {
    try {
      return await fsp.statfs(p);
    } catch (err) {
      const parent = path.dirname(p);
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || parent === p) throw err;
      p = parent;
    }
  }
}

/** The nodefs figures of a statfs result. Filesystems that keep no inode count report 0 files. */
export function nodefsFromStatfs(s: StatsFs): {
  availableBytes: number;
  capacityBytes: number;
  inodesFree?: number;
  inodes?: number;
} {
  return {
    availableBytes: s.bavail * s.bsize,
    capacityBytes: s.blocks * s.bsize,
    inodesFree: s.files > 0 ? s.ffree : undefined,
    inodes: s.files > 0 ? s.files : undefined,
  };
}
