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
reach 1,024 bytes with the server's defaults and managedFields; since those alone take a Pod to
~1.3 KiB, the Pods are unpadded from 2026-12-06 05:57 on):

- durable creates/s through the apiserver with 1 and 32 concurrent writers: kubelab on SQLite and
  on etcd, over gRPC (TLS + bearer token, \`kubelab server\` in a child process), over REST (HTTPS/1.1
  keep-alive, JSON, the same token) and through the in-process client; the reference is raw etcd
  puts of the same value size with the etcd3 client;
- watch delivery latency (write call → event consumed by the client) with 100 watchers (gRPC,
  REST) while 2,000 Pods are written at a steady 200/s, after a warm-up; the reference is 100
  etcd3 watchers on a prefix;
- listing 10,000 Pods through gRPC and REST (JSON) from the watch cache; the reference is etcd's
  own range of the same 10,000 values with the etcd3 client;
- watch fan-out (since 2026-12-06): the kubelab server's CPU per event delivered to 1,000 REST
  watchers vs 1,000 gRPC watchers, beyond that of the same creates without watchers.

Rows marked "raw gRPC", and REST rows "not parsed", skip the client's decoding (the events or the
list answer stay bytes): they tell the server's and the transport's share from the client's. The
CPU columns give the cores (or milliseconds) used by the benchmark process, the kubelab server and
etcd during each case; a server's event loop can also be busy without using CPU (SQLite commits
wait for fsync on it). Options: \`npm run bench:store -- --no-append --phases watch --profile
/tmp/prof\` (see the top of the script).

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

// ------------------------------------------------------------------------------ the summary table

/** A benchmark's row in the summary table that opens BENCHMARKS.md. */
export interface SummaryRow {
  bench: string;
  date: string;
  machine: string;
  figures: string;
  result: string;
}

const SUMMARY_INTRO =
  'The latest run of each benchmark that keeps a row here (its dated section below has the details; ' +
  'compare figures only within one machine and day):';

/** Which of our fields a column of an existing summary table shows, by its heading. */
function fieldOf(heading: string): keyof SummaryRow {
  const h = heading.toLowerCase();
  if (/bench|script|name/.test(h)) return 'bench';
  if (/date|when|run/.test(h)) return 'date';
  if (/machine|host|cpu/.test(h)) return 'machine';
  if (/result|status|check|verdict|pass/.test(h)) return 'result';
  return 'figures';
}

const cells = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

/**
 * Adds or replaces the row of `row.bench` in the summary table at the top of BENCHMARKS.md (the
 * first table before the first dated section whose first heading names the benchmark); makes
 * that table, after the title, if there is none.
 */
export function upsertSummaryRow(path: string, row: SummaryRow): void {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  const lines = text.split('\n');
  const firstSection = lines.findIndex((l) => l.startsWith('## '));
  const introEnd = firstSection < 0 ? lines.length : firstSection;
  const esc = (v: string) => v.replace(/\|/g, '\\|');
  let head = -1;
  for (let i = 0; i + 1 < introEnd; i++)
    if (
      /^\|/.test(lines[i]) &&
      /^\|\s*:?-{3}/.test(lines[i + 1]) &&
      fieldOf(cells(lines[i])[0]) === 'bench'
    ) {
      head = i;
      break;
    }
  if (head < 0) {
    const title = lines.findIndex((l) => l.startsWith('# '));
    const header = ['benchmark', 'date (UTC)', 'machine', 'figures', 'result'];
    const made = table(
      header,
      ['l', 'l', 'l', 'l', 'l'],
      [[row.bench, row.date, row.machine, row.figures, row.result].map(esc)],
    );
    const block = ['', SUMMARY_INTRO, '', ...made.split('\n')];
    if (lines[title + 1] !== '') block.push('');
    lines.splice(title + 1, 0, ...block);
    writeFileSync(path, lines.join('\n'));
    return;
  }
  const fields = cells(lines[head]).map(fieldOf);
  const line = `| ${fields.map((f) => esc(f === 'result' ? withVerdict(row.result) : row[f])).join(' | ')} |`;
  let end = head + 2;
  while (end < introEnd && /^\|/.test(lines[end])) end++;
  const mine = lines
    .slice(head + 2, end)
    .findIndex((l) => cells(l)[0]?.includes(row.bench.replace(/`/g, '')));
  if (mine >= 0) lines[head + 2 + mine] = line;
  else lines.splice(end, 0, line);
  writeFileSync(path, linkSummaryRows(lines.join('\n')));
}

/**
 * A result led by PASS or MISS, so a reader sees it first: from "N of M targets met" (or goals,
 * checks) or a plain "pass"/"fail"; a result with no goals ("–") is left as it is.
 */
export function withVerdict(result: string): string {
  if (/^\*{0,2}(PASS|MISS)\b/.test(result)) return result;
  const counted = /(\d+) of (\d+) (?:targets|goals|checks)/.exec(result);
  if (counted) return `${counted[1] === counted[2] ? 'PASS' : 'MISS'}: ${result}`;
  const plain = /^(pass|fail)\b[:\s]*(.*)$/is.exec(result);
  if (plain) return `${plain[1].toLowerCase() === 'pass' ? 'PASS' : 'MISS'}${plain[2] ? ` ${plain[2]}` : ''}`;
  return result;
}

/** The anchor GitHub gives a heading (github-slugger's rule), `-N` added for repeats. */
function anchorsOf(headings: string[]): string[] {
  const seen = new Map<string, number>();
  return headings.map((h) => {
    const slug = h
      .replace(/^#+\s*/, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    return n ? `${slug}-${n}` : slug;
  });
}

/**
 * Makes each summary row's benchmark name a link to its latest section: the last `## ` heading
 * that starts with a time of the row's date cell, or else the last one naming the benchmark.
 */
export function linkSummaryRows(text: string): string {
  const lines = text.split('\n');
  const headings = lines.filter((l) => l.startsWith('## '));
  const anchors = anchorsOf(headings);
  const firstSection = lines.findIndex((l) => l.startsWith('## '));
  const end = firstSection < 0 ? lines.length : firstSection;
  const head = lines.findIndex((l, i) => i + 1 < end && /^\|/.test(l) && /^\|\s*:?-{3}/.test(lines[i + 1]));
  if (head < 0) return text;
  const fields = cells(lines[head]).map(fieldOf);
  const benchAt = fields.indexOf('bench');
  const dateAt = fields.indexOf('date');
  for (let i = head + 2; i < end && /^\|/.test(lines[i]); i++) {
    const row = cells(lines[i]);
    const name = /bench:[\w-]+/.exec(row[benchAt] ?? '')?.[0];
    const times = (row[dateAt] ?? '').match(/\d{4}-\d\d-\d\d \d\d:\d\d/g) ?? [];
    let at = -1;
    for (let h = headings.length - 1; h >= 0 && at < 0; h--)
      if (times.some((t) => headings[h].startsWith(`## ${t} UTC`))) at = h;
    for (let h = headings.length - 1; h >= 0 && at < 0; h--)
      if (name && headings[h].includes(`\`npm run ${name}\``)) at = h;
    if (at < 0) continue;
    const label = (row[benchAt] ?? '').replace(/^\[(.*)\]\(#[^)]*\)$/, '$1');
    row[benchAt] = `[${label}](#${anchors[at]})`;
    const resultAt = fields.indexOf('result');
    if (resultAt >= 0 && row[resultAt]) row[resultAt] = withVerdict(row[resultAt]);
    lines[i] = `| ${row.join(' | ')} |`;
  }
  return lines.join('\n');
}
