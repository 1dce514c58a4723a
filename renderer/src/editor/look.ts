/**
 * The YAML editor's look, drawn with the theme's CSS variables so it follows light and dark
 * without rebuilding the editor: colours for keys, strings, plain values and comments, and
 * the marks for lines with errors.
 */
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import type { Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { tags } from '@lezer/highlight';

const highlight = HighlightStyle.define([
  { tag: tags.definition(tags.propertyName), color: 'var(--syn-key)' },
  { tag: [tags.string, tags.special(tags.string)], color: 'var(--syn-string)' },
  { tag: tags.content, color: 'var(--syn-value)' },
  { tag: tags.lineComment, color: 'var(--syn-comment)', fontStyle: 'italic' },
  { tag: [tags.separator, tags.punctuation, tags.squareBracket, tags.brace], color: 'var(--syn-punct)' },
  { tag: [tags.meta, tags.keyword, tags.typeName, tags.labelName], color: 'var(--syn-meta)' },
]);

const frame = EditorView.theme({
  '&': {
    height: '100%',
    backgroundColor: 'var(--surface)',
    color: 'var(--fg)',
    border: '1px solid var(--line)',
    borderRadius: 'var(--radius)',
  },
  '&.cm-focused': { outline: '2px solid var(--accent-soft)', outlineOffset: '1px' },
  '.cm-scroller': { fontFamily: 'var(--mono)', fontSize: '13px', lineHeight: '1.5' },
  '.cm-content': { caretColor: 'var(--fg)' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--fg)' },
  '.cm-gutters': {
    backgroundColor: 'var(--surface)',
    color: 'var(--muted)',
    borderRight: '1px solid var(--line-soft)',
  },
  '.cm-activeLine': { backgroundColor: 'var(--hover)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--hover)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': {
    backgroundColor: 'var(--accent-soft) !important',
  },
  '.cm-error-line': { backgroundColor: 'var(--error-line)', boxShadow: 'inset 3px 0 0 var(--bad)' },
  '.cm-field-error': {
    color: 'var(--bad)',
    fontFamily: 'system-ui, sans-serif',
    fontSize: '12.5px',
    padding: '1px 8px 3px 12px',
    whiteSpace: 'normal',
    backgroundColor: 'var(--error-line)',
  },
  '.cm-field-error code': { background: 'none', padding: '0', color: 'inherit' },
  '.cm-tooltip': { backgroundColor: 'var(--surface)', border: '1px solid var(--line)', color: 'var(--fg)' },
  '.cm-panels': { backgroundColor: 'var(--surface)', color: 'var(--fg)' },
});

export const editorLook: Extension = [frame, syntaxHighlighting(highlight)];
