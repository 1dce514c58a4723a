// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect polyfill first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { webcrypto } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../client/util/clock.js';
import type { Probe } from '../../proto/gen/kubelab/v1/core.js';
import {
  GRPC_UNSUPPORTED,
  PROBE_OUTPUT_LIMIT,
  ProbeWorker,
  resolveProbePort,
  runProbe,
  type ProbeKind,
  type ProbeResult,
  type ProbeState,
  type ProbeTarget,
} from './probes.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const target: ProbeTarget = { env };

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
  });
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A port nothing listens on: bind one, then let it go. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  const port = await listen(s);
  await close(s);
  return port;
}

describe('runProbe: exec', () => {
  const exec = (command: string[], timeoutSeconds?: number): Probe => ({
    exec: { command },
    timeoutSeconds,
  });

  it('succeeds on exit 0 and fails on a non-zero exit with the output', async () => {
    expect(await runProbe(exec(['sh', '-c', 'exit 0']), target)).toEqual({ result: 'success' });
    expect(await runProbe(exec(['sh', '-c', 'echo not healthy >&2; exit 1']), target)).toEqual({
      result: 'failure',
      message: 'not healthy',
    });
    const silent = await runProbe(exec(['sh', '-c', 'exit 3']), target);
    expect(silent.result).toBe('failure');
    expect(silent.message).toContain('exited with code 3');
  });

  it("runs argv without a shell, with the container's env and cwd", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'probe-cwd-')));
    try {
      const check = exec(['sh', '-c', `test "$PROBE_VAR" = yes && test "$(pwd)" = "${dir}"`]);
      const ok = await runProbe(check, { env: { ...env, PROBE_VAR: 'yes' }, cwd: dir });
      expect(ok.result).toBe('success');
      const wrongEnv = await runProbe(check, { env: { ...env, PROBE_VAR: 'no' }, cwd: dir });
      expect(wrongEnv.result).toBe('failure');
      // No shell: the "$HOME" is an argument to echo, not expanded.
      const literal = await runProbe(exec(['sh', '-c', 'echo "$0"; exit 1', '$HOME']), target);
      expect(literal.message).toBe('$HOME');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('times out after timeoutSeconds and kills the whole process group', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probe-kill-'));
    const pidFile = join(dir, 'pid');
    try {
      const t0 = Date.now();
      const r = await runProbe(exec(['sh', '-c', `sleep 5 & echo $! > ${pidFile}; wait`], 1), target);
      const took = Date.now() - t0;
      expect(r.result).toBe('failure');
      expect(r.message).toMatch(/timed out/);
      expect(took).toBeGreaterThanOrEqual(900);
      expect(took).toBeLessThan(3000);
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      expect(pid).toBeGreaterThan(0);
      // The background sleep (a grandchild) is gone too: no such process, or a zombie
      // waiting for a PID 1 that does not reap.
      await vi.waitFor(
        () => {
          let state = '';
          try {
            state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] ?? '';
          } catch {
            state = 'gone';
          }
          expect(['gone', 'Z']).toContain(state);
        },
        { timeout: 2000 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('uses the default 1 s timeout and takes an explicit timeoutMs', async () => {
    const t0 = Date.now();
    const r = await runProbe(exec(['sleep', '5']), target, 200);
    expect(r.result).toBe('failure');
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(r.message).toBe('command "sleep 5" timed out');
  });

  it('caps the output it reports', async () => {
    const r = await runProbe(exec(['sh', '-c', 'head -c 50000 /dev/zero | tr "\\0" x; exit 1']), target);
    expect(r.result).toBe('failure');
    expect(r.message?.length).toBe(PROBE_OUTPUT_LIMIT);
    expect(r.message).toMatch(/^x+$/);
  });

  it('fails with a message for a missing command or an empty one', async () => {
    const missing = await runProbe(exec(['/nonexistent/probe-binary']), target);
    expect(missing.result).toBe('failure');
    expect(missing.message).toContain('ENOENT');
    expect(await runProbe(exec([]), target)).toEqual({
      result: 'failure',
      message: 'exec probe has no command',
    });
  });

  it('is cancelled by its signal', async () => {
    const ac = new AbortController();
    const pending = runProbe(exec(['sleep', '5']), target, 10_000, ac.signal);
    setTimeout(() => ac.abort(), 50);
    const t0 = Date.now();
    expect(await pending).toEqual({ result: 'failure', message: 'probe cancelled' });
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});

describe('runProbe: httpGet', () => {
  let server: http.Server;
  let port: number;
  const hits: string[] = [];
  const seenHeaders: http.IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      seenHeaders.push(req.headers);
      const path = (req.url ?? '').split('?')[0];
      if (path === '/ok') res.writeHead(200).end('fine');
      else if (path === '/fail') res.writeHead(500).end('broken');
      else if (path === '/to-ok') res.writeHead(302, { Location: '/ok' }).end();
      else if (path === '/to-fail') res.writeHead(302, { Location: '/fail' }).end();
      else if (path === '/loop') res.writeHead(302, { Location: '/loop' }).end();
      else if (path === '/elsewhere') {
        // Another host name for the same server: the kubelet does not follow it.
        res.writeHead(302, { Location: `http://localhost:${port}/ok` }).end('moved');
      } else if (path === '/hang') {
        // Never answers: the probe must time out.
      } else res.writeHead(404).end();
    });
    port = await listen(server);
  });

  afterAll(async () => {
    server.closeAllConnections();
    await close(server);
  });

  afterEach(() => {
    hits.length = 0;
    seenHeaders.length = 0;
  });

  const get = (path: string, p: number | string = port): Probe => ({ httpGet: { path, port: p } });

  it('succeeds on 200 and fails on 500 with the status', async () => {
    expect(await runProbe(get('/ok'), target)).toEqual({ result: 'success' });
    expect(await runProbe(get('/fail'), target)).toEqual({
      result: 'failure',
      message: 'HTTP probe failed with statuscode: 500',
    });
    expect(await runProbe(get('/missing'), target)).toEqual({
      result: 'failure',
      message: 'HTTP probe failed with statuscode: 404',
    });
  });

  it('follows redirects to the same host', async () => {
    expect(await runProbe(get('/to-ok'), target)).toEqual({ result: 'success' });
    expect(hits).toEqual(['/to-ok', '/ok']);
    expect((await runProbe(get('/to-fail'), target)).message).toBe('HTTP probe failed with statuscode: 500');
    const loop = await runProbe(get('/loop'), target);
    expect(loop.result).toBe('failure');
    expect(loop.message).toContain('stopped after 10 redirects');
  });

  it('does not follow a redirect to another host: success with a warning', async () => {
    const r = await runProbe(get('/elsewhere'), target);
    expect(r).toEqual({
      result: 'success',
      warning: true,
      message: 'Probe terminated redirects, Response body: moved',
    });
    expect(hits).toEqual(['/elsewhere']);
  });

  it('sends the path, query and headers, with the kubelet defaults', async () => {
    const probe: Probe = {
      httpGet: {
        path: '/ok?deep=1',
        port,
        httpHeaders: [
          { name: 'X-Probe', value: 'yes' },
          { name: 'Host', value: 'app.example' },
        ],
      },
    };
    expect((await runProbe(probe, target)).result).toBe('success');
    expect(hits).toEqual(['/ok?deep=1']);
    expect(seenHeaders[0]['x-probe']).toBe('yes');
    expect(seenHeaders[0].host).toBe('app.example');
    expect(seenHeaders[0]['user-agent']).toMatch(/^kube-probe\//);
    expect(seenHeaders[0].accept).toBe('*/*');
  });

  it('resolves named ports through resolvePort or the container ports', async () => {
    const viaFn = await runProbe(get('/ok', 'http'), {
      env,
      resolvePort: (name) => (name === 'http' ? port : undefined),
    });
    expect(viaFn.result).toBe('success');
    const viaPorts = await runProbe(get('/ok', 'web'), {
      env,
      ports: [
        { name: 'metrics', containerPort: 1 },
        { name: 'web', containerPort: port },
      ],
    });
    expect(viaPorts.result).toBe('success');
    expect(hits).toEqual(['/ok', '/ok']);
    expect(await runProbe(get('/ok', 'nope'), { env, ports: [] })).toEqual({
      result: 'failure',
      message: `port "nope" not found in the container's ports`,
    });
    // A number written as a string is still a port.
    expect((await runProbe(get('/ok', String(port)), target)).result).toBe('success');
  });

  it('uses podIP as the default host', async () => {
    expect((await runProbe(get('/ok'), { env, podIP: '127.0.0.1' })).result).toBe('success');
    // An address nothing serves on: refused or unreachable, never a success.
    const other = await runProbe(get('/ok', await closedPort()), { env, podIP: '127.0.0.1' });
    expect(other.result).toBe('failure');
  });

  it('fails on a refused connection and on a timeout', async () => {
    const refused = await runProbe(get('/ok', await closedPort()), target);
    expect(refused.result).toBe('failure');
    expect(refused.message).toContain('ECONNREFUSED');
    const t0 = Date.now();
    const hung = await runProbe(get('/hang'), target, 300);
    expect(hung.result).toBe('failure');
    expect(hung.message).toMatch(/timed out/);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('does not verify HTTPS certificates', async () => {
    const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
      'verify',
    ])) as CryptoKeyPair;
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '01',
      name: 'CN=probe-test',
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 3_600_000),
      keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    });
    const der = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
    const key = `-----BEGIN PRIVATE KEY-----\n${Buffer.from(der).toString('base64')}\n-----END PRIVATE KEY-----\n`;
    const tls = https.createServer({ key, cert: cert.toString('pem') }, (_req, res) =>
      res.writeHead(204).end(),
    );
    const tlsPort = await listen(tls);
    try {
      const probe: Probe = { httpGet: { scheme: 'HTTPS', path: '/', port: tlsPort } };
      expect(await runProbe(probe, target)).toEqual({ result: 'success' });
      // The same server spoken to in plain HTTP is not a success.
      expect((await runProbe({ httpGet: { path: '/', port: tlsPort } }, target)).result).toBe('failure');
    } finally {
      tls.closeAllConnections();
      await close(tls);
    }
  });
});

describe('runProbe: tcpSocket and the rest', () => {
  it('succeeds when it connects and fails on a closed port', async () => {
    const server = net.createServer((s) => s.destroy());
    const port = await listen(server);
    try {
      expect(await runProbe({ tcpSocket: { port } }, target)).toEqual({ result: 'success' });
      const named = await runProbe(
        { tcpSocket: { port: 'db' } },
        { env, ports: [{ name: 'db', containerPort: port }] },
      );
      expect(named.result).toBe('success');
    } finally {
      await close(server);
    }
    const closed = await closedPort();
    const r = await runProbe({ tcpSocket: { port: closed } }, target);
    expect(r.result).toBe('failure');
    expect(r.message).toBe(`dial tcp 127.0.0.1:${closed}: connect ECONNREFUSED 127.0.0.1:${closed}`);
  });

  it('rejects grpc probes and probes without a handler', async () => {
    const grpc: Probe & { grpc: unknown } = { grpc: { port: 9000 } };
    expect(await runProbe(grpc, target)).toEqual({ result: 'failure', message: GRPC_UNSUPPORTED });
    expect(GRPC_UNSUPPORTED).toBe(
      'grpc probes are not supported by kubelab-agent; use httpGet, tcpSocket or exec',
    );
    expect((await runProbe({ periodSeconds: 1 }, target)).result).toBe('failure');
  });

  it('resolves int-or-string ports like the kubelet', () => {
    expect(resolveProbePort(8080, {})).toEqual({ port: 8080 });
    expect(resolveProbePort('http', { resolvePort: () => 81 })).toEqual({ port: 81 });
    expect(resolveProbePort('9090', {})).toEqual({ port: 9090 });
    expect(resolveProbePort(0, {})).toEqual({ error: 'invalid port number: 0' });
    expect(resolveProbePort(70000, {})).toEqual({ error: 'invalid port number: 70000' });
    expect(resolveProbePort(undefined, {})).toEqual({ error: 'probe has no port' });
  });
});

/** Lets the worker's promise chains run after a clock move. */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

/** A worker on a FakeClock whose probes return scripted results (failure once the script ends). */
function scripted(
  kind: ProbeKind,
  probe: Probe,
  results: Array<'success' | 'failure'>,
  extra: { startedAt?: number } = {},
) {
  const clock = new FakeClock();
  const changes: ProbeState[] = [];
  const probedAt: number[] = [];
  const worker = new ProbeWorker({
    kind,
    probe,
    target,
    clock,
    startedAt: extra.startedAt,
    onChange: (s) => changes.push(s),
    prober: async () => {
      probedAt.push(clock.now());
      return { result: results.shift() ?? 'failure' };
    },
  });
  return { clock, worker, changes, probedAt, t0: clock.now() };
}

describe('ProbeWorker', () => {
  it('starts readiness as failure, liveness as success, startup as unknown', () => {
    for (const [kind, initial] of [
      ['readiness', 'failure'],
      ['liveness', 'success'],
      ['startup', 'unknown'],
    ] as const) {
      const { worker, changes } = scripted(kind, { periodSeconds: 1 }, []);
      expect(worker.state).toBe(initial);
      worker.start();
      expect(changes).toEqual([initial]);
      void worker.stop();
    }
  });

  it('honours the initial delay, then probes every period', async () => {
    const { clock, worker, probedAt, t0 } = scripted(
      'readiness',
      { initialDelaySeconds: 5, periodSeconds: 10 },
      ['success', 'success', 'success'],
    );
    worker.start();
    await flush();
    clock.advance(4999);
    await flush();
    expect(probedAt).toEqual([]);
    clock.advance(1);
    await flush();
    expect(probedAt).toEqual([t0 + 5000]);
    clock.advance(9999);
    await flush();
    expect(probedAt).toHaveLength(1);
    clock.advance(1);
    await flush();
    expect(probedAt).toEqual([t0 + 5000, t0 + 15000]);
    await worker.stop();
  });

  it('counts the initial delay from the container start', async () => {
    const clock0 = new FakeClock().now();
    const { clock, worker, probedAt, t0 } = scripted('liveness', { initialDelaySeconds: 5 }, ['success'], {
      startedAt: clock0 - 3000,
    });
    worker.start();
    clock.advance(1999);
    await flush();
    expect(probedAt).toEqual([]);
    clock.advance(1);
    await flush();
    expect(probedAt).toEqual([t0 + 2000]);
    await worker.stop();
  });

  it('needs failureThreshold consecutive failures to flip, then stops a failed liveness probe', async () => {
    const { clock, worker, changes, probedAt } = scripted(
      'liveness',
      { periodSeconds: 1, failureThreshold: 3 },
      ['failure', 'failure', 'success', 'failure', 'failure', 'failure', 'success'],
    );
    worker.start();
    await flush();
    for (let i = 0; i < 4; i++) {
      clock.advance(1000);
      await flush();
    }
    // Probes at 0..4 s: F F S F F — a success broke the run, so still alive.
    expect(probedAt).toHaveLength(5);
    expect(changes).toEqual(['success']);
    clock.advance(1000);
    await flush();
    expect(probedAt).toHaveLength(6);
    expect(changes).toEqual(['success', 'failure']);
    expect(worker.state).toBe('failure');
    expect(worker.active).toBe(false);
    // On hold for the restart: no more probes.
    clock.advance(10_000);
    await flush();
    expect(probedAt).toHaveLength(6);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('needs successThreshold successes for readiness and keeps probing after failures', async () => {
    const { clock, worker, changes, probedAt } = scripted(
      'readiness',
      { periodSeconds: 1, successThreshold: 2, failureThreshold: 2 },
      ['success', 'failure', 'success', 'success', 'failure', 'failure', 'success', 'success'],
    );
    worker.start();
    const step = async (expected: ProbeState[]): Promise<void> => {
      clock.advance(1000);
      await flush();
      expect(changes).toEqual(expected);
    };
    await flush();
    expect(changes).toEqual(['failure']); // one success: not ready yet
    await step(['failure']); // F
    await step(['failure']); // S
    await step(['failure', 'success']); // S S: ready
    await step(['failure', 'success']); // F
    await step(['failure', 'success', 'failure']); // F F: not ready
    await step(['failure', 'success', 'failure']); // S
    await step(['failure', 'success', 'failure', 'success']); // S S
    expect(probedAt).toHaveLength(8);
    expect(worker.active).toBe(true);
    await worker.stop();
  });

  it('forces successThreshold 1 for liveness and startup, and ends startup on success', async () => {
    const { clock, worker, changes, probedAt } = scripted(
      'startup',
      { periodSeconds: 1, successThreshold: 3, failureThreshold: 5 },
      ['failure', 'success'],
    );
    expect(worker.successThreshold).toBe(1);
    worker.start();
    await flush();
    expect(changes).toEqual(['unknown']);
    clock.advance(1000);
    await flush();
    expect(changes).toEqual(['unknown', 'success']);
    clock.advance(10_000);
    await flush();
    expect(probedAt).toHaveLength(2);
    expect(worker.active).toBe(false);
  });

  it('never runs two probes at once', async () => {
    const clock = new FakeClock();
    let calls = 0;
    let release: (r: ProbeResult) => void = () => undefined;
    const worker = new ProbeWorker({
      kind: 'readiness',
      probe: { periodSeconds: 1 },
      target,
      clock,
      onChange: () => undefined,
      prober: () => {
        calls++;
        return new Promise((resolve) => {
          release = resolve;
        });
      },
    });
    worker.start();
    await flush();
    expect(calls).toBe(1);
    // Periods pass and a test asks too, while the first probe still runs.
    clock.advance(5000);
    const asked = worker.probeNow();
    await flush();
    expect(calls).toBe(1);
    release({ result: 'success' });
    expect(await asked).toBe('success');
    await flush();
    // The slow probe overran its period: the next one follows straight away, alone.
    expect(calls).toBe(2);
    await worker.stop();
  });

  it('stop() cancels a running probe and reports nothing afterwards', async () => {
    const clock = new FakeClock();
    const changes: ProbeState[] = [];
    let seen: AbortSignal | undefined;
    let release: (r: ProbeResult) => void = () => undefined;
    const worker = new ProbeWorker({
      kind: 'readiness',
      probe: { periodSeconds: 1 },
      target,
      clock,
      onChange: (s) => changes.push(s),
      prober: (_p, _t, _timeout, signal) => {
        seen = signal;
        return new Promise((resolve) => {
          release = resolve;
        });
      },
    });
    worker.start();
    await flush();
    const stopped = worker.stop();
    expect(seen?.aborted).toBe(true);
    release({ result: 'success' });
    await stopped;
    expect(changes).toEqual(['failure']);
    expect(worker.active).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('counts a throwing prober as a failure', async () => {
    const results: ProbeResult[] = [];
    const worker = new ProbeWorker({
      kind: 'liveness',
      probe: { failureThreshold: 1 },
      target,
      clock: new FakeClock(),
      onChange: () => undefined,
      onResult: (r) => results.push(r),
      prober: () => Promise.reject(new Error('boom')),
    });
    expect(await worker.probeNow()).toBe('failure');
    expect(results).toEqual([{ result: 'failure', message: 'boom' }]);
  });

  it('runs real probes with its default prober', async () => {
    const changes: Array<[ProbeState, string | undefined]> = [];
    const worker = new ProbeWorker({
      kind: 'liveness',
      probe: { exec: { command: ['sh', '-c', 'echo dead; exit 1'] }, failureThreshold: 1 },
      target,
      clock: new FakeClock(),
      onChange: (s, last) => changes.push([s, last?.message]),
    });
    worker.start();
    await vi.waitFor(() =>
      expect(changes).toEqual([
        ['success', undefined],
        ['failure', 'dead'],
      ]),
    );
    await worker.stop();
  });
});
