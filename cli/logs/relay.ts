/**
 * Copying log streams to labctl's output, as kubectl's logs does: one after the other, or —
 * when following several — all at once, whole lines at a time so lines of different pods never
 * mix mid-line; `[pod/NAME/CONTAINER] ` before each line with --prefix. The first failure stops
 * everything, unless --ignore-errors, when it is reported and the other streams go on.
 */
import type { LogStream } from '../../client/client.js';
import { formatError } from '../errors.js';
import type { Io } from '../io.js';
import type { LogSource } from './sources.js';

export interface RelayOptions {
  /** Read every stream at once (following several logs) instead of one after the other. */
  parallel: boolean;
  prefix: boolean;
  ignoreErrors: boolean;
}

export type OpenLog = (source: LogSource) => Promise<LogStream>;

/** Where one stream's bytes go: straight through, or as whole lines, each with its prefix. */
interface Sink {
  write(chunk: Buffer): void;
  /** The stream ended: what is left of a last line without a newline. */
  end(): void;
}

function rawSink(io: Io): Sink {
  return { write: (chunk) => io.out(chunk), end: () => {} };
}

function lineSink(io: Io, prefix: string): Sink {
  const head = Buffer.from(prefix);
  let partial: Buffer[] = [];
  return {
    write(chunk) {
      const lines: Buffer[] = [];
      let start = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
        lines.push(head, ...partial, chunk.subarray(start, nl + 1));
        partial = [];
        start = nl + 1;
      }
      if (start < chunk.length) partial.push(chunk.subarray(start));
      // One write per chunk: other streams' lines can only come between whole lines.
      if (lines.length) io.out(Buffer.concat(lines));
    },
    end() {
      if (partial.length) io.out(Buffer.concat([head, ...partial]));
      partial = [];
    },
  };
}

function sinkFor(io: Io, source: LogSource, opts: RelayOptions): Sink {
  if (opts.prefix) return lineSink(io, `[pod/${source.pod}/${source.container}] `);
  return opts.parallel ? lineSink(io, '') : rawSink(io);
}

/** Copies one log to the output; the stream is handed to `started` so it can be stopped. */
async function copy(
  io: Io,
  source: LogSource,
  open: OpenLog,
  opts: RelayOptions,
  started: (stream: LogStream) => void,
): Promise<void> {
  const sink = sinkFor(io, source, opts);
  try {
    const stream = await open(source);
    started(stream);
    for await (const chunk of stream) sink.write(chunk);
  } finally {
    sink.end();
  }
}

/** Reads the logs of `sources` to the output; throws the first failure unless told to ignore it. */
export async function relayLogs(
  io: Io,
  sources: LogSource[],
  open: OpenLog,
  opts: RelayOptions,
): Promise<void> {
  const report = (err: unknown) => io.err(`${formatError(err)}\n`);
  if (!opts.parallel) {
    for (const source of sources) {
      try {
        await copy(io, source, open, opts, () => {});
      } catch (err) {
        if (!opts.ignoreErrors) throw err;
        report(err);
      }
    }
    return;
  }
  const streams: LogStream[] = [];
  let failure: { err: unknown } | undefined;
  const started = (stream: LogStream) => (failure ? stream.stop() : streams.push(stream));
  await Promise.all(
    sources.map((source) =>
      copy(io, source, open, opts, started).catch((err: unknown) => {
        if (opts.ignoreErrors) return report(err);
        if (failure) return;
        failure = { err };
        // The command fails with this error: the other logs stop here.
        for (const s of streams) s.stop();
      }),
    ),
  );
  if (failure) throw failure.err;
}
