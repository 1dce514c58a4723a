/**
 * The glue between commander and a verb: every action gets a Session (closed when it ends, so
 * the process can exit), its positional arguments and its command's options; its failures are
 * explained with what the session knows (where the server address came from).
 */
import type { Command } from 'commander';
import { explainFailure } from './diagnose.js';
import type { Io } from './io.js';
import { Session, type GlobalFlags } from './session.js';

export function globalFlags(cmd: Command): GlobalFlags {
  const o = cmd.optsWithGlobals<GlobalFlags & { requestTimeout?: number }>();
  return {
    context: o.context,
    server: o.server,
    token: o.token,
    certificateAuthority: o.certificateAuthority,
    namespace: o.namespace,
    requestTimeout: o.requestTimeout,
  };
}

/**
 * Wraps a verb for commander's `.action()`: commander passes the positional arguments, then
 * the options, then the command. A failure to connect is explained before it is reported.
 */
export function verb<A extends unknown[], O>(
  io: Io,
  fn: (session: Session, options: O, ...args: A) => Promise<void>,
): (...all: unknown[]) => Promise<void> {
  return async (...all: unknown[]) => {
    const cmd = all[all.length - 1] as Command;
    const args = all.slice(0, -2) as A;
    const session = new Session(io, globalFlags(cmd));
    try {
      await fn(session, cmd.opts<O & object>() as O, ...args);
    } catch (err) {
      throw await explainFailure(err, session);
    } finally {
      session.close();
    }
  };
}
