/**
 * `kubelab` — the headless entry: `kubelab server` runs the same ControlPlane the desktop app
 * hosts; `kubelab controller-manager` runs the controllers on their own.
 */
import { Command } from 'commander';
import { VERSION } from './commands/common.js';
import { controllerManagerCommand } from './commands/controller-manager.js';
import { serverCommand } from './commands/server.js';
import { kubeconfigCommand } from './commands/kubeconfig.js';
import { tokenCommand } from './commands/token.js';

export function buildProgram(): Command {
  const program = new Command('kubelab')
    .description('kubelab: a Kubernetes-style control plane for the home lab')
    .version(VERSION)
    .showHelpAfterError();
  serverCommand(program);
  controllerManagerCommand(program);
  tokenCommand(program);
  kubeconfigCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  await buildProgram().parseAsync(argv);
}
