/** The kubelab-agent entry (also the single-executable build's, which must be CommonJS: no top-level await). */
import { setFlagsFromString } from 'node:v8';
import { wantsLiteMode } from './litemode.js';

// Before the agent's code is loaded, so that V8 compiles all of it in lite mode; a single
// executable takes no V8 flags on its command line.
if (wantsLiteMode(process.argv)) setFlagsFromString('--lite-mode');

import('./cli.js')
  .then(({ main }) => main(process.argv))
  .catch((err: Error) => {
    process.stderr.write(`kubelab-agent: ${err.message}\n`);
    process.exit(1);
  });
