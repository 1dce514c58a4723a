/**
 * The files `npm run build:agent` ships beside the agent, read as a person installing it would:
 * the systemd unit's documentation link leads to a section of the README that exists, and the
 * install script takes the join token from KUBELAB_TOKEN (a flag would show it in `ps`).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
  const help = execFileSync('bash', [join(packaging, 'install.sh'), '--help']).toString();
  expect(help).toContain(
    "KUBELAB_TOKEN='K10…::…' sudo --preserve-env=KUBELAB_TOKEN ./install.sh --server https://10.0.0.2:6443",
  );
  expect(help).not.toMatch(/install\.sh --server \S+ --token/);
});
