/**
 * Errors at their lines in the YAML editor: the line is marked and the message sits right
 * under it, visible without hovering. Marks follow their lines while the text is edited, and
 * are replaced by the next set (an empty set clears them).
 */
import { StateEffect, StateField, type Text } from '@codemirror/state';
import { Decoration, EditorView, WidgetType, type DecorationSet } from '@codemirror/view';

export interface LineError {
  /** 1-based; a line past the end marks the last line. */
  line: number;
  message: string;
  /** The API field at fault, when the error names one. */
  field?: string;
}

export const setLineErrors = StateEffect.define<LineError[]>();

class ErrorMessage extends WidgetType {
  constructor(
    readonly message: string,
    readonly field: string | undefined,
  ) {
    super();
  }

  override eq(other: ErrorMessage): boolean {
    return other.message === this.message && other.field === this.field;
  }

  toDOM(): HTMLElement {
    const box = document.createElement('div');
    box.className = 'cm-field-error';
    box.setAttribute('data-testid', 'line-error');
    if (this.field) {
      box.dataset.field = this.field;
      const code = document.createElement('code');
      code.textContent = this.field;
      box.append(code, ': ');
    }
    box.append(this.message);
    return box;
  }

  override get estimatedHeight(): number {
    return 22;
  }
}

function decorate(doc: Text, errors: readonly LineError[]): DecorationSet {
  const byLine = new Map<number, LineError[]>();
  for (const e of errors) {
    const n = Math.min(Math.max(1, e.line), doc.lines);
    byLine.set(n, [...(byLine.get(n) ?? []), e]);
  }
  const ranges = [...byLine.entries()]
    .sort(([a], [b]) => a - b)
    .flatMap(([n, lineErrors]) => {
      const line = doc.line(n);
      return [
        Decoration.line({ class: 'cm-error-line' }).range(line.from),
        ...lineErrors.map((e) =>
          Decoration.widget({ widget: new ErrorMessage(e.message, e.field), block: true, side: 1 }).range(
            line.to,
          ),
        ),
      ];
    });
  return Decoration.set(ranges, true);
}

export const lineErrors = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(decorations, tr) {
    let next = decorations.map(tr.changes);
    for (const effect of tr.effects)
      if (effect.is(setLineErrors)) next = decorate(tr.state.doc, effect.value);
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});
