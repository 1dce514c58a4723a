/**
 * An upgrade asked for from the control plane: when the Node carries the annotation
 * kubelab.io/agent-upgrade (the GUI's "Upgrade" sets it to the control plane's version), the
 * agent fetches that executable (upgrade.ts), swaps it in, takes the annotation away and exits,
 * for its service manager to start the new one — its pods keep running and are adopted. An
 * agent that no service manager would restart does not exit: it says so in a Warning event.
 */
import { AGENT_UPGRADE_ANNOTATION } from '../client/api/agentversion.js';
import type { Node } from '../client/api/types.js';
import type { Client } from '../client/client.js';
import type { EventRecorder } from '../client/events/recorder.js';
import type { Logger } from './logger.js';
import { runsAsExecutable, serviceManager, upgradeExecutable } from './upgrade.js';

export interface SelfUpgradeOptions {
  client: Client;
  recorder: EventRecorder;
  logger: Logger;
  server: string;
  caPem: string;
  current: string;
  /** Ends the process once the new executable is in place (default: process.exit(0)). */
  exit?: () => void;
}

export class SelfUpgrade {
  private running = false;
  /** The annotation value acted on last (each value is acted on once). */
  private handled: string | undefined;

  constructor(private readonly options: SelfUpgradeOptions) {}

  /** Called with every version of this agent's Node. */
  nodeChanged(node: Node): void {
    const wanted = node.metadata?.annotations?.[AGENT_UPGRADE_ANNOTATION];
    if (!wanted || wanted === this.handled || this.running) return;
    this.handled = wanted;
    this.running = true;
    void this.upgrade(node, wanted).finally(() => (this.running = false));
  }

  private async upgrade(node: Node, wanted: string): Promise<void> {
    const { recorder, logger } = this.options;
    const manager = serviceManager();
    const refuse = (message: string) => {
      recorder.event(node, 'Warning', 'AgentUpgradeFailed', message);
      logger.warn({ wanted }, message);
    };
    if (!runsAsExecutable())
      return refuse(
        'the agent runs from sources under Node, not as the kubelab-agent executable: it cannot replace itself',
      );
    if (!manager)
      return refuse(
        'no service manager would start the agent again after it replaced itself: run `kubelab-agent upgrade` on the machine, then restart the agent',
      );
    try {
      const result = await upgradeExecutable({
        server: this.options.server,
        caPem: this.options.caPem,
        executable: process.execPath,
        current: this.options.current,
        force: wanted === 'force',
      });
      await this.clearAnnotation(node);
      if (!result.upgraded) {
        recorder.event(node, 'Normal', 'AgentUpToDate', `kubelab-agent is already at ${result.to}`);
        return;
      }
      recorder.event(
        node,
        'Normal',
        'AgentUpgraded',
        `kubelab-agent ${result.from} replaced by ${result.to}; restarting under ${manager.name}`,
      );
      logger.info(
        { from: result.from, to: result.to },
        'upgraded; exiting for the service manager to start the new version',
      );
      await recorder.flush();
      (this.options.exit ?? (() => process.exit(0)))();
    } catch (err) {
      refuse(`could not upgrade: ${(err as Error).message}`);
    }
  }

  private async clearAnnotation(node: Node): Promise<void> {
    await this.options.client.patch('Node', node.metadata!.name!, {
      metadata: { annotations: { [AGENT_UPGRADE_ANNOTATION]: null } },
    });
  }
}
