/**
 * A watch-cache entry that gives up its decoded object once a newer version supersedes it.
 *
 * The history window holds every version written in the last 75 s: at 10,000 nodes that is
 * 100,000 lease renewals and as many node metrics. Decoded, each is dozens of small heap objects
 * (its managedFields alone are a tree) plus the wire encodings made for its watchers, and a
 * mark-compact walks them all; as JSON it is one string with nothing inside to mark. A retired
 * entry keeps that string and what selectors read (its labels and selectable fields), so a watch
 * resuming from an old resourceVersion is filtered without decoding, and only the events it
 * actually receives are decoded and encoded again.
 */
import type { KubeObject } from '../../client/api/types.js';
import { decodeStored } from './codec.js';
import type { CachedObject } from './watchcache.js';

/** What a retired entry keeps for matching label and field selectors. */
export interface Selection {
  readonly labels: Readonly<Record<string, string>> | undefined;
  /** The values of the kind's selectable fields, in the order the watch cache lists them. */
  readonly fields: ReadonlyArray<string | undefined>;
}

export class CacheEntry implements CachedObject {
  memo?: object;
  private decoded: KubeObject | undefined;
  private json: string | undefined;
  private kept: Selection | undefined;

  constructor(
    readonly key: string,
    object: KubeObject,
    readonly rv: number,
  ) {
    this.decoded = object;
  }

  /** The object; a retired entry decodes it again on every read (replays are rare). */
  get object(): KubeObject {
    return this.decoded ?? decodeStored(this.json!, this.rv);
  }

  /** Set once the entry is retired. */
  get selection(): Selection | undefined {
    return this.kept;
  }

  /** Keeps the object as JSON and `selection` for selectors; drops the decoded object and its encodings. */
  retire(selection: Selection): void {
    if (this.decoded === undefined) return;
    this.json = JSON.stringify(this.decoded);
    this.kept = selection;
    this.decoded = undefined;
    this.memo = undefined;
  }
}
