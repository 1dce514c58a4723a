/**
 * Kubernetes JSON for objects, lists and watch events. A cached object's JSON is made once per
 * version, as UTF-8 bytes, and kept with the cache entry (as the gRPC door keeps its protobuf
 * encodings there): a watch event is the same bytes written to every watcher between a shared
 * prefix and suffix, and a list answer is those bytes concatenated once, never a string built
 * and converted per reader.
 */
import type { KindInfo } from '../../client/api/kinds.js';
import type { KubeObject } from '../../client/api/types.js';
import type { CachedObject } from '../apiserver/watchcache.js';

interface RestMemo {
  /** Distinct from the gRPC door's keys: both keep their encodings in the same memo. */
  restJson?: Buffer;
}

export function jsonOfObject(obj: KubeObject): Buffer {
  return Buffer.from(JSON.stringify(obj));
}

export function jsonOfEntry(entry: CachedObject): Buffer {
  const memo = (entry.memo ??= {}) as RestMemo;
  return (memo.restJson ??= Buffer.from(JSON.stringify(entry.object)));
}

const COMMA = Buffer.from(',');

export function listJson(
  info: KindInfo,
  items: Buffer[],
  meta: { resourceVersion: string; continue?: string; remainingItemCount?: number },
): Buffer {
  const metadata: Record<string, unknown> = { resourceVersion: meta.resourceVersion };
  if (meta.continue) metadata.continue = meta.continue;
  if (meta.remainingItemCount !== undefined) metadata.remainingItemCount = meta.remainingItemCount;
  const head = Buffer.from(
    `{"kind":${JSON.stringify(`${info.kind}List`)},"apiVersion":${JSON.stringify(info.apiVersion)},"metadata":${JSON.stringify(metadata)},"items":[`,
  );
  const parts: Buffer[] = [head];
  for (const [i, item] of items.entries()) {
    if (i) parts.push(COMMA);
    parts.push(item);
  }
  parts.push(Buffer.from(']}'));
  return Buffer.concat(parts);
}

const EVENT_PREFIXES = new Map<string, Buffer>();
const EVENT_SUFFIX = Buffer.from('}\n');

/**
 * One line of a watch stream (newline-delimited JSON, as Kubernetes sends), as the chunks to
 * write: the event type's prefix, the object's JSON, the suffix — all shared, none copied.
 */
export function watchEventChunks(type: string, objectJson: Buffer): Buffer[] {
  let prefix = EVENT_PREFIXES.get(type);
  if (!prefix) EVENT_PREFIXES.set(type, (prefix = Buffer.from(`{"type":${JSON.stringify(type)},"object":`)));
  return [prefix, objectJson, EVENT_SUFFIX];
}
