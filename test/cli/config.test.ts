/**
 * labctl's configuration and connection, as a user meets them: login (the CA from a file, or
 * fetched and checked against --ca-hash or a K10 pinned token; a refused token), contexts
 * (get, use, set, current, delete, view), precedence of flags over environment over the
 * context, errors that say what to do (no config, unreachable server, a CA that does not
 * match, a token that is not valid), tokens, version, help and shell completion.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { caHashOf } from '../../client/util/tls.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { cleanEnv, runLabctl, tableCells, writeConfig } from './support.js';

// Every labctl run is a fresh Node process: 1–3 s each on a busy machine, several per test.
vi.setConfig({ testTimeout: 90_000 });

let t: TestControlPlane;
let home: string;
let server: string;
let caFile: string;
let adminToken: string;

beforeAll(async () => {
  t = await startTestControlPlane();
  home = mkdtempSync(join(tmpdir(), 'labctl-config-'));
  server = `https://127.0.0.1:${t.cp.port}`;
  caFile = join(home, 'ca.crt');
  writeFileSync(caFile, t.caPem);
  adminToken = t.cp.adminToken;
}, 60_000);

afterAll(async () => {
  await t?.close();
  rmSync(home, { recursive: true, force: true });
});

/** labctl with $HOME (and so ~/.kubelab/config) in `dir`. */
const labctl = (dir: string, args: string[], env: Record<string, string> = {}) => {
  const e = cleanEnv(dir, env);
  delete e.KUBELAB_CONFIG;
  return runLabctl(args, { ...e, ...env });
};

function freshHome(): string {
  return mkdtempSync(join(home, 'h-'));
}

/** A home whose config has a context "test" for the admin (what `labctl login` writes). */
function loggedInHome(): string {
  const h = freshHome();
  writeConfig(h, server, t.caPem, adminToken);
  return h;
}

it('fails without a configuration, saying how to log in', async () => {
  const r = await labctl(freshHome(), ['get', 'pods']);
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(
    'error: no server is configured: run `labctl login https://<control plane>:6443 --token <token>`, or pass --server and --token\n',
  );
});

it('logs in with the CA from a file, writes a private config, and uses it', async () => {
  const h = freshHome();
  const login = await labctl(h, [
    'login',
    server,
    '--token',
    adminToken,
    '--certificate-authority',
    caFile,
    '--name',
    'lab',
  ]);
  const path = join(h, '.kubelab', 'config');
  expect(login).toMatchObject({
    code: 0,
    stdout: `Logged in to ${server} as context "lab" (saved in ${path}).\n`,
  });
  expect(statSync(path).mode & 0o777).toBe(0o600);
  const cfg = parse(readFileSync(path, 'utf8'));
  expect(cfg).toMatchObject({
    'current-context': 'lab',
    contexts: [{ name: 'lab', server, token: adminToken }],
  });
  expect(Buffer.from(cfg.contexts[0]['certificate-authority-data'], 'base64').toString()).toBe(t.caPem);
  const [ns, current, contexts] = await Promise.all([
    labctl(h, ['get', 'namespaces', '-o', 'name']),
    labctl(h, ['config', 'current-context']),
    labctl(h, ['config', 'get-contexts']),
  ]);
  expect(ns.stdout).toBe(
    'namespace/default\nnamespace/kube-node-lease\nnamespace/kube-public\nnamespace/kube-system\n',
  );
  expect(current.stdout).toBe('lab\n');
  expect(tableCells(contexts.stdout)).toEqual([
    ['CURRENT', 'NAME', 'SERVER', 'NAMESPACE'],
    ['*', 'lab', server],
  ]);
});

it('fetches the CA and checks it against --ca-hash or the pin of a K10 token before sending the token', async () => {
  const hash = caHashOf(t.caPem);
  const h = freshHome();
  const unpinned = await labctl(h, ['login', server, '--token', adminToken]);
  expect(unpinned.code).toBe(1);
  expect(unpinned.stderr).toContain(`presents a CA certificate (CN=`);
  expect(unpinned.stderr).toContain(`log in again with --ca-hash ${hash}`);
  const wrong = await labctl(h, ['login', server, '--token', adminToken, '--ca-hash', 'ab'.repeat(32)]);
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toMatch(
    /^error: the CA certificate of https:\/\/127\.0\.0\.1:\d+ does not match the pinned hash .*nothing was sent to it\n$/,
  );

  const [pinnedHash, pinnedToken] = await Promise.all([
    labctl(h, [
      'login',
      server,
      '--token',
      adminToken,
      '--ca-hash',
      `sha256:${hash.toUpperCase().match(/../g)!.join(':')}`,
      '--name',
      'by-hash',
    ]),
    labctl(freshHome(), ['login', `127.0.0.1:${t.cp.port}`, '--token', `K10${hash}::${adminToken}`]),
  ]);
  expect(pinnedHash.code).toBe(0);
  expect(pinnedToken).toMatchObject({ code: 0 });
  expect(pinnedToken.stdout).toMatch(/as context "127\.0\.0\.1-\d+"/);

  const refused = await labctl(h, [
    'login',
    server,
    '--token',
    'abcdef.0123456789abcdef0123456789abcdef',
    '--certificate-authority',
    caFile,
  ]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/refused the token \(unknown, deleted or expired\)/);
});

it('switches and edits contexts; flags beat the environment, which beats the context', async () => {
  const h = freshHome();
  await labctl(h, [
    'login',
    server,
    '--token',
    adminToken,
    '--certificate-authority',
    caFile,
    '--name',
    'one',
  ]);
  const created = await labctl(h, [
    'config',
    'set-context',
    'two',
    '--server',
    server,
    '--token',
    adminToken,
    '--certificate-authority',
    caFile,
    '-n',
    'kube-system',
  ]);
  expect(created.stdout).toBe('Context "two" created.\n');
  expect((await labctl(h, ['config', 'use-context', 'two'])).stdout).toBe('Switched to context "two".\n');
  const [inContext, byEnv, byFlag, byEnvContext] = await Promise.all([
    labctl(h, ['get', 'pods']),
    labctl(h, ['get', 'pods'], { KUBELAB_NAMESPACE: 'kube-public' }),
    labctl(h, ['get', 'pods', '-n', 'lab'], { KUBELAB_NAMESPACE: 'kube-public' }),
    labctl(h, ['get', 'pods'], { KUBELAB_CONTEXT: 'one' }),
  ]);
  expect(inContext.stderr).toBe('No resources found in kube-system namespace.\n');
  expect(byEnv.stderr).toBe('No resources found in kube-public namespace.\n');
  expect(byFlag.stderr).toBe('No resources found in lab namespace.\n');
  expect(byEnvContext.stderr).toBe('No resources found in default namespace.\n');

  expect((await labctl(h, ['config', 'set-context', '--current', '-n', 'kube-node-lease'])).stdout).toBe(
    'Context "two" modified.\n',
  );
  const view = parse((await labctl(h, ['config', 'view'])).stdout);
  expect(view.contexts[1]).toMatchObject({
    name: 'two',
    namespace: 'kube-node-lease',
    token: 'REDACTED',
    'certificate-authority-data': 'DATA+OMITTED',
  });
  const missing = await labctl(h, ['config', 'use-context', 'three']);
  expect(missing).toMatchObject({
    code: 1,
    stderr: 'error: no context exists with the name: "three"; see `labctl config get-contexts`\n',
  });
  const [badContext, deleted] = await Promise.all([
    labctl(h, ['get', 'pods', '--context', 'three']),
    labctl(h, ['config', 'delete-context', 'one']),
  ]);
  expect(badContext.stderr).toMatch(/^error: context "three" does not exist/);
  expect(deleted.stdout).toMatch(/^deleted context one from /);
});

it('says what to do when the server is unreachable, its certificate does not match, or the token is refused', async () => {
  const h = loggedInHome();
  const otherDir = mkdtempSync(join(home, 'ca-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-subj',
      '/CN=other-ca',
      '-days',
      '1',
      '-keyout',
      join(otherDir, 'k'),
      '-out',
      join(otherDir, 'ca.crt'),
    ],
    { stdio: 'ignore' },
  );
  const [unreachable, mismatch, badToken] = await Promise.all([
    labctl(h, [
      'get',
      'pods',
      '--server',
      'https://127.0.0.1:1',
      '--certificate-authority',
      caFile,
      '--request-timeout',
      '5s',
    ]),
    labctl(h, ['get', 'pods', '--certificate-authority', join(otherDir, 'ca.crt'), '--server', server]),
    labctl(h, ['get', 'pods'], { KUBELAB_TOKEN: 'abcdef.0123456789abcdef0123456789abcdef' }),
  ]);
  expect(unreachable.code).toBe(1);
  expect(unreachable.stderr).toBe(
    'error: nothing answers at https://127.0.0.1:1 (connection refused): check the address and port, and that the kubelab server is running there\n' +
      `The address came from --server (the current context "test" uses ${server}).\n`,
  );
  expect(mismatch.code).toBe(1);
  // OpenSSL's reason, without grpc-js's wrapping ("No connection established… Resolution note: ").
  expect(mismatch.stderr).toBe(
    `error: TLS failed talking to ${server}: unable to verify the first certificate; check that the CA certificate is the cluster's (<data-dir>/pki/ca.crt) and the address is right\n` +
      "The server's certificate is not signed by the CA labctl trusts for it: run `labctl login` again, or pass the cluster's CA (<data-dir>/pki/ca.crt) with --certificate-authority.\n",
  );
  expect(badToken.code).toBe(1);
  expect(badToken.stderr).toMatch(
    /^error: You must be logged in to the server \(Unauthorized\): .*\nRun `labctl login <server> --token <token>`/,
  );
});

it('creates, lists and deletes tokens; a viewer may read but not write; a deleted token stops working', async () => {
  const h = loggedInHome();
  const created = await labctl(h, [
    'token',
    'create',
    '--role',
    'viewer',
    '--name',
    'alice',
    '--description',
    'for alice',
  ]);
  expect(created.code).toBe(0);
  const viewer = created.stdout.trim();
  expect(viewer).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{32}$/);
  const [join_, list, read, write] = await Promise.all([
    labctl(h, ['token', 'create', '--ttl', '2h']),
    labctl(h, ['token', 'list']),
    labctl(h, ['get', 'ns', 'default', '-o', 'name', '--token', viewer]),
    labctl(h, ['create', 'namespace', 'nope', '--token', viewer]),
  ]);
  expect(join_.stdout).toMatch(/^K10[0-9a-f]{64}::[a-z0-9]{6}\.[a-z0-9]{32}\n$/);
  expect(join_.stderr).toMatch(
    new RegExp(
      `KUBELAB_TOKEN='K10[0-9a-f]{64}::[^']+' kubelab-agent --server ${server.replace(/[.]/g, '\\.')}\n`,
    ),
  );
  const rows = tableCells(list.stdout);
  expect(rows[0]).toEqual(['ID', 'ROLE', 'NAME', 'EXPIRES', 'AGE', 'DESCRIPTION']);
  expect(rows).toContainEqual([
    viewer.split('.')[0],
    'viewer',
    'alice',
    '<never>',
    expect.stringMatching(/^\d+s$/),
    'for alice',
  ]);
  expect(read.stdout).toBe('namespace/default\n');
  expect(write.code).toBe(1);
  expect(write.stderr).toMatch(/^Error from server \(Forbidden\): /);

  expect((await labctl(h, ['token', 'delete', viewer])).stdout).toBe(
    `token "${viewer.split('.')[0]}" deleted\n`,
  );
  const after = await labctl(h, ['get', 'ns', '--token', viewer]);
  expect(after.code).toBe(1);
  expect(after.stderr).toMatch(/^error: You must be logged in to the server \(Unauthorized\)/);
});

it("prints the client's and the server's version", async () => {
  const h = loggedInHome();
  const version = JSON.parse(
    readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'),
  ).version;
  const [both, client, json, offline] = await Promise.all([
    labctl(h, ['version']),
    labctl(freshHome(), ['version', '--client']),
    labctl(h, ['version', '-o', 'json']),
    labctl(h, ['version', '--server', 'https://127.0.0.1:1', '--request-timeout', '3s']),
  ]);
  expect(both).toMatchObject({
    code: 0,
    stdout: `Client Version: v${version}\nServer Version: v${version}\n`,
  });
  expect(client).toMatchObject({ code: 0, stdout: `Client Version: v${version}\n` });
  expect(JSON.parse(json.stdout)).toMatchObject({
    clientVersion: { version },
    serverVersion: { version, platform: `${process.platform}/${process.arch}` },
  });
  expect(offline.code).toBe(1);
  expect(offline.stdout).toBe(`Client Version: v${version}\n`);
});

it('documents exit codes in --help, and fails usage errors with code 1', async () => {
  const h = freshHome();
  const [help, unknown, badOutput] = await Promise.all([
    labctl(h, ['--help']),
    labctl(h, ['frobnicate']),
    labctl(h, ['get', 'pods', '-o', 'table']),
  ]);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('Exit codes:\n  0  the command did what was asked\n  1  it did not:');
  for (const verb of [
    'get',
    'describe',
    'apply',
    'create',
    'delete',
    'edit',
    'logs',
    'cordon',
    'uncordon',
    'drain',
    'label',
    'annotate',
    'taint',
    'rollout',
    'token',
    'top',
    'login',
    'config',
    'version',
    'completion',
  ]) {
    expect(help.stdout).toMatch(new RegExp(`\\n  ${verb} `));
  }
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain("error: unknown command 'frobnicate'");
  expect(badOutput.code).toBe(1);
  expect(badOutput.stderr).toContain('unable to match a printer suitable for the output format "table"');
});

it('generates bash, zsh and fish completion from the command tree', async () => {
  const h = freshHome();
  const [bash, zsh, fish] = await Promise.all(
    ['bash', 'zsh', 'fish'].map((s) => labctl(h, ['completion', s])),
  );
  expect(bash.code).toBe(0);
  // bash: complete "labctl config u" and "labctl get p" with the generated function.
  const script = join(h, 'labctl.bash');
  writeFileSync(script, bash.stdout);
  const complete = (words: string[]) =>
    spawnSync(
      'bash',
      [
        '-c',
        `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _labctl; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { encoding: 'utf8' },
    )
      .stdout.trim()
      .split('\n');
  expect(complete(['labctl', 'config', 'u'])).toEqual(['use-context']);
  expect(complete(['labctl', 'get', 'p'])).toEqual(['pods', 'po']);
  expect(complete(['labctl', 'rollout', 'st'])).toEqual(['status']);
  expect(complete(['labctl', 'drain', '--ig'])).toEqual(['--ignore-daemonsets']);
  expect(zsh.stdout).toMatch(/^#compdef labctl\n/);
  expect(zsh.stdout).toContain(
    "'config' 'get-contexts use-context current-context set-context delete-context view",
  );
  expect(fish.stdout).toContain(
    "complete -c labctl -n '__fish_use_subcommand' -a 'drain' -d 'cordon a node and evict its pods",
  );
  expect(fish.stdout).toContain(
    "complete -c labctl -n '__fish_seen_subcommand_from drain' -l ignore-daemonsets",
  );
  for (const [shell, text] of [
    ['zsh', zsh.stdout],
    ['fish', fish.stdout],
  ] as const) {
    // Syntax-check with the shell itself where it is installed.
    const check = spawnSync(shell, shell === 'zsh' ? ['-n'] : ['--no-execute'], {
      input: text,
      encoding: 'utf8',
    });
    if (!check.error) expect(check.status, check.stderr).toBe(0);
  }
});
