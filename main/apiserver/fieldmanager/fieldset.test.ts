import { describe, expect, it } from 'vitest';
import { FieldSet, type FieldPath } from './fieldset.js';

function setOf(...paths: FieldPath[]): FieldSet {
  const s = new FieldSet();
  for (const p of paths) s.insert(p);
  return s;
}

/** Every set of up to 3 members drawn from a few paths that nest and share prefixes. */
function allSets(): FieldSet[] {
  const paths: FieldPath[] = [
    ['f:spec'],
    ['f:spec', 'f:renewTime'],
    ['f:spec', 'f:holderIdentity'],
    ['f:metadata', 'f:labels', 'f:app'],
    ['f:status', 'k:{"type":"Ready"}'],
    ['f:status', 'k:{"type":"Ready"}', 'f:status'],
  ];
  const sets: FieldSet[] = [new FieldSet()];
  for (let a = 0; a < paths.length; a++) {
    sets.push(setOf(paths[a]));
    for (let b = a + 1; b < paths.length; b++) {
      sets.push(setOf(paths[a], paths[b]));
      for (let c = b + 1; c < paths.length; c++) sets.push(setOf(paths[a], paths[b], paths[c]));
    }
  }
  return sets;
}

describe('FieldSet checks made without building a set', () => {
  const sets = allSets();

  it('intersects exactly when the intersection has a member', () => {
    for (const a of sets) for (const b of sets) expect(a.intersects(b)).toBe(!a.intersection(b).isEmpty());
  });

  it('covers exactly when nothing of the other set is left after taking this one away', () => {
    for (const a of sets) for (const b of sets) expect(a.covers(b)).toBe(b.difference(a).isEmpty());
  });

  it('tells a field from the fields below it', () => {
    const spec = setOf(['f:spec']);
    const renewTime = setOf(['f:spec', 'f:renewTime']);
    expect(spec.intersects(renewTime)).toBe(false);
    expect(spec.covers(renewTime)).toBe(false);
    expect(setOf(['f:spec'], ['f:spec', 'f:renewTime']).covers(renewTime)).toBe(true);
  });
});
