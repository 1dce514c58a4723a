/**
 * The files `npm run build:agent` ships beside the agent, read as a person installing it would:
 * the systemd unit's documentation link leads to a section of the README that exists, and the
 * install script takes the join token from KUBELAB_TOKEN (a flag would show it in `ps`) and
 * refuses a binary that does not match the checksum built with it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const packaging = join(root, 'agent', 'packaging');

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

it("the systemd unit's documentation link names a README section that exists", () => {
  const unit = readFileSync(join(packaging, 'kubelab-agent.service'), 'utf8');
  const link = /^Documentation=(\S+)$/m.exec(unit)?.[1];
  expect(link).toBeDefined();
  const anchor = new URL(link!).hash.slice(1);
  const headings = readFileSync(join(root, 'README.md'), 'utf8')
    .split('\n')
    .filter((l) => /^#{1,6} /.test(l))
    .map((l) => githubAnchor(l.replace(/^#+ /, '')));
  expect(headings).toContain(anchor);
  expect(anchor).toBe('adding-a-lab-machine-kubelab-agent');
});

it('the install script asks for the join token in KUBELAB_TOKEN, not on its command line', () => {
  const help = execFileSync('sh', [join(packaging, 'install.sh'), '--help']).toString();
  expect(help).toContain(
    "curl -fsSLk https://10.0.0.2:6443/install.sh | sudo KUBELAB_TOKEN='K10…::…' sh -s - --server https://10.0.0.2:6443",
  );
  expect(help).not.toMatch(/install\.sh --server \S+ --token/);
});

it('the install script refuses an agent binary that does not match its .sha256, before installing anything', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-install-'));
  try {
    copyFileSync(join(packaging, 'install.sh'), join(dir, 'install.sh'));
    const exe = join(dir, 'kubelab-agent-linux-arm64');
    writeFileSync(exe, '#!/bin/sh\necho the agent\n');
    chmodSync(exe, 0o755);
    const sum = execFileSync('sha256sum', ['kubelab-agent-linux-arm64'], { cwd: dir }).toString();
    writeFileSync(`${exe}.sha256`, sum);
    writeFileSync(exe, '#!/bin/sh\necho a copy cut short or tampered with\n');
    const res = spawnSync(
      'bash',
      [join(dir, 'install.sh'), '--server', 'https://10.0.0.2:6443', '--binary', exe],
      {
        env: { PATH: process.env.PATH, KUBELAB_TOKEN: 'K10x::y' },
        encoding: 'utf8',
      },
    );
    expect(res.status).toBe(1);
    expect(res.stderr).toContain(`install.sh: ${exe} does not match its checksum in ${exe}.sha256`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
