/**
 * Who may join under a node's name (k3s's node password). Each agent makes a secret of its own
 * on its first join and sends it with every join; the credential it receives keeps a hash of
 * it. A join under a name that still has a credential is accepted only from the machine that
 * holds that name's secret — or with --force, for a machine that replaces another. Otherwise
 * any holder of a join token could take over a live node (and two machines with the same
 * hostname would silently fight over it). Once the name has no credential (its Node was
 * deleted, or an admin deleted the credential), anyone with a join token may take it.
 */
import { ApiError } from '../../client/api/errors.js';
import type { Logger } from '../logging.js';
import { matchesSecretHash, secretHash, type TokenStore } from './tokens.js';

/** An agent's password is 43 characters (32 random bytes); more is not a password but a payload. */
export const MAX_NODE_PASSWORD_LENGTH = 256;

export interface NodeJoin {
  nodeName: string;
  /** The agent's node password; empty from agents older than node passwords. */
  nodePassword: string;
  force: boolean;
  /** The join token's name, for the logs. */
  joinedWith: string;
}

/** Issues the node's credential, replacing the ones it had, when the join may have the name. */
export function admitNodeJoin(tokens: TokenStore, join: NodeJoin, logger: Logger): { token: string } {
  const { nodeName, nodePassword, force } = join;
  if (nodePassword.length > MAX_NODE_PASSWORD_LENGTH) {
    throw new ApiError(
      'BadRequest',
      `nodePassword is ${nodePassword.length} characters, more than the ${MAX_NODE_PASSWORD_LENGTH} allowed: send the password kubelab-agent made (or upgrade it)`,
    );
  }
  const held = tokens.credentialsOfNode(nodeName);
  const sameMachine =
    nodePassword !== '' &&
    held.some((r) => r.nodePasswordHash !== undefined && matchesSecretHash(nodePassword, r.nodePasswordHash));
  if (held.length && !sameMachine && !force) {
    logger.warn({ node: nodeName, joinToken: join.joinedWith }, 'refused a join under a live node name');
    throw new ApiError(
      'AlreadyExists',
      `node "${nodeName}" is already joined by another machine (its credential is valid and this machine's node password differs). ` +
        `If this machine replaces it, delete the Node first (labctl delete node ${nodeName}); if it is another machine, ` +
        `start the agent with a different --node-name; to take the name over anyway, run kubelab-agent with --force`,
      { kind: 'Node', name: nodeName },
    );
  }
  if (held.length) {
    // The same machine joining again, or a forced takeover: the old credential stops working,
    // and what was opened with it (watches, the tunnel) ends.
    tokens.revokeNode(nodeName);
    if (!sameMachine)
      logger.warn({ node: nodeName, joinToken: join.joinedWith }, 'forced join: took the node name over');
  }
  const { token } = tokens.create({
    name: `system:node:${nodeName}`,
    role: 'node',
    nodeName,
    description: `joined with token ${join.joinedWith.replace('system:bootstrap:', '')}`,
    ...(nodePassword ? { nodePasswordHash: secretHash(nodePassword) } : {}),
  });
  logger.info({ node: nodeName, joinToken: join.joinedWith, force: force && !sameMachine }, 'node joined');
  return { token };
}
