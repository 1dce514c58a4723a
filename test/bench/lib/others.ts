/**
 * Other benchmarks running on this machine (Linux /proc; none elsewhere): on a 2-core machine
 * shared with other people, their load skews every latency, and a report should name them.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** This process and its ancestors (npm, sh, tsx's wrapper): their command lines name this benchmark too. */
function lineage(): Set<number> {
  const out = new Set<number>();
  for (let pid = process.pid; pid > 1 && !out.has(pid);) {
    out.add(pid);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return out;
}

/**
 * Command lines of the other benchmarks' main processes (`test/bench/*.bench.ts …`, as run by
 * tsx), and of their hollow children; this process, its ancestors and its children are left out.
 */
export function otherBenchmarks(): string[] {
  const mine = lineage();
  const out = new Set<string>();
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || mine.has(Number(entry))) continue;
      try {
        const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
        if (!/\.bench\.ts|hollow-child\.ts/.test(cmd)) continue;
        // The innermost node process only (not npm, sh or tsx's wrapper), and not a child of ours.
        if (!cmd.startsWith(process.execPath) || !/loader\.mjs|hollow-child/.test(cmd)) continue;
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (mine.has(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))) continue;
        out.add(cmd.replace(/^.*?(test\/bench\/)/, '$1'));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return [...out];
}
