/** A ConfigMap's keys as its page lists them: text values in full, binary ones by size only. */
import type { ConfigMap } from '../../../client/api/types.js';
import { base64Bytes, utf8Bytes } from '../util/base64.js';

export type ConfigMapEntry =
  { key: string; binary: false; value: string; bytes: number } | { key: string; binary: true; bytes: number };

/** Every key of data and binaryData, by name. */
export function configMapEntries(cm: ConfigMap): ConfigMapEntry[] {
  const text = Object.entries(cm.data ?? {}).map(([key, value]): ConfigMapEntry => ({
    key,
    binary: false,
    value,
    bytes: utf8Bytes(value),
  }));
  const binary = Object.entries(cm.binaryData ?? {}).map(([key, value]): ConfigMapEntry => ({
    key,
    binary: true,
    bytes: base64Bytes(value),
  }));
  return [...text, ...binary].sort((a, b) => a.key.localeCompare(b.key));
}

/** DATA as `kubectl get configmaps` counts it: keys in data and binaryData. */
export function dataCount(cm: ConfigMap): number {
  return Object.keys(cm.data ?? {}).length + Object.keys(cm.binaryData ?? {}).length;
}
