/**
 * kubectl apply's three-way JSON merge patch (CreateThreeWayJSONMergePatch): what the user's
 * manifest changed against the live object, plus nulls for what the previously applied
 * manifest had and this one dropped. Fields only the server or controllers set are left
 * alone, because neither manifest mentions them.
 */
import { deepEqual } from '../../client/util/objects.js';

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The merge patch; an empty object when there is nothing to change. */
export function threeWayMergePatch(original: Json | undefined, modified: Json, current: Json): Json {
  const patch: Json = {};
  for (const [key, want] of Object.entries(modified)) {
    const have = current[key];
    if (isObject(want) && isObject(have)) {
      const sub = threeWayMergePatch(
        isObject(original?.[key]) ? (original[key] as Json) : undefined,
        want,
        have,
      );
      if (Object.keys(sub).length) patch[key] = sub;
    } else if (!deepEqual(want, have)) {
      patch[key] = want;
    }
  }
  for (const [key, had] of Object.entries(original ?? {})) {
    if (key in modified || !(key in current)) continue;
    const have = current[key];
    if (isObject(had) && isObject(have)) {
      // Drop only what the manifest used to set: a map others added to keeps their entries.
      const sub = threeWayMergePatch(had, {}, have);
      if (Object.keys(sub).length) patch[key] = sub;
    } else {
      patch[key] = null;
    }
  }
  return patch;
}
