/**
 * Building describe output as kubectl does: lines at indent levels with tab-separated cells,
 * aligned at the end by alignTabs; helpers for kubectl's ways of printing maps, lists and times.
 */
import { alignTabs } from './tabwriter.js';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad2 = (n: number) => String(n).padStart(2, '0');

/** Go's time.RFC1123Z in UTC ("Mon, 02 Jan 2006 15:04:05 +0000"), kubectl describe's format; <unset> when absent. */
export function describeTime(timestamp: string | undefined): string {
  if (!timestamp) return '<unset>';
  const d = new Date(timestamp);
  if (Number.isNaN(d.getTime())) return timestamp;
  return `${DAYS[d.getUTCDay()]}, ${pad2(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} +0000`;
}

export class DescribeWriter {
  private readonly lines: string[] = [];

  /** One line at `level` (two spaces each); cells are joined by tabs for alignment. */
  line(level: number, ...cells: string[]): this {
    this.lines.push(`${'  '.repeat(level)}${cells.join('\t')}`);
    return this;
  }

  /** "Label:  value", or "Label:  <none>" for an empty value. */
  field(level: number, label: string, value: string | number | boolean | undefined): this {
    const text = value === undefined || value === '' ? '<none>' : String(value);
    return this.line(level, `${label}:`, text);
  }

  /** kubectl's printLabelsMultiline: the first entry beside the label, the rest below it, sorted. */
  map(level: number, label: string, map: Record<string, string> | undefined, separator = '='): this {
    const entries = Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (!entries.length) return this.field(level, label, '<none>');
    entries.forEach(([k, v], i) => {
      const text = `${k}${separator}${v}`;
      if (i === 0) this.line(level, `${label}:`, text);
      else this.line(level, '', text);
    });
    return this;
  }

  /** Several values: the first beside the label, the rest below it. */
  list(level: number, label: string, values: string[]): this {
    if (!values.length) return this.field(level, label, '<none>');
    values.forEach((v, i) => (i === 0 ? this.line(level, `${label}:`, v) : this.line(level, '', v)));
    return this;
  }

  /** A small table inside describe output: header, dashes, rows. */
  table(level: number, headers: string[], rows: string[][]): this {
    this.line(level, ...headers);
    this.line(level, ...headers.map((h) => '-'.repeat(h.length)));
    for (const r of rows) this.line(level, ...r);
    return this;
  }

  toString(): string {
    return `${alignTabs(this.lines.join('\n'))}\n`;
  }
}
