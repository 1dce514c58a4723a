import { describe, expect, it } from 'vitest';
import {
  LABEL_ARCH,
  LABEL_ARCH_BETA,
  LABEL_OS,
  LABEL_OS_BETA,
  labelFixes,
  labelFixPatch,
  type LabelMirror,
} from './nodelabels.js';

const node = (labels?: Record<string, string>) => ({ metadata: { name: 'n1', labels } });

describe('mirroring the stable OS and arch labels onto the beta ones', () => {
  it('adds missing beta labels and overwrites differing ones, from the stable label', () => {
    expect(
      labelFixes(node({ [LABEL_OS]: 'linux', [LABEL_ARCH]: 'arm64', [LABEL_ARCH_BETA]: 'amd64' })),
    ).toEqual([
      { primary: LABEL_OS, value: 'linux', secondary: LABEL_OS_BETA, secondaryExists: false },
      { primary: LABEL_ARCH, value: 'arm64', secondary: LABEL_ARCH_BETA, secondaryExists: true },
    ]);
  });

  it.each([
    ['no labels', undefined],
    ['no stable labels', { 'kubernetes.io/hostname': 'n1' }],
    [
      'only beta labels (the stable ones are not made up)',
      { [LABEL_OS_BETA]: 'linux', [LABEL_ARCH_BETA]: 'arm' },
    ],
    ['labels already equal', { [LABEL_OS]: 'linux', [LABEL_OS_BETA]: 'linux' }],
    ['equal empty values', { [LABEL_OS]: '', [LABEL_OS_BETA]: '' }],
  ])('has nothing to do with %s', (_what, labels) => {
    expect(labelFixes(node(labels))).toEqual([]);
  });

  it('treats an empty stable value as a value', () => {
    expect(labelFixes(node({ [LABEL_ARCH]: '', [LABEL_ARCH_BETA]: 'amd64' }))).toEqual([
      { primary: LABEL_ARCH, value: '', secondary: LABEL_ARCH_BETA, secondaryExists: true },
    ]);
  });

  it('creates a missing secondary only when the mirror asks for it', () => {
    const mirrors: LabelMirror[] = [{ primary: 'a', secondary: 'b', ensureSecondaryExists: false }];
    expect(labelFixes(node({ a: '1' }), mirrors)).toEqual([]);
    expect(labelFixes(node({ a: '1', b: '2' }), mirrors)).toEqual([
      { primary: 'a', value: '1', secondary: 'b', secondaryExists: true },
    ]);
  });

  it('writes as one JSON patch that tests each stable value first (keys escaped as JSON pointers)', () => {
    const fixes = labelFixes(
      node({ [LABEL_OS]: 'linux', [LABEL_ARCH]: 'arm64', [LABEL_ARCH_BETA]: 'amd64' }),
    );
    expect(labelFixPatch(fixes)).toEqual([
      { op: 'test', path: '/metadata/labels/kubernetes.io~1os', value: 'linux' },
      { op: 'test', path: '/metadata/labels/kubernetes.io~1arch', value: 'arm64' },
      { op: 'add', path: '/metadata/labels/beta.kubernetes.io~1os', value: 'linux' },
      { op: 'replace', path: '/metadata/labels/beta.kubernetes.io~1arch', value: 'arm64' },
    ]);
    expect(
      labelFixPatch([{ primary: 'a~b', value: 'x', secondary: 'c/d', secondaryExists: false }]).map(
        (o) => o.path,
      ),
    ).toEqual(['/metadata/labels/a~0b', '/metadata/labels/c~1d']);
  });
});
