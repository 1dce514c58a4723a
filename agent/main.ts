/** The kubelab-agent entry (also the single-executable build's). */
import { main } from './cli.js';

await main(process.argv);
