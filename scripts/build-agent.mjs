#!/usr/bin/env node
// Builds kubelab-agent as one executable file: esbuild bundles agent/main.ts (CommonJS, as a
// Node single-executable application requires), then the bundle is injected into a copy of
// this machine's node binary. The binary is stripped before injection (stripping after breaks
// it), and NODE_OPTIONS is ignored at run time by the service unit, not here.
// Usage: node scripts/build-agent.mjs [--out dist/agent]
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outArg = process.argv.indexOf('--out');
const outDir = resolve(root, outArg > 0 ? process.argv[outArg + 1] : 'dist/agent');
const step = (msg) => process.stderr.write(`[build:agent] ${msg}\n`);

mkdirSync(outDir, { recursive: true });
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

step('preparing the single-executable blob');
const blob = join(outDir, 'kubelab-agent.blob');
const seaConfig = join(outDir, 'sea-config.json');
writeFileSync(
  seaConfig,
  JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache: false }),
);
execFileSync(process.execPath, ['--experimental-sea-config', seaConfig], { stdio: 'pipe' });

const exe = join(outDir, process.platform === 'win32' ? 'kubelab-agent.exe' : 'kubelab-agent');
rmSync(exe, { force: true });
copyFileSync(process.execPath, exe);
chmodSync(exe, 0o755);
if (process.platform === 'linux') {
  step('stripping the node binary (before injection)');
  execFileSync('strip', [exe]);
}
step('injecting the blob');
const postject = join(root, 'node_modules', 'postject', 'dist', 'cli.js');
execFileSync(
  process.execPath,
  [
    postject,
    exe,
    'NODE_SEA_BLOB',
    blob,
    '--sentinel-fuse',
    'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
    ...(process.platform === 'darwin' ? ['--macho-segment-name', 'NODE_SEA'] : []),
  ],
  // postject warns about ELF notes it does not know; only a failure is worth showing.
  { stdio: 'pipe' },
);
rmSync(blob);
rmSync(seaConfig);
for (const f of ['kubelab-agent.service', 'install.sh'])
  copyFileSync(join(root, 'agent', 'packaging', f), join(outDir, f));
chmodSync(join(outDir, 'install.sh'), 0o755);
step(
  `built ${exe} (${Math.round(statSync(exe).size / 1024 / 1024)} MiB), with install.sh and kubelab-agent.service beside it`,
);
