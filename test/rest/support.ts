/**
 * The real kubectl against a kubelab cluster, as a user runs it: the binaries `npm run
 * fetch:kubectl` puts in .cache/kubectl (the newest minor and an older one), a kubeconfig made
 * by the real `kubelab kubeconfig`, and kubectl run as a child process with its output kept.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { CliCluster } from '../cli/support.js';

export const run = promisify(execFile);
export const ROOT = join(import.meta.dirname, '..', '..');
export const KUBELAB = join(ROOT, 'bin', 'kubelab.mjs');
export const KUBECTLS = ['1.33', '1.30'].map((minor) => ({
  minor,
  path: join(ROOT, '.cache', 'kubectl', minor, 'kubectl'),
}));

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  minor?: string;
  env?: Record<string, string>;
  input?: string;
}

export function checkKubectls(): void {
  for (const k of KUBECTLS)
    if (!existsSync(k.path))
      throw new Error(`no kubectl ${k.minor} at ${k.path}: run \`npm run fetch:kubectl\``);
}

/** `kubelab kubeconfig --merge` into a kubeconfig file of the cluster's home folder. */
export async function mergedKubeconfig(c: CliCluster, extra: string[] = []): Promise<string> {
  const kubeconfig = join(c.home, 'kubeconfig');
  const made = await run(
    process.execPath,
    [KUBELAB, 'kubeconfig', '--data-dir', c.t.dataDir, '--merge', ...extra],
    {
      env: { ...process.env, KUBECONFIG: kubeconfig },
    },
  );
  expect(made.stdout).toContain(`added the context "kubelab" to ${kubeconfig}`);
  return kubeconfig;
}

/** A printed kubeconfig of another role (`kubelab kubeconfig --role viewer`), written to a file. */
export async function printedKubeconfig(c: CliCluster, file: string, extra: string[]): Promise<string> {
  const made = await run(process.execPath, [KUBELAB, 'kubeconfig', '--data-dir', c.t.dataDir, ...extra], {
    env: process.env,
  });
  writeFileSync(file, made.stdout);
  return file;
}

/** A kubectl left running (`get -w`, `logs -f`): what it printed so far, and a way to stop it. */
export interface RunningKubectl {
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves when kubectl exits (by itself or stopped). */
  readonly exited: Promise<KubectlResult>;
  stop(): Promise<KubectlResult>;
}

export interface Kubectl {
  (args: string[], options?: KubectlOptions): Promise<KubectlResult>;
  start(args: string[], options?: KubectlOptions): RunningKubectl;
}

export function kubectlRunner(c: CliCluster, kubeconfig: string): Kubectl {
  const start = (args: string[], options: KubectlOptions = {}): RunningKubectl => {
    const bin = KUBECTLS.find((k) => k.minor === (options.minor ?? '1.33'))!.path;
    const child = spawn(bin, args, {
      env: { PATH: process.env.PATH, HOME: c.home, KUBECONFIG: kubeconfig, ...options.env },
    });
    const out = { stdout: '', stderr: '' };
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out.stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out.stderr += d));
    child.stdin.end(options.input ?? '');
    const exited = new Promise<KubectlResult>((resolve) =>
      child.on('close', (code) => resolve({ code: code ?? -1, ...out })),
    );
    return {
      get stdout() {
        return out.stdout;
      },
      get stderr() {
        return out.stderr;
      },
      exited,
      stop() {
        child.kill();
        return exited;
      },
    };
  };
  const runOnce = (args: string[], options: KubectlOptions = {}) => start(args, options).exited;
  return Object.assign(runOnce, { start });
}
