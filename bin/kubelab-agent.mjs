#!/usr/bin/env node
// The `kubelab-agent` command from the sources (tsx); `npm run build:agent` makes the single binary.
import { register } from 'tsx/esm/api';

register();
await import('../agent/main.ts');
