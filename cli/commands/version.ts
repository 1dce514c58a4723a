/** `labctl version`: labctl's version and the server's (like kubectl version); --client for labctl's only. */
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { fetchServerVersion, type ServerVersion } from '../../client/grpc/cluster.js';
import { verb } from '../command.js';
import type { Io } from '../io.js';
import { CLIENT_VERSION } from '../version.js';
import type { Session } from '../session.js';
import { InvalidArgumentError } from 'commander';

interface VersionOptions {
  client?: boolean;
  output?: 'json' | 'yaml';
}

async function version(session: Session, opts: VersionOptions): Promise<void> {
  const io = session.io;
  const clientVersion = {
    version: CLIENT_VERSION,
    platform: `${process.platform}/${process.arch}`,
    runtimeVersion: process.version,
  };
  let serverVersion: ServerVersion | undefined;
  let failure: unknown;
  if (!opts.client) {
    try {
      serverVersion = await fetchServerVersion(session.connectionOptions());
    } catch (err) {
      failure = err;
    }
  }
  if (opts.output) {
    const doc = { clientVersion, ...(serverVersion ? { serverVersion } : {}) };
    io.out(opts.output === 'json' ? `${JSON.stringify(doc, null, 2)}\n` : stringify(doc));
  } else {
    io.out(`Client Version: v${CLIENT_VERSION}\n`);
    if (serverVersion) io.out(`Server Version: v${serverVersion.version}\n`);
  }
  // The client's version is printed either way; an unreachable server still fails the command.
  if (failure) throw failure;
}

export function versionCommand(program: Command, io: Io): void {
  program
    .command('version')
    .description("print labctl's version and the server's")
    .option('--client', "only labctl's version; do not contact the server")
    .option('-o, --output <format>', 'json or yaml', (v) => {
      if (v !== 'json' && v !== 'yaml') throw new InvalidArgumentError('use json or yaml');
      return v;
    })
    .action(verb<[], VersionOptions>(io, (s, o) => version(s, o)));
}
