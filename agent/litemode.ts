/**
 * Whether this run of the agent trades V8's optimizing compilers for memory. A lab machine's
 * agent is idle nearly all the time: V8's lite mode (no optimizing compiler, feedback vectors
 * allocated lazily) cut its resident memory by ~7 MiB of ~65 MiB at the same CPU in
 * bench:agent. A hollow fleet runs thousands of nodes in one process and needs the compilers.
 */
export function wantsLiteMode(argv: readonly string[]): boolean {
  return !argv.some((arg) => arg === '--hollow' || arg.startsWith('--hollow='));
}
