/**
 * labctl's connection errors point the right way, against a real TLS control plane: a port
 * where nothing listens says so (not "no CA certificate"), a plain-HTTP port (the GUI's, or any
 * web server) is named as not kubelab's gRPC port (not a CA problem), each says where the
 * address came from; and a --server written without its scheme is recognised as the current
 * context's own server.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { cleanEnv, runLabctl, writeConfig } from './support.js';

// Every labctl run is a fresh Node process: 1–3 s each on a busy machine, several per test.
vi.setConfig({ testTimeout: 90_000 });

let t: TestControlPlane;
let home: string;
let server: string;
let web: Server;
let webPort: number;
let closedPort: number;
let caFile: string;

/** A port nothing listens on: one the system just handed out, closed again. */
async function closedFreePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  t = await startTestControlPlane();
  home = mkdtempSync(join(tmpdir(), 'labctl-connection-'));
  server = `https://127.0.0.1:${t.cp.port}`;
  writeConfig(home, server, t.caPem, t.cp.adminToken);
  caFile = join(home, 'ca.crt');
  writeFileSync(caFile, t.caPem);
  // Any plain HTTP server stands for the GUI's port (`kubelab server --ui`) or the metrics one.
  web = createServer((_req, res) => res.end('<html>kubelab</html>'));
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  webPort = (web.address() as AddressInfo).port;
  closedPort = await closedFreePort();
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (web ? web.close(() => resolve()) : resolve()));
  await t?.close();
  rmSync(home, { recursive: true, force: true });
});

const labctl = (args: string[], env: Record<string, string> = {}, dir = home) =>
  runLabctl(args, cleanEnv(dir, env));

/** A home whose context "test" points at `address` with the cluster's CA and token. */
function homeWithContextAt(address: string): string {
  const h = mkdtempSync(join(home, 'h-'));
  writeConfig(h, address, t.caPem, t.cp.adminToken);
  return h;
}

const nothingAnswers = (address: string) =>
  `error: nothing answers at ${address} (connection refused): check the address and port, and that the kubelab server is running there\n`;

it('says nothing answers at a closed port, and where that address came from', async () => {
  const closed = `https://127.0.0.1:${closedPort}`;
  const [flag, flagWithCa, env, context] = await Promise.all([
    labctl(['get', 'nodes', '--server', closed]),
    labctl(['get', 'nodes', '--server', `127.0.0.1:${closedPort}`, '--certificate-authority', caFile]),
    labctl(['get', 'nodes'], { KUBELAB_SERVER: `127.0.0.1:${closedPort}` }),
    labctl(['get', 'nodes'], {}, homeWithContextAt(closed)),
  ]);
  expect(flag).toMatchObject({
    code: 1,
    stdout: '',
    stderr: `${nothingAnswers(closed)}The address came from --server (the current context "test" uses ${server}).\n`,
  });
  expect(flagWithCa).toEqual(flag);
  expect(env).toMatchObject({
    code: 1,
    stderr: `${nothingAnswers(closed)}The address came from $KUBELAB_SERVER (the current context "test" uses ${server}).\n`,
  });
  expect(context).toMatchObject({
    code: 1,
    stderr: `${nothingAnswers(closed)}The address is context "test"'s: change it with \`labctl config set-context test --server https://<host>:<port>\`, or log in again.\n`,
  });
});

it("says a plain-HTTP port is not kubelab's gRPC port, not that the CA is wrong", async () => {
  const web_ = `https://127.0.0.1:${webPort}`;
  const notGrpc = `error: ${web_} is not kubelab's gRPC port: the TLS handshake got a plain-text answer ("wrong version number"), as from an HTTP server — it may be kubelab's GUI (--ui) or metrics port; use the address \`kubelab server\` prints after "listening on"\n`;
  const [noCa, withCa, login] = await Promise.all([
    labctl(['get', 'pods', '--server', `127.0.0.1:${webPort}`]),
    labctl(['get', 'pods'], {}, homeWithContextAt(web_)),
    labctl(['login', `127.0.0.1:${webPort}`, '--token', t.cp.adminToken, '--name', 'web']),
  ]);
  expect(noCa).toMatchObject({
    code: 1,
    stderr: `${notGrpc}The address came from --server (the current context "test" uses ${server}).\n`,
  });
  expect(withCa).toMatchObject({
    code: 1,
    stderr: `${notGrpc}The address is context "test"'s: change it with \`labctl config set-context test --server https://<host>:<port>\`, or log in again.\n`,
  });
  // login's address is its argument: the message alone says what to check.
  expect(login).toMatchObject({ code: 1, stderr: notGrpc });
});

it("recognises a --server without a scheme as the context's own server; another spelling still needs its CA", async () => {
  const [bare, env, otherName] = await Promise.all([
    labctl(['get', 'ns', 'default', '-o', 'name', '--server', `127.0.0.1:${t.cp.port}`]),
    labctl(['get', 'ns', 'default', '-o', 'name'], { KUBELAB_SERVER: `127.0.0.1:${t.cp.port}/` }),
    labctl(['get', 'ns', 'default', '-o', 'name', '--server', `localhost:${t.cp.port}`]),
  ]);
  expect(bare).toMatchObject({ code: 0, stdout: 'namespace/default\n', stderr: '' });
  expect(env).toMatchObject({ code: 0, stdout: 'namespace/default\n', stderr: '' });
  // kubelab answers at localhost too, so what is missing really is the CA for that name.
  expect(otherName).toMatchObject({
    code: 1,
    stderr: `error: no CA certificate for https://localhost:${t.cp.port}: pass --certificate-authority <ca.crt> (the control plane's <data-dir>/pki/ca.crt), or run \`labctl login https://localhost:${t.cp.port}\`\n`,
  });
});
