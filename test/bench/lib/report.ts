/** BENCHMARKS.md: a short intro once, then one dated section per run, oldest first. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const INTRO = `# Benchmarks

Figures from \`npm run bench:store\` (test/bench/store.bench.ts). Each run measures every system
side by side, in one run on one machine, and appends a dated section below; compare figures only
within a section, never across sections or machines (the build machines are small and noisy).

What it measures, with Pods whose JSON is ~1 KiB (a 700-byte annotation):

- durable creates/s through the apiserver with 1 and 32 concurrent writers: kubelab on SQLite and
  on etcd, over gRPC (TLS + bearer token, the control plane in a child process) and through the
  in-process client; the reference is raw etcd puts of the same value size with the etcd3 client;
- watch delivery latency (write call → event consumed by the client) with 100 watchers while
  2,000 Pods are written at a steady 200/s; the reference is 100 etcd3 watchers on a prefix;
- listing 10,000 Pods through gRPC from the watch cache; the reference is etcd's own range of the
  same 10,000 values with the etcd3 client.
`;

export function appendSection(path: string, section: string): void {
  let text = existsSync(path) ? readFileSync(path, 'utf8') : INTRO;
  if (!text.endsWith('\n')) text += '\n';
  writeFileSync(path, `${text}\n${section.trimEnd()}\n`);
}

export function table(header: string[], align: Array<'l' | 'r'>, rows: string[][]): string {
  const sep = align.map((a) => (a === 'r' ? '---:' : '---'));
  return [header, sep, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}
