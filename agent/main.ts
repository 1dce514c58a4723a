/** The kubelab-agent entry (also the single-executable build's, which must be CommonJS: no top-level await). */
import { main } from './cli.js';

main(process.argv).catch((err: Error) => {
  process.stderr.write(`kubelab-agent: ${err.message}\n`);
  process.exit(1);
});
