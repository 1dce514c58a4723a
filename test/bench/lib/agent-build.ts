/**
 * Builds for agent.bench.ts: the shipped single executable (scripts/build-agent.mjs, unchanged),
 * and, in the benchmark's temp folder only, variants of the agent's bundle that show what a
 * product change would save without making it: the same bundle with a dependency stubbed out,
 * with V8 flags set before the agent's code runs, unminified and instrumented to record which
 * bundled modules are evaluated; single executables of those (the same steps as
 * scripts/build-agent.mjs) and of an idle script (the runtime's own floor).
 */
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build, type Metafile, type Plugin } from 'esbuild';
import { REPO_ROOT } from './child.js';

const run = promisify(execFile);

/** The shipped build of this machine's platform: `node scripts/build-agent.mjs --out <dir> --platforms linux-x64`. */
export async function buildShippedAgent(
  outDir: string,
): Promise<{ exe: string; bundle: string; seconds: number }> {
  const t0 = performance.now();
  const args = [join(REPO_ROOT, 'scripts/build-agent.mjs'), '--out', outDir, '--platforms', 'linux-x64'];
  await run(process.execPath, args, {
    cwd: REPO_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  return {
    exe: join(outDir, 'kubelab-agent'),
    bundle: join(outDir, 'kubelab-agent.cjs'),
    seconds: (performance.now() - t0) / 1000,
  };
}

export interface BundleOptions {
  minify: boolean;
  /** Replace these packages by a stub whose every function resolves to {} (never loaded). */
  stub?: string[];
  /** Code run before anything else in the bundle. */
  banner?: string;
}

/**
 * The agent's bundle with scripts/build-agent.mjs's esbuild options (keep them in step; the
 * benchmark checks that the minified, unstubbed result is byte-identical to the shipped one).
 */
export async function bundleAgent(outfile: string, options: BundleOptions): Promise<Metafile> {
  const stubbed = options.stub ?? [];
  const plugins: Plugin[] = stubbed.length
    ? [
        {
          name: 'stub',
          setup(b) {
            const filter = new RegExp(
              `^(${stubbed.map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`,
            );
            b.onResolve({ filter }, (a) => ({ path: a.path, namespace: 'bench-stub' }));
            b.onLoad({ filter: /.*/, namespace: 'bench-stub' }, () => ({
              contents:
                'module.exports = new Proxy({}, { get: (_t, k) => (k === "__esModule" ? false : async () => ({})) });',
              loader: 'js',
            }));
          },
        },
      ]
    : [];
  const result = await build({
    entryPoints: [join(REPO_ROOT, 'agent/main.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile,
    minify: options.minify,
    legalComments: 'none',
    logLevel: 'warning',
    external: ['pino-pretty', 'osx-temperature-sensor'],
    metafile: true,
    plugins,
    ...(options.banner ? { banner: { js: options.banner } } : {}),
  });
  return result.metafile;
}

/**
 * Makes an unminified bundle record, in `globalThis.__kubelabBenchModules`, the path of every
 * bundled CommonJS module whose wrapper runs (esbuild's `__commonJS` helper). ES modules are
 * hoisted into the bundle's top level: they always run.
 */
export function instrumentModules(bundle: string): void {
  const text = readFileSync(bundle, 'utf8');
  const helper = 'var __commonJS = (cb, mod) => function __require() {';
  if (!text.includes(helper)) throw new Error(`esbuild's __commonJS helper not found in ${bundle}`);
  writeFileSync(
    bundle,
    text.replace(
      helper,
      `${helper}\n  if (!mod) (globalThis.__kubelabBenchModules ??= new Set()).add(__getOwnPropNames(cb)[0]);`,
    ),
  );
}

/** Bytes in the bundle by package (node_modules/<pkg>) or by our top folder (agent, client, proto). */
export function bytesByPackage(meta: Metafile): Map<string, { bytes: number; files: string[] }> {
  const out = new Map<string, { bytes: number; files: string[] }>();
  for (const output of Object.values(meta.outputs)) {
    for (const [path, input] of Object.entries(output.inputs)) {
      const key = packageOf(path);
      const entry = out.get(key) ?? { bytes: 0, files: [] };
      entry.bytes += input.bytesInOutput;
      entry.files.push(path);
      out.set(key, entry);
    }
  }
  return out;
}

export function packageOf(path: string): string {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (m) return m[1];
  return `${path.split('/')[0]}/ (kubelab)`;
}

/**
 * A single executable from a CommonJS script, by the steps of scripts/build-agent.mjs (Linux):
 * SEA blob, a stripped copy of this node binary, the blob injected with postject.
 */
export async function buildSea(script: string, exe: string): Promise<void> {
  const blob = `${exe}.blob`;
  const seaConfig = `${exe}.sea-config.json`;
  writeFileSync(
    seaConfig,
    JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true, useCodeCache: false }),
  );
  await run(process.execPath, ['--experimental-sea-config', seaConfig]);
  rmSync(exe, { force: true });
  copyFileSync(process.execPath, exe);
  chmodSync(exe, 0o755);
  if (process.platform === 'linux') await run('strip', [exe]);
  await run(process.execPath, [
    join(REPO_ROOT, 'node_modules/postject/dist/cli.js'),
    exe,
    'NODE_SEA_BLOB',
    blob,
    '--sentinel-fuse',
    'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
  ]);
  rmSync(blob);
  rmSync(seaConfig);
}

/** The probe preload (agent-probe.ts) as one CommonJS file. */
export async function bundleProbe(outfile: string): Promise<void> {
  await build({
    entryPoints: [join(REPO_ROOT, 'test/bench/lib/agent-probe.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile,
    logLevel: 'warning',
  });
}
