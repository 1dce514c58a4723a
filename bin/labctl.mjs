#!/usr/bin/env node
// The `labctl` command. Runs the TypeScript sources directly through tsx, so `npx labctl`
// works right after `npm ci` with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv);
