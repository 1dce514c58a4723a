/**
 * BENCHMARKS.md: a short intro once, then dated sections: appendSection adds one per run (oldest
 * first); replaceSection keeps one section per benchmark script, replaced on every run.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const INTRO = `# Benchmarks

Figures from \`npm run bench:store\` (test/bench/store.bench.ts). Each run measures every system
side by side, in one run on one machine, and appends a dated section below; compare figures only
within a section, never across sections or machines (the build machines are small and noisy).

What it measures, with Pods whose JSON is ~1 KiB as stored (the padding annotation is sized to
reach 1,024 bytes with the server's defaults):

- durable creates/s through the apiserver with 1 and 32 concurrent writers: kubelab on SQLite and
  on etcd, over gRPC (TLS + bearer token, \`kubelab server\` in a child process) and through the
  in-process client; the reference is raw etcd puts of the same value size with the etcd3 client;
- watch delivery latency (write call → event consumed by the client) with 100 watchers while
  2,000 Pods are written at a steady 200/s, after a warm-up; the reference is 100 etcd3 watchers
  on a prefix;
- listing 10,000 Pods through gRPC from the watch cache; the reference is etcd's own range of the
  same 10,000 values with the etcd3 client.

Rows marked "raw gRPC" skip the typed client's decoding (the events or the list answer stay bytes):
they tell the server's and the transport's share from the client's. The CPU columns give the cores
(or milliseconds) used by the benchmark process, the kubelab server and etcd during each case; a
server's event loop can also be busy without using CPU (SQLite commits wait for fsync on it).
Options: \`npm run bench:store -- --no-append --phases watch --profile /tmp/prof\` (see the top of
the script).

The other benchmarks write sections of their own, named after their script in the heading:
\`bench:informer\` and \`bench:soak\` append one per run, like \`bench:store\`; \`bench:agent\`,
\`bench:lifecycle\`, \`bench:scheduler\`, \`bench:pods\`, \`bench:daemonset\` and \`bench:gui\` keep one
section each, replaced on every run. Each section says what it
measures, against what, on which machine and tree, and whether other work shared the machine.
`;

export function appendSection(path: string, section: string): void {
  let text = existsSync(path) ? readFileSync(path, 'utf8') : INTRO;
  if (!text.endsWith('\n')) text += '\n';
  writeFileSync(path, `${text}\n${section.trimEnd()}\n`);
}

/**
 * Writes `section` (which starts with a `## ` heading naming `npm run bench:<name>`) as the one
 * section of that benchmark in BENCHMARKS.md: every earlier section whose heading names the same
 * script is removed, and the new one takes the place of the first of them (or goes at the end).
 * Returns whether an earlier section was replaced.
 */
export function replaceSection(path: string, name: string, section: string): boolean {
  const marker = `(\`npm run bench:${name}\`)`;
  const heading = section.split('\n', 1)[0];
  if (!heading.startsWith('## ') || !heading.includes(marker))
    throw new Error(`the section's heading must start with "## " and name ${marker}: ${heading}`);
  let text = existsSync(path) ? readFileSync(path, 'utf8') : INTRO;
  if (!text.endsWith('\n')) text += '\n';
  // Split before each level-2 heading (### and deeper stay with their section).
  const parts = text.split(/^(?=## )/m);
  const mine = (p: string) => p.startsWith('## ') && p.split('\n', 1)[0].includes(marker);
  const at = parts.findIndex(mine);
  const body = `${section.trimEnd()}\n`;
  if (at < 0) {
    writeFileSync(path, `${text}\n${body}`);
    return false;
  }
  const kept = parts.map((p, i) => (i === at ? `${body}\n` : mine(p) ? '' : p));
  writeFileSync(path, kept.join('').replace(/\n+$/, '\n'));
  return true;
}

export function table(header: string[], align: Array<'l' | 'r'>, rows: string[][]): string {
  const sep = align.map((a) => (a === 'r' ? '---:' : '---'));
  return [header, sep, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}
