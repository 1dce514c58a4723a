/**
 * kubectl-style tables: no borders, UPPERCASE headers, columns separated by three spaces,
 * no trailing blanks. Rendering is cli-table3's; this file only configures it borderless and
 * keeps the column widths of a watch's rows in step with the table printed before them.
 */
import Table from 'cli-table3';

const BORDERLESS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '   ',
};

function render(rows: string[][], colWidths?: number[]): { text: string; widths: number[] } {
  const table = new Table({
    chars: BORDERLESS,
    style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [], compact: true },
    wordWrap: false,
    ...(colWidths ? { colWidths } : {}),
  });
  // cli-table3 drops a row of zero cells: keep the shape even for a row of empty strings.
  table.push(...rows.map((r) => r.map((c) => (c === '' ? ' ' : c))));
  const text = table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
  return { text, widths: [...(table.options.colWidths as number[])] };
}

/** The rows (the header first, if any) as aligned text, one line per row, no final newline. */
export function formatTable(rows: string[][]): string {
  if (!rows.length) return '';
  return render(rows).text;
}

/**
 * Prints the rows of a table over time (`get -w`): each batch is aligned with what was printed
 * before, and a column only widens when a new value needs it.
 */
export class StreamingTable {
  private widths: number[] = [];

  format(rows: string[][]): string {
    if (!rows.length) return '';
    const own = render(rows).widths;
    this.widths = own.map((w, i) => Math.max(w, this.widths[i] ?? 0));
    return render(rows, this.widths).text;
  }
}
