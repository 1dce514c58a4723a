import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeVolumeAtomically } from './atomicwriter.js';
import type { VolumeFile } from './contents.js';

let dir: string;
beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), 'kubelab-atomic-')), 'vol');
});
afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

const file = (path: string, text: string, mode = 0o644): VolumeFile => ({
  path,
  data: Buffer.from(text),
  mode,
});

describe('the atomic writer', () => {
  it('publishes files through ..data, swaps versions whole, and drops what the new one lacks', async () => {
    expect(
      await writeVolumeAtomically(dir, [file('a.conf', 'one'), file('sub/b', 'two', 0o400)], { now: 1 }),
    ).toBe(true);
    expect(readFileSync(join(dir, 'a.conf'), 'utf8')).toBe('one');
    expect(readFileSync(join(dir, 'sub', 'b'), 'utf8')).toBe('two');
    expect(lstatSync(join(dir, 'a.conf')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, 'a.conf'))).toBe('..data/a.conf');
    const first = readlinkSync(join(dir, '..data'));
    expect(first).toMatch(/^\.\.\d{4}_/);
    expect(statSync(join(dir, 'sub', 'b')).mode & 0o777).toBe(0o400);

    // The same content again writes nothing.
    expect(
      await writeVolumeAtomically(dir, [file('a.conf', 'one'), file('sub/b', 'two', 0o400)], { now: 2 }),
    ).toBe(false);
    expect(readlinkSync(join(dir, '..data'))).toBe(first);

    // A change: a new version, the old one gone, a key that left is gone too.
    expect(await writeVolumeAtomically(dir, [file('a.conf', 'three'), file('c', 'new')], { now: 3 })).toBe(
      true,
    );
    expect(readFileSync(join(dir, 'a.conf'), 'utf8')).toBe('three');
    expect(readFileSync(join(dir, 'c'), 'utf8')).toBe('new');
    expect(readlinkSync(join(dir, '..data'))).not.toBe(first);
    expect(readdirSync(dir).sort()).toEqual(
      ['..data', readlinkSync(join(dir, '..data')), 'a.conf', 'c'].sort(),
    );

    // A mode change alone is a change.
    expect(
      await writeVolumeAtomically(dir, [file('a.conf', 'three', 0o600), file('c', 'new')], { now: 4 }),
    ).toBe(true);
    expect(statSync(join(dir, 'a.conf')).mode & 0o777).toBe(0o600);
  });

  it('an empty set leaves an empty volume', async () => {
    await writeVolumeAtomically(dir, [file('x', '1')], { now: 1 });
    await writeVolumeAtomically(dir, [], { now: 2 });
    expect(readdirSync(dir).filter((n) => !n.startsWith('..'))).toEqual([]);
  });
});
