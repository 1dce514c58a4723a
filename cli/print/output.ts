/**
 * `-o` formats: the kind's table (and `wide`), `yaml`, `json` (one object as itself, several
 * as a v1 List, like kubectl), and `name` (`pod/web`).
 */
import { InvalidArgumentError } from 'commander';
import { stringify } from 'yaml';
import type { KindInfo } from '../../client/api/kinds.js';
import type { KubeObject } from '../../client/api/types.js';
import { objectRef } from '../resources.js';
import { columnsFor } from '../../client/print/columns/index.js';
import { mapText } from '../../client/print/columns/daemonset.js';

export const OUTPUT_FORMATS = ['wide', 'yaml', 'json', 'name'] as const;
export type OutputFormat = '' | (typeof OUTPUT_FORMATS)[number];

/** commander parser for -o. */
export function outputFormat(value: string): OutputFormat {
  if (!(OUTPUT_FORMATS as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(
      `unable to match a printer suitable for the output format "${value}"; allowed formats are: ${OUTPUT_FORMATS.join(', ')}`,
    );
  }
  return value as OutputFormat;
}

/**
 * Objects as the user should see them: with their apiVersion and kind, without wire
 * bookkeeping, and — as kubectl does — without metadata.managedFields unless asked for.
 */
export function forDisplay(info: KindInfo, object: KubeObject, showManagedFields = false): KubeObject {
  const { apiVersion: _a, kind: _k, ...rest } = object as KubeObject & Record<string, unknown>;
  const shown = JSON.parse(
    JSON.stringify({ apiVersion: info.apiVersion, kind: info.kind, ...rest }, (k, v: unknown) =>
      k === '_unknownFields' ? undefined : v,
    ),
  ) as KubeObject;
  if (!showManagedFields) delete shown.metadata?.managedFields;
  return shown;
}

function asDocument(
  items: Array<{ info: KindInfo; object: KubeObject }>,
  single: boolean,
  showManagedFields: boolean,
): unknown {
  const shown = items.map(({ info, object }) => forDisplay(info, object, showManagedFields));
  if (single && shown.length === 1) return shown[0];
  return { apiVersion: 'v1', kind: 'List', items: shown, metadata: { resourceVersion: '' } };
}

/**
 * yaml, json or name output of objects (possibly of several kinds). `single`: the user named
 * exactly one object, so it prints as itself rather than in a List.
 */
export function formatStructured(
  format: 'yaml' | 'json' | 'name',
  items: Array<{ info: KindInfo; object: KubeObject }>,
  single: boolean,
  showManagedFields = false,
): string {
  if (format === 'name') return items.map(({ info, object }) => `${objectRef(info, object)}\n`).join('');
  const doc = asDocument(items, single, showManagedFields);
  return format === 'json' ? `${JSON.stringify(doc, null, 4)}\n` : stringify(doc);
}

/** One object for a watch's yaml/json stream: a YAML document each, or JSON objects in sequence. */
export function formatStreamed(
  format: 'yaml' | 'json',
  info: KindInfo,
  object: KubeObject,
  showManagedFields = false,
): string {
  const shown = forDisplay(info, object, showManagedFields);
  return format === 'json' ? `${JSON.stringify(shown, null, 4)}\n` : `---\n${stringify(shown)}`;
}

export interface TableOptions {
  wide: boolean;
  /** -A: a NAMESPACE column first (for namespaced kinds). */
  namespaceColumn: boolean;
  /** --show-labels: a LABELS column last. */
  showLabels: boolean;
  /** Names as kind/name (when several kinds print together). */
  kindPrefix: boolean;
  now: number;
  /** The control plane's version, for agents older than it. */
  serverVersion?: string;
}

export function tableHeader(info: KindInfo, opts: TableOptions): string[] {
  const headers = columnsFor(info.kind).headers(opts.wide);
  return [
    ...(opts.namespaceColumn && info.namespaced ? ['NAMESPACE'] : []),
    ...headers,
    ...(opts.showLabels ? ['LABELS'] : []),
  ];
}

export function tableRow(info: KindInfo, object: KubeObject, opts: TableOptions): string[] {
  const cells = columnsFor(info.kind).cells(object, opts.now, opts.wide, {
    serverVersion: opts.serverVersion,
  });
  // Only tables whose first column is the name get the kind prefix (events' is LAST SEEN).
  if (opts.kindPrefix && columnsFor(info.kind).headers(false)[0] === 'NAME')
    cells[0] = objectRef(info, object);
  return [
    ...(opts.namespaceColumn && info.namespaced ? [object.metadata?.namespace ?? ''] : []),
    ...cells,
    ...(opts.showLabels ? [mapText(object.metadata?.labels) || '<none>'] : []),
  ];
}
