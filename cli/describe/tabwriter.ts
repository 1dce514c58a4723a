/**
 * Go's text/tabwriter as kubectl's describe uses it (minwidth 0, padding 2, spaces): cells end
 * at tabs; a column is aligned over the block of consecutive lines that have a cell in it, so
 * "Name:\tweb" lines line up while nested sections keep their own alignment. The last cell of
 * a line is never padded.
 */

const PADDING = 2;

type Line = string[];

function writeLines(out: string[], lines: Line[], widths: number[]): void {
  for (const line of lines) {
    let text = '';
    line.forEach((cell, j) => {
      text += cell;
      if (j < line.length - 1 && j < widths.length) text += ' '.repeat(Math.max(0, widths[j] - cell.length));
    });
    out.push(text.trimEnd());
  }
}

function format(out: string[], lines: Line[], widths: number[]): void {
  const column = widths.length;
  let start = 0;
  let i = 0;
  while (i < lines.length) {
    if (column >= lines[i].length - 1) {
      i++;
      continue;
    }
    // A block of lines with a cell in this column starts here: print what came before it.
    writeLines(out, lines.slice(start, i), widths);
    start = i;
    let width = 0;
    for (; i < lines.length && column < lines[i].length - 1; i++) {
      width = Math.max(width, lines[i][column].length + PADDING);
    }
    format(out, lines.slice(start, i), [...widths, width]);
    start = i;
  }
  writeLines(out, lines.slice(start), widths);
}

/** Aligns tab-separated text the way kubectl describe prints it. */
export function alignTabs(text: string): string {
  const lines = text.split('\n').map((l) => l.split('\t'));
  const out: string[] = [];
  format(out, lines, []);
  return out.join('\n');
}
