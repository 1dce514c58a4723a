/**
 * Where a field of an object is in its YAML text: the API names a field at fault by its path,
 * and the editor marks that line. Walks the document's AST (the `yaml` package keeps source
 * ranges) as far as the path goes; a field that is missing (Required value) is placed at its
 * nearest ancestor that is there, marked as not exact. In a manifest of several documents the
 * one where the path goes deepest wins (the first of equals).
 */
import { isMap, isPair, isScalar, isSeq, parseAllDocuments, type Node as YamlNode } from 'yaml';
import { parseFieldPath } from './fieldpath.js';

export interface FieldLocation {
  /** 1-based line of the field (its key, or its item in a list). */
  line: number;
  /** Offset in the text where that line starts. */
  offset: number;
  /** The whole path was found (false: `line` is the deepest ancestor present). */
  exact: boolean;
}

interface Walk {
  offset: number;
  depth: number;
}

function walk(root: unknown, steps: Array<string | number>): Walk {
  let node = root as YamlNode | null | undefined;
  let offset = (node as { range?: [number, number, number] } | null | undefined)?.range?.[0] ?? 0;
  let depth = 0;
  for (const step of steps) {
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(step),
      );
      if (!pair) break;
      offset = (pair.key as YamlNode).range?.[0] ?? offset;
      node = pair.value as YamlNode | null;
    } else if (isSeq(node) && typeof step === 'number') {
      const item = node.items[step] as YamlNode | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else {
      break;
    }
    depth++;
  }
  return { offset, depth };
}

/** The line start at or before `offset`, and its 1-based number. */
function lineAt(text: string, offset: number): { line: number; offset: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, offset: start };
}

export function locateField(text: string, fieldPath: string): FieldLocation | undefined {
  const steps = parseFieldPath(fieldPath);
  let best: Walk | undefined;
  for (const doc of parseAllDocuments(text, { keepSourceTokens: false })) {
    if (!doc.contents) continue;
    const found = walk(doc.contents, steps);
    if (!best || found.depth > best.depth) best = found;
  }
  if (!best) return undefined;
  return { ...lineAt(text, best.offset), exact: best.depth === steps.length };
}
