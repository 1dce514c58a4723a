/**
 * Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`): kubectl asks
 * for a Table and prints its columns, so `kubectl get` shows what a real cluster shows. The
 * columns are labctl's own (client/print/columns): one definition, two printers. `-o wide`
 * shows the columns of priority 1; kubectl adds NAMESPACE and labels from each row's object.
 */
import type { KindInfo } from '../../client/api/kinds.js';
import type { KubeObject } from '../../client/api/types.js';
import { columnsFor } from '../../client/print/columns/index.js';
import { VERSION } from '../version.js';

export interface TableRequest {
  /** meta.k8s.io/v1 or meta.k8s.io/v1beta1, as asked. */
  apiVersion: string;
  /** What each row carries: nothing, the object's metadata (the default) or the object. */
  includeObject: 'None' | 'Metadata' | 'Object';
}

/** Reads the Accept header: a Table when one of its media types asks for it. */
export function tableRequested(
  accept: string | undefined,
  includeObject: string | null,
): TableRequest | undefined {
  if (!accept) return undefined;
  for (const mediaType of accept.split(',')) {
    const [type, ...params] = mediaType.split(';').map((p) => p.trim());
    if (type !== 'application/json') continue;
    const p = new Map(params.map((kv) => kv.split('=').map((s) => s.trim()) as [string, string]));
    if (p.get('as') !== 'Table' || p.get('g') !== 'meta.k8s.io') continue;
    const v = p.get('v');
    if (v !== 'v1' && v !== 'v1beta1') continue;
    return {
      apiVersion: `meta.k8s.io/${v}`,
      includeObject: includeObject === 'None' || includeObject === 'Object' ? includeObject : 'Metadata',
    };
  }
  return undefined;
}

function columnDefinitions(info: KindInfo): Array<Record<string, unknown>> {
  const columns = columnsFor(info.kind);
  const usual = columns.headers(false);
  const all = columns.headers(true);
  const appended = usual.every((h, i) => all[i] === h);
  return (appended ? all : usual).map((name, i) => ({
    name,
    type: 'string',
    format: i === 0 ? 'name' : '',
    description: '',
    priority: i < usual.length ? 0 : 1,
  }));
}

function rowObject(obj: KubeObject, request: TableRequest): Record<string, unknown> | undefined {
  if (request.includeObject === 'None') return undefined;
  if (request.includeObject === 'Object') return obj as Record<string, unknown>;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata ?? {} };
}

export function tableOf(
  info: KindInfo,
  objects: KubeObject[],
  request: TableRequest,
  now: number,
  options: { metadata?: Record<string, unknown>; headers?: boolean } = {},
): Record<string, unknown> {
  const columns = columnsFor(info.kind);
  const definitions = columnDefinitions(info);
  const wide = definitions.length > columns.headers(false).length;
  return {
    kind: 'Table',
    apiVersion: request.apiVersion,
    metadata: options.metadata ?? {},
    ...(options.headers === false ? {} : { columnDefinitions: definitions }),
    rows: objects.map((obj) => {
      const object = rowObject(obj, request);
      return {
        cells: columns.cells(obj, now, wide, { serverVersion: VERSION }),
        ...(object ? { object } : {}),
      };
    }),
  };
}
