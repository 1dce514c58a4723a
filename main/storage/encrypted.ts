/**
 * A Storage that encrypts the values of some keys (Secrets) on their way in and decrypts them on
 * their way out — gets, lists, watches, conflicts, deletes — so both stores (SQLite and etcd)
 * hold them only encrypted and everything above the storage sees plain objects. A value that
 * cannot be decrypted (a key missing from the key file) is served as an object of its kind with
 * no data and an annotation saying why, and logged by key name, never by value.
 */
import type { Logger } from '../logging.js';
import { KeyFileError, type ValueEncryption } from './encryption.js';
import {
  isStorageError,
  StorageError,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Storage,
  type StorageEvent,
  type WatchCallbacks,
  type WatchHandle,
} from './types.js';

export const ENCRYPTION_ERROR_ANNOTATION = 'kubelab.io/encryption-error';

/** Encrypts the values of the keys under `coveredPrefix` (Secrets' /registry/secrets/). */
export function encryptedStorage(
  inner: Storage,
  encryption: ValueEncryption,
  coveredPrefix: string,
  logger: Logger,
): Storage {
  const covers = (key: string) => key.startsWith(coveredPrefix);
  // A list or watch of another kind's prefix holds no covered key: its items pass untouched.
  const mayHoldCovered = (prefix: string) =>
    prefix.startsWith(coveredPrefix) || coveredPrefix.startsWith(prefix);
  const open = (key: string, value: string): string => {
    if (!covers(key)) return value;
    try {
      return encryption.decrypt(key, value);
    } catch (err) {
      if (!(err instanceof KeyFileError)) throw err;
      logger.error(
        { key, err: err.message },
        'a stored value does not decrypt; check the encryption key file',
      );
      return unreadable(key, err.message);
    }
  };
  const seal = (key: string, value: string) => (covers(key) ? encryption.encrypt(key, value) : value);
  const openKv = (kv: KeyValue): KeyValue => (covers(kv.key) ? { ...kv, value: open(kv.key, kv.value) } : kv);
  const openEvent = (e: StorageEvent): StorageEvent =>
    covers(e.key)
      ? {
          ...e,
          value: open(e.key, e.value),
          ...(e.prevValue !== undefined ? { prevValue: open(e.key, e.prevValue) } : {}),
        }
      : e;
  const openError = (err: unknown): never => {
    if (isStorageError(err) && err.details.current && covers(err.details.current.key))
      throw new StorageError(err.code, err.message, { ...err.details, current: openKv(err.details.current) });
    throw err;
  };
  // The wrapper inherits from the store, so what a backend offers beyond Storage (etcd's
  // compactor) stays reachable through it.
  const overrides: Storage = {
    backend: inner.backend,
    async get(key) {
      const kv = await inner.get(key);
      return kv && openKv(kv);
    },
    async list(prefix: string, options?: ListOptions): Promise<ListResult> {
      const result = await inner.list(prefix, options);
      return mayHoldCovered(prefix) ? { ...result, items: result.items.map(openKv) } : result;
    },
    async create(key, value) {
      return openKv(await inner.create(key, seal(key, value)).catch(openError));
    },
    async update(key, value, expectedRevision) {
      return openKv(await inner.update(key, seal(key, value), expectedRevision).catch(openError));
    },
    async delete(key, expectedRevision) {
      return openKv(await inner.delete(key, expectedRevision).catch(openError));
    },
    watch(prefix: string, fromRevision: number, callbacks: WatchCallbacks): WatchHandle {
      if (!mayHoldCovered(prefix)) return inner.watch(prefix, fromRevision, callbacks);
      return inner.watch(prefix, fromRevision, {
        ...callbacks,
        onEvents: (events) => callbacks.onEvents(events.map(openEvent)),
      });
    },
    currentRevision: () => inner.currentRevision(),
    compactedRevision: () => inner.compactedRevision(),
    compact: (revision) => inner.compact(revision),
    ...(inner.registerMetrics ? { registerMetrics: (r) => inner.registerMetrics!(r) } : {}),
    close: () => inner.close(),
  };
  return Object.assign(Object.create(inner) as Storage, overrides);
}

/** What an undecryptable value is served as: its object, named from its key, without data. */
function unreadable(key: string, why: string): string {
  // /registry/secrets/NAMESPACE/NAME
  const [, , , namespace, name] = key.split('/');
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, annotations: { [ENCRYPTION_ERROR_ANNOTATION]: why } },
  });
}
