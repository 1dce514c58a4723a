/**
 * Test support: records every child process this Node process starts. Asynchronous spawns
 * (spawn, exec, execFile, fork) are seen through the `child_process` diagnostics channel, which
 * also catches libraries that captured `require('child_process').exec` when they loaded
 * (systeminformation does). Synchronous ones (spawnSync, execSync, execFileSync) have no channel:
 * they are wrapped on the module object and the ESM named exports are re-synced, which catches
 * callers going through the module or an ESM import, but not a reference captured before
 * watchSpawns() ran.
 */
import cp, { type ChildProcess } from 'node:child_process';
import dc from 'node:diagnostics_channel';
import { syncBuiltinESMExports } from 'node:module';

const syncNames = ['spawnSync', 'execSync', 'execFileSync'] as const;

export interface SpawnWatch {
  /** What was started, e.g. `spawn /bin/sh,-c,df -kP` or `execFileSync true`. */
  readonly spawned: string[];
  stop(): void;
}

export function watchSpawns(): SpawnWatch {
  const children: ChildProcess[] = [];
  const sync: string[] = [];
  const onSpawn = (message: unknown) => {
    children.push((message as { process: ChildProcess }).process);
  };
  dc.subscribe('child_process', onSpawn);
  const mod = cp as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originals = syncNames.map((name) => [name, mod[name]] as const);
  for (const [name, original] of originals) {
    mod[name] = function (this: unknown, ...args: unknown[]) {
      sync.push(`${name} ${String(args[0])}`);
      return original.apply(this, args);
    };
  }
  syncBuiltinESMExports();
  return {
    get spawned() {
      // spawnargs is filled in after the channel fires, so read it late.
      return [...children.map((c) => `spawn ${String(c.spawnargs)}`), ...sync];
    },
    stop() {
      dc.unsubscribe('child_process', onSpawn);
      for (const [name, original] of originals) mod[name] = original;
      syncBuiltinESMExports();
    },
  };
}
