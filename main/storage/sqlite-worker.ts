/**
 * The worker thread that owns the SQLite write connection: commits (and their fsyncs) and
 * compaction happen here, off the event loop that serves clients.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteEngine } from './sqlite-engine.js';

interface Request {
  id: number;
  method: 'commit' | 'setMeta' | 'compactChunk' | 'tidy' | 'stats' | 'close';
  args: unknown[];
}

const port = parentPort!;
const { path, durable } = workerData as { path: string; durable: boolean };

let engine: SqliteEngine;
try {
  engine = new SqliteEngine(path, true, durable);
  port.postMessage({ ready: true, state: engine.state() });
} catch (err) {
  port.postMessage({ ready: false, error: (err as Error).message });
  process.exit(0);
}

/** The caller has the values it wrote: send back only what it lacks (less to copy). */
function slim(result: ReturnType<SqliteEngine['commit']>): ReturnType<SqliteEngine['commit']> {
  for (const o of result.outcomes) {
    if (o.ok && o.event.type === 'put') {
      o.kv.value = '';
      o.event.value = '';
    }
  }
  return result;
}

port.on('message', (req: Request) => {
  try {
    let result = (engine[req.method] as (...a: unknown[]) => unknown).apply(engine, req.args);
    if (req.method === 'commit') result = slim(result as ReturnType<SqliteEngine['commit']>);
    port.postMessage({ id: req.id, ok: true, result });
    if (req.method === 'close') port.close();
  } catch (err) {
    port.postMessage({ id: req.id, ok: false, error: (err as Error).message });
  }
});
