#!/usr/bin/env node
// The `kubelab` command. Runs the TypeScript sources directly through tsx, so `npx kubelab`
// works right after `npm ci` with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../main/server.ts');
await main(process.argv);
