/**
 * Kubernetes JSON for objects, lists and watch events. A cached object's JSON is made once per
 * version and kept with the cache entry (as the gRPC door keeps its protobuf encodings there),
 * so a list or a watch event costs every further reader a string copy, not a stringify.
 */
import type { KindInfo } from '../../client/api/kinds.js';
import type { KubeObject } from '../../client/api/types.js';
import type { CachedObject } from '../apiserver/watchcache.js';

interface RestMemo {
  /** Distinct from the gRPC door's keys: both keep their encodings in the same memo. */
  restJson?: string;
}

export function jsonOfObject(obj: KubeObject): string {
  return JSON.stringify(obj);
}

export function jsonOfEntry(entry: CachedObject): string {
  const memo = (entry.memo ??= {}) as RestMemo;
  return (memo.restJson ??= JSON.stringify(entry.object));
}

export function listJson(
  info: KindInfo,
  items: string[],
  meta: { resourceVersion: string; continue?: string; remainingItemCount?: number },
): string {
  const metadata: Record<string, unknown> = { resourceVersion: meta.resourceVersion };
  if (meta.continue) metadata.continue = meta.continue;
  if (meta.remainingItemCount !== undefined) metadata.remainingItemCount = meta.remainingItemCount;
  return `{"kind":${JSON.stringify(`${info.kind}List`)},"apiVersion":${JSON.stringify(info.apiVersion)},"metadata":${JSON.stringify(metadata)},"items":[${items.join(',')}]}`;
}

/** One line of a watch stream (newline-delimited JSON, as Kubernetes sends). */
export function watchEventLine(type: string, objectJson: string): string {
  return `{"type":${JSON.stringify(type)},"object":${objectJson}}\n`;
}
