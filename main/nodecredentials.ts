/**
 * Deleting a Node revokes its credential: the machine must join again with a fresh token
 * (Kubernetes: deleting the node's client certificate approval). Watches Node deletions.
 */
import { SharedIndexInformer } from '../client/cache/informer.js';
import type { Client } from '../client/client.js';
import type { Clock } from '../client/util/clock.js';
import type { TokenStore } from './grpc/tokens.js';
import type { Logger } from './logging.js';

export class NodeCredentialRevoker {
  private readonly informer: SharedIndexInformer<'Node'>;

  constructor(client: Client, tokens: TokenStore, clock: Clock, logger: Logger) {
    this.informer = new SharedIndexInformer({ client, kind: 'Node', clock, logger });
    this.informer.addEventHandler({
      onDelete: (node) => {
        const name = node.metadata?.name ?? '';
        const revoked = tokens.revokeNode(name);
        if (revoked) logger.info({ node: name, revoked }, 'node deleted; its credential is revoked');
      },
    });
  }

  start(): Promise<void> {
    this.informer.run();
    return this.informer.whenSynced();
  }

  stop(): void {
    this.informer.stop();
  }
}
