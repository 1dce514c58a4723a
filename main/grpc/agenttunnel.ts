/**
 * AgentTunnel.Connect: the agent's end of the reverse tunnel. Only a node credential may
 * connect, and the tunnel is bound to the credential's node (a hello naming another node is
 * refused), so one node can never receive — or answer — another node's requests. The first
 * message must be the hello; headers then tell the agent the tunnel is live. Whatever the
 * agent sends afterwards goes to the registry; nothing it sends can throw past this handler.
 */
import * as grpc from '@grpc/grpc-js';
import { ApiError } from '../../client/api/errors.js';
import type { Identity } from '../../client/api/local.js';
import type { TunnelDown, TunnelUp } from '../../proto/gen/kubelab/v1/tunnel.js';
import { toApiError } from '../apiserver/apiserver.js';
import type { Logger } from '../logging.js';
import { identityOf } from './handlers.js';
import { revokedError } from './revocations.js';
import type { TokenStore } from './tokens.js';
import type { AgentTunnel, TunnelLink, TunnelRegistry } from './tunnel.js';
import { isMalformed, toServiceError, type Malformed } from './wire.js';

/** An agent that connects but says nothing is dropped after this long. */
export const HELLO_TIMEOUT_MS = 10_000;

function requireNode(id: Identity): string {
  if (id.role !== 'node' || !id.nodeName) {
    throw new ApiError(
      'Forbidden',
      `user "${id.name}" cannot open an agent tunnel: AgentTunnel.Connect is only for agents, with the node credential kubelab-agent gets by joining (not a ${id.role} token)`,
    );
  }
  return id.nodeName;
}

export function agentTunnelHandlers(
  registry: TunnelRegistry,
  tokens: TokenStore,
  logger: Logger,
  helloTimeoutMs = HELLO_TIMEOUT_MS,
): grpc.UntypedServiceImplementation {
  const connect = (call: grpc.ServerDuplexStream<TunnelUp | Malformed, TunnelDown>) => {
    let tunnel: AgentTunnel | undefined;
    let done = false;
    let forgetRevocation = (): void => undefined;
    // An agent that connects but says nothing is dropped (finish is defined below; it runs later).
    const helloTimer = setTimeout(
      () =>
        finish(
          new ApiError(
            'BadRequest',
            `no hello within ${helloTimeoutMs / 1000} s: an agent's first message on the tunnel is hello {nodeName}; upgrade kubelab-agent`,
          ),
        ),
      helloTimeoutMs,
    );
    helloTimer.unref?.();
    /** The call is over from our side: `err` becomes its status (or OK). */
    const finish = (err?: ApiError) => {
      if (done) return;
      done = true;
      clearTimeout(helloTimer);
      forgetRevocation();
      if (tunnel) registry.detach(tunnel);
      if (err) call.emit('error', toServiceError(err));
      else call.end();
    };
    /** The call is over from the agent's side (gone, cancelled): nothing more can be sent. */
    const gone = () => {
      if (done) return;
      done = true;
      clearTimeout(helloTimer);
      forgetRevocation();
      if (tunnel) registry.detach(tunnel);
    };
    const link: TunnelLink = {
      send: (msg) => {
        if (!done) call.write(msg);
      },
      close: (err) => finish(err),
    };
    call.on('cancelled', gone);
    call.on('error', gone);
    // The agent half-closed: it is leaving; end ours too.
    call.on('end', () => finish());

    let nodeName: string;
    try {
      const id = identityOf(call.metadata, tokens);
      nodeName = requireNode(id);
      // The node's credential is revoked (its Node deleted, or its name taken over): the
      // control plane stops sending it requests at once.
      forgetRevocation = tokens.revocations.whenRevoked(id, () => finish(revokedError(id, 'agent tunnel')));
    } catch (err) {
      finish(toApiError(err, logger));
      return;
    }
    call.on('data', (msg: TunnelUp | Malformed) => {
      if (done) return;
      try {
        if (isMalformed(msg)) {
          throw new ApiError(
            'BadRequest',
            `the agent sent a message that is not a valid TunnelUp (${msg.malformed}); upgrade kubelab-agent to match the control plane`,
          );
        }
        if (tunnel) {
          tunnel.receive(msg);
          return;
        }
        if (!msg.hello) {
          throw new ApiError(
            'BadRequest',
            "the agent's first message on the tunnel must be hello {nodeName}; upgrade kubelab-agent",
          );
        }
        const named = msg.hello.nodeName ?? '';
        if (named && named !== nodeName) {
          throw new ApiError(
            'Forbidden',
            `this credential belongs to node "${nodeName}", so it cannot open the tunnel of node "${named}": run the agent with --node-name ${nodeName}, or join "${named}" with its own token`,
          );
        }
        clearTimeout(helloTimer);
        tunnel = registry.attach(nodeName, link);
        call.sendMetadata(new grpc.Metadata());
      } catch (err) {
        finish(toApiError(err, logger));
      }
    });
  };
  return { connect } as unknown as grpc.UntypedServiceImplementation;
}
