/**
 * Users and groups of this machine, from /etc/passwd and /etc/group: the node's --pod-user by
 * name or number, a uid's primary group and home.
 */
import { readFileSync } from 'node:fs';

export interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

function passwd(file = '/etc/passwd'): PasswdEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map((l) => l.split(':'))
    .filter((f) => f.length >= 7 && /^\d+$/.test(f[2]) && /^\d+$/.test(f[3]))
    .map((f) => ({ name: f[0], uid: Number(f[2]), gid: Number(f[3]), home: f[5] }));
}

export function userByUid(uid: number, file?: string): PasswdEntry | undefined {
  return passwd(file).find((e) => e.uid === uid);
}

/** "65534", "65534:65534" or a user name ("kubelab-pods"); throws naming what to give. */
export function parsePodUser(spec: string, file?: string): { uid: number; gid: number } {
  const m = /^(\d+)(?::(\d+))?$/.exec(spec.trim());
  if (m) {
    const uid = Number(m[1]);
    return { uid, gid: m[2] !== undefined ? Number(m[2]) : (userByUid(uid, file)?.gid ?? uid) };
  }
  const entry = passwd(file).find((e) => e.name === spec.trim());
  if (!entry)
    throw new Error(
      `--pod-user "${spec}": no such user on this machine; give a user name from /etc/passwd or UID[:GID] (the install script makes "kubelab-pods")`,
    );
  return { uid: entry.uid, gid: entry.gid };
}
