/** `kubelab server --ui`: the printed URL signs a browser in; nothing else does. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'kubelab.mjs');

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function run(args: string[]) {
  const dataDir = mkdtempSync(join(tmpdir(), 'kubelab-server-ui-'));
  dirs.push(dataDir);
  const child = spawn(
    process.execPath,
    [
      BIN,
      'server',
      '--data-dir',
      dataDir,
      '--listen',
      '127.0.0.1:0',
      '--plaintext',
      '--no-controller-manager',
      '--metrics-listen',
      '127.0.0.1:0',
      '--log-level',
      'warn',
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out, exited, dataDir };
}

describe('kubelab server --ui', () => {
  it('prints a GUI URL with a login token that signs a browser in, and stops cleanly', async () => {
    const s = run(['--ui-listen', '127.0.0.1:0']);
    const deadline = Date.now() + 30_000;
    while (!s.out.stdout.includes('Stop with Ctrl-C')) {
      if (s.child.exitCode !== null) throw new Error(`kubelab server exited: ${s.out.stderr}`);
      if (Date.now() > deadline) throw new Error(`kubelab server did not start: ${s.out.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const m = /^GUI: (http:\/\/127\.0\.0\.1:(\d+)\/\?token=([a-z0-9]{6}\.[a-z0-9]{32}))$/m.exec(s.out.stdout);
    expect(m, s.out.stdout).toBeTruthy();
    const [, url, port, token] = m!;
    expect(readFileSync(join(s.dataDir, 'ui.token'), 'utf8').trim()).toBe(token);
    expect(statSync(join(s.dataDir, 'ui.token')).mode & 0o777).toBe(0o600);

    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(401);
    const login = await fetch(url);
    expect(login.status).toBe(200);
    const cookie = login.headers.getSetCookie()[0].split(';')[0];
    // 200 once `npm run build` has made out/renderer; 503 (saying so) before.
    const page = await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie } });
    expect([200, 503]).toContain(page.status);

    const ws = new WebSocket(`ws://127.0.0.1:${port}/bridge`, {
      headers: { cookie },
      origin: `http://127.0.0.1:${port}`,
    });
    const hello = await new Promise<any>((resolve, reject) => {
      ws.once('open', () => ws.send(JSON.stringify({ id: 1, op: 'hello' })));
      ws.once('message', (data) => resolve(JSON.parse(data.toString())));
      ws.once('error', reject);
    });
    expect(hello).toMatchObject({ id: 1, op: 'result', value: { protocol: 1, user: 'ui' } });

    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    s.child.kill('SIGTERM');
    expect(await closed).toBe(1001);
    expect(await s.exited).toBe(0);
  });

  it('refuses to serve the GUI on a non-loopback address', async () => {
    const s = run(['--ui-listen', '0.0.0.0:6080']);
    expect(await s.exited).not.toBe(0);
    expect(s.out.stderr).toContain('--ui-listen must be a loopback address');
  });
});
