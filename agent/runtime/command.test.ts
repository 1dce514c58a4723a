import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkCommand } from './command.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kubelab-command-'));
  mkdirSync(path.join(dir, 'bin1'));
  mkdirSync(path.join(dir, 'bin2'));
  writeFileSync(path.join(dir, 'bin1', 'tool'), 'not executable', { mode: 0o644 });
  writeFileSync(path.join(dir, 'bin2', 'tool'), '#!/bin/sh\n', { mode: 0o755 });
  writeFileSync(path.join(dir, 'bin1', 'plain'), 'data', { mode: 0o644 });
  mkdirSync(path.join(dir, 'bin1', 'folder'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('checkCommand', () => {
  it('finds a program in PATH like execvp: a non-executable match is skipped', () => {
    const searchPath = `${dir}/bin1:${dir}/bin2`;
    expect(checkCommand('tool', searchPath, '/')).toEqual({ ok: true, path: path.join(dir, 'bin2', 'tool') });
    expect(checkCommand('sh', '/usr/bin:/bin', '/')).toMatchObject({ ok: true });
  });

  it('reports 127 with what to do when nothing is found', () => {
    const check = checkCommand('kubelab-no-such-tool', `${dir}/bin1`, '/');
    expect(check).toMatchObject({ ok: false, exitCode: 127 });
    expect(!check.ok && check.message).toMatch(/not found in PATH .*install it on the node/);
  });

  it('reports 126 when only a non-executable file or a directory is found', () => {
    const plain = checkCommand('plain', `${dir}/bin1`, '/');
    expect(plain).toMatchObject({ ok: false, exitCode: 126 });
    expect(!plain.ok && plain.message).toMatch(/not executable.*chmod \+x/);
    expect(checkCommand('folder', `${dir}/bin1`, '/')).toMatchObject({ ok: false, exitCode: 126 });
  });

  it('takes a name with a slash as a path, relative to the working directory', () => {
    expect(checkCommand('./bin2/tool', '', dir)).toEqual({ ok: true, path: path.join(dir, 'bin2', 'tool') });
    expect(checkCommand('./bin1/plain', '', dir)).toMatchObject({ ok: false, exitCode: 126 });
    expect(checkCommand('/nonexistent/kubelab', '/usr/bin', dir)).toMatchObject({ ok: false, exitCode: 127 });
  });

  it('searches the working directory for an empty PATH entry', () => {
    expect(checkCommand('tool', ':', path.join(dir, 'bin2'))).toMatchObject({ ok: true });
  });

  it('refuses an empty command', () => {
    expect(checkCommand('', '/usr/bin', '/')).toMatchObject({ ok: false, exitCode: 127 });
  });
});
