/**
 * metadata.managedFields, kept as Kubernetes' field manager keeps it (k8s.io/apiserver
 * endpoints/handlers/fieldmanager with structured-merge-diff's merge.Updater):
 *
 * - every write records, for the manager that made it, the fields it added or changed
 *   (operation Update); other managers lose those fields, and fields removed leave everyone;
 * - an apply (operation Apply) makes the manager's set exactly the fields of its
 *   configuration: merged onto the live object, fields it applied before and no longer does
 *   are removed unless another applier also applies them, and changing a field another
 *   manager owns is a conflict, unless forced, which takes the field from it.
 *
 * Entries are kept per (manager, operation, subresource); the fields the server owns (name,
 * uid, resourceVersion, …) and those a subresource resets are never tracked.
 */
import { ApiError, echo } from '../../../client/api/errors.js';
import type { KindInfo } from '../../../client/api/kinds.js';
import type { KubeObject, ManagedFieldsEntry, ObjectMeta } from '../../../client/api/types.js';
import type { FieldError } from '../../../client/api/validation.js';
import { FieldSet, printPath, type FieldPath } from './fieldset.js';
import { shapeOf } from './shape.js';
import { compare, fieldSetOf, merge, removeFields } from './typed.js';

export type Operation = 'Apply' | 'Update';

export interface ManagerEntry {
  manager: string;
  operation: Operation;
  subresource: string;
  apiVersion: string;
  time?: string;
  set: FieldSet;
  /**
   * `set` as the store holds it (FieldsV1), while the entry still has the set read from it: a
   * write that leaves an entry's fields as they were (a lease renewal, a status report) then
   * re-encodes nothing.
   */
  stored: Record<string, unknown> | undefined;
}

export interface Writer {
  manager: string;
  /** "" for the object itself, or "status". */
  subresource: string;
  /** RFC 3339, seconds: when entries this write changes were last changed. */
  now: string;
}

/** Kubernetes keeps at most this many Update entries; older ones are merged into one. */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_MANAGER = 'ancient-changes';
/** Owns what an object held when it was first applied without any managed fields. */
export const BEFORE_FIRST_APPLY = 'before-first-apply';
export const MAX_MANAGER_CHARS = 128;

/** Never tracked: the server sets them (k8s' StripMetaManager), plus the delete markers. */
const SERVER_FIELDS: FieldPath[] = [
  ['f:apiVersion'],
  ['f:kind'],
  ...[
    'name',
    'namespace',
    'uid',
    'resourceVersion',
    'generation',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'managedFields',
  ].map((f) => ['f:metadata', `f:${f}`]),
];

/** The fields a write through `subresource` can own. */
function tracked(info: KindInfo, subresource: string, set: FieldSet): FieldSet {
  // The sets handed here are the caller's own, made for this write: changed in place.
  const out = set.dropSubtrees(...SERVER_FIELDS);
  // A status write changes status only; the object itself never changes its status.
  if (subresource === 'status') return out.onlySubtree(['f:status']);
  return info.hasStatus ? out.dropSubtrees(['f:status']) : out;
}

function withoutManagedFields(obj: KubeObject | undefined): KubeObject | undefined {
  if (!obj?.metadata?.managedFields) return obj;
  const { managedFields: _m, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** Checks what a client sent as metadata.managedFields (the server's own always pass). */
export function validateManagedFields(entries: ManagedFieldsEntry[] | undefined): FieldError[] {
  const errors: FieldError[] = [];
  for (const [i, e] of (entries ?? []).entries()) {
    const at = `metadata.managedFields[${i}]`;
    if (e.operation !== 'Apply' && e.operation !== 'Update')
      errors.push({
        field: `${at}.operation`,
        type: 'FieldValueNotSupported',
        value: e.operation ?? '',
        message: 'supported values: "Apply", "Update"',
      });
    if (e.fieldsType !== undefined && e.fieldsType !== 'FieldsV1')
      errors.push({
        field: `${at}.fieldsType`,
        type: 'FieldValueNotSupported',
        value: e.fieldsType,
        message: 'supported values: "FieldsV1"',
      });
    if ((e.manager ?? '').length > MAX_MANAGER_CHARS)
      errors.push({
        field: `${at}.manager`,
        type: 'FieldValueTooLong',
        message: `may not be more than ${MAX_MANAGER_CHARS} characters`,
      });
    if (e.subresource && e.subresource !== 'status')
      errors.push({
        field: `${at}.subresource`,
        type: 'FieldValueNotSupported',
        value: e.subresource,
        message: 'supported values: "", "status"',
      });
    if (e.fieldsV1 !== undefined) {
      try {
        FieldSet.fromFieldsV1(e.fieldsV1, `${at}.fieldsV1`);
      } catch (err) {
        errors.push({ field: `${at}.fieldsV1`, type: 'FieldValueInvalid', message: (err as Error).message });
      }
    }
  }
  return errors;
}

/**
 * Kubernetes' way to drop an object's managed fields: a list holding one empty entry (`[{}]`).
 * (An empty list cannot be told from none in JSON merge patches, so it keeps them.)
 */
export function isResetRequest(entries: ManagedFieldsEntry[] | undefined): boolean {
  return entries?.length === 1 && Object.values(entries[0]).every((v) => v === undefined || v === '');
}

/**
 * The entries as sets; the server's own (stored) are read without checks, a client's after
 * validateManagedFields. `asStored`: the entries are the server's own, whose FieldsV1 an
 * unchanged entry keeps as it is.
 */
export function decodeManagedFields(
  entries: ManagedFieldsEntry[] | undefined,
  asStored = false,
): ManagerEntry[] {
  return (entries ?? []).map((e) => ({
    manager: e.manager ?? '',
    operation: e.operation === 'Apply' ? 'Apply' : 'Update',
    subresource: e.subresource ?? '',
    apiVersion: e.apiVersion ?? '',
    time: e.time,
    set: e.fieldsV1 ? FieldSet.fromFieldsV1(e.fieldsV1, 'metadata.managedFields', true) : new FieldSet(),
    stored: asStored ? (e.fieldsV1 as Record<string, unknown> | undefined) : undefined,
  }));
}

/** As Kubernetes orders them: appliers first, then by time, then by name. */
export function encodeManagedFields(entries: ManagerEntry[]): ManagedFieldsEntry[] {
  return [...entries]
    .sort(
      (a, b) =>
        (a.operation === b.operation ? 0 : a.operation === 'Apply' ? -1 : 1) ||
        (a.time ?? '').localeCompare(b.time ?? '') ||
        a.manager.localeCompare(b.manager) ||
        a.subresource.localeCompare(b.subresource),
    )
    .map((e) => ({
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      ...(e.time ? { time: e.time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1: e.stored ?? e.set.toFieldsV1(),
      ...(e.subresource ? { subresource: e.subresource } : {}),
    }));
}

/**
 * The entry without the fields another manager changed or that left: the entry itself when it
 * had none of them, undefined when none remain (an entry owning nothing goes too).
 */
function without(e: ManagerEntry, changed: FieldSet, removed: FieldSet): ManagerEntry | undefined {
  if (e.set.isEmpty()) return undefined;
  if (!e.set.intersects(changed) && !e.set.intersects(removed)) return e;
  const set = e.set.difference(changed).difference(removed);
  return set.isEmpty() ? undefined : { ...e, set, stored: undefined };
}

function same(e: ManagerEntry, manager: string, operation: Operation, subresource: string): boolean {
  return e.manager === manager && e.operation === operation && e.subresource === subresource;
}

/** Merges the oldest Update entries into one when there are too many (k8s' capManagers). */
function capUpdates(entries: ManagerEntry[]): ManagerEntry[] {
  const updates = entries.filter((e) => e.operation === 'Update');
  if (updates.length <= MAX_UPDATE_MANAGERS) return entries;
  const oldest = [...updates]
    .sort((a, b) => (a.time ?? '').localeCompare(b.time ?? ''))
    .slice(0, updates.length - MAX_UPDATE_MANAGERS + 1);
  const ancient: ManagerEntry = {
    manager: ANCIENT_MANAGER,
    operation: 'Update',
    subresource: '',
    apiVersion: oldest.at(-1)!.apiVersion,
    time: oldest.at(-1)!.time,
    set: oldest.reduce((acc, e) => acc.union(e.set), new FieldSet()),
    stored: undefined,
  };
  return [...entries.filter((e) => !oldest.includes(e)), ancient];
}

/**
 * The managed fields after an Update by `writer` turned `before` (absent on create) into
 * `after`.
 */
export function recordUpdate(
  info: KindInfo,
  before: KubeObject | undefined,
  after: KubeObject,
  entries: ManagerEntry[],
  writer: Writer,
): ManagerEntry[] {
  const shape = shapeOf(info.kind);
  let changed: FieldSet;
  let removed: FieldSet;
  if (!before) {
    // A create: everything is new.
    changed = tracked(info, writer.subresource, fieldSetOf(shape, withoutManagedFields(after)));
    removed = new FieldSet();
  } else {
    const c = compare(shape, withoutManagedFields(before), withoutManagedFields(after));
    changed = tracked(info, writer.subresource, c.added.union(c.modified));
    removed = tracked(info, writer.subresource, c.removed);
  }
  if (changed.isEmpty() && removed.isEmpty()) return entries;
  const out: ManagerEntry[] = [];
  let self: ManagerEntry | undefined;
  for (const e of entries) {
    if (same(e, writer.manager, 'Update', writer.subresource)) {
      self = e;
      continue;
    }
    const kept = without(e, changed, removed);
    if (kept) out.push(kept);
  }
  // A writer changing only fields it already owns (a lease renewal) keeps its set as it was.
  const keeps = self !== undefined && self.set.covers(changed) && !self.set.intersects(removed);
  const set = keeps
    ? self!.set
    : self
      ? self.set.union(changed).difference(removed)
      : changed.difference(removed);
  if (!set.isEmpty())
    out.push({
      manager: writer.manager,
      operation: 'Update',
      subresource: writer.subresource,
      apiVersion: info.apiVersion,
      time: changed.isEmpty() ? self?.time : writer.now,
      set,
      stored: keeps ? self!.stored : undefined,
    });
  return capUpdates(out);
}

/** One field another manager owns and an apply would change. */
export interface Conflict {
  entry: ManagerEntry;
  path: FieldPath;
}

/** How Kubernetes names a manager in a conflict. */
function describeManager(e: ManagerEntry): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update')
    s += e.time ? ` using ${e.apiVersion} at ${e.time}` : ` using ${e.apiVersion}`;
  return s;
}

/** Kubernetes' 409 for an apply that would change others' fields: each field and its owner. */
export function conflictError(info: KindInfo, name: string, conflicts: Conflict[]): ApiError {
  const causes: FieldError[] = conflicts.map((c) => ({
    field: printPath(c.path),
    type: 'FieldManagerConflict',
    message: `conflict with ${describeManager(c.entry)}`,
  }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${describeManager(conflicts[0].entry)}: ${printPath(conflicts[0].path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const m = describeManager(c.entry);
      byManager.set(m, [...(byManager.get(m) ?? []), printPath(c.path)]);
    }
    const lines = [...byManager.keys()]
      .sort()
      .flatMap((m) => [`conflicts with ${m}:`, ...byManager.get(m)!.map((p) => `- ${p}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError('Conflict', message, { kind: info.kind, name, causes });
}

export interface Applied {
  object: KubeObject;
  entries: ManagerEntry[];
}

/**
 * Server-side apply of `config` by `writer` onto `live` (absent: the object is created). The
 * configuration has been checked against the schema; its items' keys are checked here.
 */
export function apply(
  info: KindInfo,
  live: KubeObject | undefined,
  config: KubeObject,
  entries: ManagerEntry[],
  writer: Writer,
  force: boolean,
): Applied {
  const shape = shapeOf(info.kind);
  const name = config.metadata?.name ?? '';
  const configSet = tracked(info, writer.subresource, fieldSetOf(shape, config, true));
  const liveObject = withoutManagedFields(live);
  if (liveObject && entries.length === 0) {
    // An object no one has managed yet: what it holds belongs to someone, so an apply that
    // changes it must say so (or force), as on a cluster upgraded to server-side apply.
    const set = fieldSetOf(shape, liveObject).withoutSubtrees(...SERVER_FIELDS);
    if (!set.isEmpty())
      entries = [
        {
          manager: BEFORE_FIRST_APPLY,
          operation: 'Update',
          subresource: '',
          apiVersion: info.apiVersion,
          set,
          stored: undefined,
        },
      ];
  }
  const self = entries.find((e) => same(e, writer.manager, 'Apply', writer.subresource));
  let merged = merge(shape, liveObject ?? {}, config) as KubeObject;

  if (self) {
    // What this manager applied before and no longer does goes, unless another applier
    // applies it (or something below it) too.
    const othersApplied = entries
      .filter((e) => e !== self && e.operation === 'Apply')
      .reduce((acc, e) => acc.union(e.set), new FieldSet());
    const dropped = self.set.difference(configSet).difference(othersApplied);
    const removable = new FieldSet();
    for (const path of dropped.members()) if (othersApplied.below(path).isEmpty()) removable.insert(path);
    if (!removable.isEmpty()) merged = removeFields(shape, merged, removable) as KubeObject;
  }

  const c = compare(shape, liveObject ?? {}, merged);
  const changed = tracked(info, writer.subresource, c.added.union(c.modified));
  const removed = tracked(info, writer.subresource, c.removed);
  const conflicts: Conflict[] = [];
  const out: ManagerEntry[] = [];
  for (const e of entries) {
    if (e === self) continue;
    const taken = e.set.intersection(changed);
    for (const path of taken.members()) conflicts.push({ entry: e, path });
    const kept = without(e, changed, removed);
    if (kept) out.push(kept);
  }
  if (conflicts.length && !force) {
    // kubectl's first server-side applies take over from its client-side ones without a
    // fight (Kubernetes' lastAppliedManager): a field the last client-side apply set, and
    // that still has that value, is not a conflict for the manager "kubectl".
    const allowed = writer.manager === KUBECTL ? fieldsAsLastApplied(info, liveObject) : undefined;
    const remaining = allowed ? conflicts.filter((c) => !allowed.has(c.path)) : conflicts;
    if (remaining.length) throw conflictError(info, name, remaining);
  }
  const objectChanged = !(changed.isEmpty() && removed.isEmpty());
  if (!configSet.isEmpty())
    out.push({
      manager: writer.manager,
      operation: 'Apply',
      subresource: writer.subresource,
      apiVersion: info.apiVersion,
      time: objectChanged || !self || !self.set.equals(configSet) ? writer.now : self.time,
      set: configSet,
      stored: undefined,
    });
  return { object: merged, entries: capUpdates(out) };
}

/** kubectl's manager for server-side apply, and the annotation of its client-side apply. */
const KUBECTL = 'kubectl';
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The fields the last client-side apply set that still hold the value it set. */
function fieldsAsLastApplied(info: KindInfo, live: KubeObject | undefined): FieldSet | undefined {
  const text = live?.metadata?.annotations?.[LAST_APPLIED_ANNOTATION];
  if (!text) return undefined;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(text);
  } catch {
    return undefined;
  }
  const shape = shapeOf(info.kind);
  let set: FieldSet;
  try {
    set = fieldSetOf(shape, lastApplied);
  } catch {
    return undefined;
  }
  return set.difference(compare(shape, lastApplied, live).modified);
}

/**
 * After kubectl applies server-side an object it applied client-side before, the client-side
 * annotation follows (Kubernetes' lastAppliedUpdater), so a later client-side apply starts
 * from what was applied last. Not a field anyone owns anew: it changes after ownership is
 * decided.
 */
export function followLastApplied(applied: KubeObject, config: KubeObject, manager: string): void {
  const annotations = applied.metadata?.annotations;
  if (manager !== KUBECTL || !annotations?.[LAST_APPLIED_ANNOTATION]) return;
  const { [LAST_APPLIED_ANNOTATION]: _old, ...others } = config.metadata?.annotations ?? {};
  const metadata: ObjectMeta = { ...config.metadata, annotations: others };
  if (Object.keys(others).length === 0) delete metadata.annotations;
  // The live object's maps may be shared with the cache: replaced, never changed in place.
  applied.metadata = {
    ...applied.metadata,
    annotations: { ...annotations, [LAST_APPLIED_ANNOTATION]: JSON.stringify({ ...config, metadata }) },
  };
}

/** A fieldManager a client named: bounded, printable. */
export function checkFieldManager(manager: string): void {
  if (manager.length > MAX_MANAGER_CHARS)
    throw new ApiError(
      'BadRequest',
      `fieldManager "${echo(manager, 40)}" is longer than ${MAX_MANAGER_CHARS} characters; use a shorter name`,
    );
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(manager))
    throw new ApiError(
      'BadRequest',
      'fieldManager may not contain control characters; use a plain name like "my-tool"',
    );
}
