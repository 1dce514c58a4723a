/**
 * electron-builder.yml, read and checked by electron-builder's own code (app-builder-lib, the
 * exact version electron-builder 26.17.0 installs): its loader and schema validation, its
 * package.json checks, and the file matchers it packs the app with — so a wrong option, a
 * target that is not there or a pattern that leaves the app without its entry or its native
 * module fails here, not on a desktop half an hour into a build. No network, no Electron.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Configuration, TargetConfigType } from 'app-builder-lib';
import { getConfig, validateConfiguration } from 'app-builder-lib/out/util/config/config.js';
import { getFileMatchers, type FileMatcher } from 'app-builder-lib/out/fileMatcher.js';
import { DebugLogger, type FilterStats } from 'builder-util';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const OUT_DIR = join(ROOT, 'dist', 'desktop');
const APP = '/packaged/app';

// What electron-builder runs on every build but does not export in its typings (@internal).
const internal = createRequire(import.meta.url);
const { getMainFileMatchers } = internal('app-builder-lib/out/fileMatcher.js') as {
  getMainFileMatchers(
    appDir: string,
    destination: string,
    macroExpander: (s: string) => string,
    platformOptions: object,
    platformPackager: { info: object },
    outDir: string,
    isElectronCompile: boolean,
  ): FileMatcher[];
};
const { checkMetadata } = internal('app-builder-lib/out/util/packageMetadata.js') as {
  checkMetadata(
    metadata: object,
    devMetadata: object,
    appPackageFile: string,
    devAppPackageFile: string,
  ): void;
};

let config: Configuration;
let pkg: Record<string, any>;

beforeAll(async () => {
  config = await getConfig(ROOT, null, null);
  pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
});

/** What a filter looks at: whether it is a folder, and for a dependency's file its path in the app. */
const fileStat = (moduleFullFilePath?: string) =>
  ({
    isDirectory: () => false,
    ...(moduleFullFilePath ? { moduleFullFilePath } : {}),
  }) as unknown as FilterStats;

const targets = (t: TargetConfigType | undefined) =>
  (Array.isArray(t) ? t : [t]).map((x) => (typeof x === 'string' ? x : x?.target));

describe('electron-builder.yml', () => {
  it('passes electron-builder’s own validation', async () => {
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
  });

  it('names the app and builds AppImage, deb, dmg and NSIS installers with its icon', () => {
    expect(config.appId).toBe('lab.kubelab.desktop');
    expect(config.productName).toBe('kubelab');
    expect(targets(config.linux?.target)).toEqual(['AppImage', 'deb']);
    expect(targets(config.mac?.target)).toEqual(['dmg']);
    expect(targets(config.win?.target)).toEqual(['nsis']);
    for (const platform of [config.linux, config.mac, config.win]) {
      expect(existsSync(join(ROOT, platform!.icon!)), platform!.icon!).toBe(true);
    }
    // A .deb needs a maintainer with an address.
    expect(config.linux?.maintainer).toMatch(/^.+ <[^@\s]+@[^@\s]+>$/);
    // Not in dist/ itself, where `npm run build:agent` writes.
    expect(config.directories?.output).toBe('dist/desktop');
  });

  it('gives the packaged package.json an entry electron-vite builds, and passes its checks', () => {
    const main = config.extraMetadata?.main as string;
    expect(main).toBe('out/main/index.js');
    const metadata = { ...pkg, ...config.extraMetadata };
    expect(() => checkMetadata(metadata, pkg, 'package.json', 'package.json')).not.toThrow();
    expect(pkg.dependencies.electron).toBeUndefined();
    expect(pkg.devDependencies.electron).toBeDefined();
  });

  it('rebuilds native modules for Electron, and keeps better-sqlite3’s binary out of the asar', () => {
    expect(config.npmRebuild).toBe(true);
    expect(config.asar).toBe(true);
    const unpack = getFileMatchers(config, 'asarUnpack', APP, {
      macroExpander: (s) => s,
      customBuildOptions: {},
      globalOutDir: OUT_DIR,
      defaultSrc: APP,
    })![0].createFilter();
    const unpacks = (rel: string) => unpack(join(APP, rel), fileStat());
    expect(unpacks('node_modules/better-sqlite3/build/Release/better_sqlite3.node')).toBe(true);
    expect(unpacks('node_modules/better-sqlite3/lib/database.js')).toBe(false);
    expect(unpacks('out/main/index.js')).toBe(false);
  });

  describe('packs', () => {
    let main: FileMatcher;
    beforeAll(() => {
      const info = {
        projectDir: ROOT,
        buildResourcesDir: config.directories!.buildResources!,
        isPrepackedAppAsar: false,
        config,
        debugLogger: new DebugLogger(false),
      };
      [main] = getMainFileMatchers(ROOT, APP, (s) => s, {}, { info }, OUT_DIR, false);
    });

    /** Would electron-builder pack this file (a path from the project root)? */
    const packs = (rel: string): boolean => {
      if (!rel.startsWith('node_modules/')) return main.createFilter()(join(ROOT, rel), fileStat());
      // Production dependencies are walked one package at a time, as paths inside the app.
      const pkgDir = rel
        .split('/')
        .slice(0, rel.startsWith('node_modules/@') ? 3 : 2)
        .join('/');
      const matcher = new (main.constructor as typeof FileMatcher)(
        join(ROOT, pkgDir),
        join(APP, pkgDir),
        (s) => s,
        main.patterns,
      );
      return matcher.createFilter()(join(ROOT, rel), fileStat(rel));
    };

    it('the built app, its tray icons and its package.json', () => {
      for (const f of [
        'out/main/index.js',
        'out/main/sqlite-worker.js',
        'out/preload/preload.cjs',
        'out/renderer/index.html',
        'resources/tray/healthy.png',
        'resources/tray/idle@2x.png',
        'package.json',
      ]) {
        expect(packs(f), f).toBe(true);
      }
    });

    it('the dependencies the app loads, better-sqlite3’s binary among them', () => {
      for (const f of [
        'node_modules/better-sqlite3/lib/database.js',
        'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
        'node_modules/@grpc/grpc-js/build/src/index.js',
        'node_modules/etcd3/proto/rpc.proto',
      ]) {
        expect(packs(f), f).toBe(true);
      }
    });

    it('no sources, tests, maps, build inputs, or what the app does not run', () => {
      for (const f of [
        'main/index.ts',
        'renderer/src/App.vue',
        'test/e2e/gui.test.ts',
        'out/main/index.js.map',
        'build/icon.png',
        'build/make-icons.mjs',
        'electron-builder.yml',
        'dist/agent/kubelab-agent',
        'node_modules/tsx/dist/cli.mjs',
        'node_modules/@esbuild/linux-x64/bin/esbuild',
        'node_modules/better-sqlite3/deps/sqlite3/sqlite3.c',
        'node_modules/better-sqlite3/build/Release/test_extension.node',
      ]) {
        expect(packs(f), f).toBe(false);
      }
    });
  });
});
