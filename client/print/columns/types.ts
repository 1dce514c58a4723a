/** What a kind's table looks like: its headers, and each object's cells (kubectl's printers). */
import type { KubeObject } from '../../api/types.js';

export interface KindColumns<T = KubeObject> {
  /** The headers, with `-o wide`'s extra columns when `wide`. */
  headers(wide: boolean): string[];
  /** One object's cells, matching headers(wide); `now` is for ages. */
  cells(object: T, now: number, wide: boolean, context?: PrintContext): string[];
}

/** What a table knows beside the objects. */
export interface PrintContext {
  /** The control plane's version: a node whose agent is older says so. */
  serverVersion?: string;
}

/** kubectl prints missing values as <none>. */
export function orNone(value: string | undefined): string {
  return value ? value : '<none>';
}

/** Headers of a table whose wide form appends columns to the usual ones. */
export function appendedHeaders(usual: string[], wideExtra: string[]): (wide: boolean) => string[] {
  return (wide) => (wide ? [...usual, ...wideExtra] : usual);
}
