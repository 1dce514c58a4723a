import { closeSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../client/util/clock.js';
import { parseIndex } from './log-index.js';
import { rfc3339NanoFixed } from './log-stream.js';
import { LogStore, type LogStoreOptions } from './logs.js';
import type { LogRequest } from './types.js';

const POD = 'pod-uid-1';
const T0 = Date.parse('2026-01-01T00:00:00Z');

let dir: string;
let clock: FakeClock;
let stores: LogStore[];
let fds: number[];

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kubelab-logs-'));
  clock = new FakeClock(T0);
  stores = [];
  fds = [];
});

afterEach(() => {
  for (const store of stores) store.close();
  for (const fd of fds) closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
});

function newStore(opts: Partial<LogStoreOptions> = {}): LogStore {
  const store = new LogStore({ dataDir: dir, clock, ...opts });
  stores.push(store);
  return store;
}

/** Opens an instance's log like the runtime does; the returned function writes as the process. */
function writer(store: LogStore, container = 'app', restartCount = 0): (text: string) => void {
  const fd = store.openForWriting(POD, container, restartCount);
  fds.push(fd);
  return (text) => {
    writeSync(fd, text);
  };
}

/** Moves time on and lets the poller see what was written. */
async function tick(store: LogStore, ms = 250): Promise<void> {
  clock.advance(ms);
  await store.pollOnce();
}

async function read(
  store: LogStore,
  req: Partial<LogRequest> = {},
  signal = new AbortController().signal,
): Promise<string> {
  const chunks: Buffer[] = [];
  await store.stream(
    { podUid: POD, container: 'app', ...req },
    (chunk) => {
      chunks.push(chunk);
      return true;
    },
    signal,
  );
  return Buffer.concat(chunks).toString();
}

const ts = (ms: number) => rfc3339NanoFixed(ms);

describe('LogStore writing and indexing', () => {
  it('opens <dataDir>/pods/<pod>/<container>/<n>.log for appending, and serves what is written', async () => {
    const store = newStore();
    const write = writer(store, 'app', 2);
    write('one\n');
    write('two\n');
    expect(readFileSync(path.join(dir, 'pods', POD, 'app', '2.log'), 'utf8')).toBe('one\ntwo\n');
    expect(await read(store)).toBe('one\ntwo\n');
    expect(await store.instanceNumbers(POD, 'app')).toEqual([2]);
  });

  it('notes in <n>.log.idx when each stretch was first seen, one entry per poll that saw growth', async () => {
    const store = newStore();
    const write = writer(store);
    write('a\n');
    await tick(store);
    await tick(store); // nothing new: no entry
    write('bb\n');
    await tick(store);
    const index = parseIndex(readFileSync(path.join(dir, 'pods', POD, 'app', '0.log.idx'), 'utf8'));
    expect(index).toEqual([
      { end: 2, time: T0 + 250 },
      { end: 5, time: T0 + 750 },
    ]);
  });

  it('gives each line the time its first byte was first seen (--timestamps format)', async () => {
    const store = newStore();
    const write = writer(store);
    write('first\nsec');
    await tick(store, 1000);
    write('ond\nthird\n');
    await tick(store, 1500);
    write('partial');
    await tick(store, 1);
    expect(await read(store, { timestamps: true })).toBe(
      `${ts(T0 + 1000)} first\n${ts(T0 + 1000)} second\n${ts(T0 + 2500)} third\n${ts(T0 + 2501)} partial`,
    );
    expect(ts(T0 + 1234)).toBe('2026-01-01T00:00:01.234000000Z');
  });

  it('shows bytes written since the last poll too, timed by the read', async () => {
    const store = newStore();
    const write = writer(store);
    write('early\n');
    clock.advance(100);
    expect(await read(store, { timestamps: true })).toBe(`${ts(T0 + 100)} early\n`);
  });
});

describe('LogStore.stream options', () => {
  /** Five lines, one second apart: line N seen at T0 + N s. */
  async function fiveLines(): Promise<LogStore> {
    const store = newStore();
    const write = writer(store);
    for (let n = 1; n <= 5; n++) {
      write(`line ${n}\n`);
      await tick(store, 1000);
    }
    return store;
  }

  it('tailLines counts from the end', async () => {
    const store = await fiveLines();
    expect(await read(store, { tailLines: 2 })).toBe('line 4\nline 5\n');
    expect(await read(store, { tailLines: 10 })).toBe('line 1\nline 2\nline 3\nline 4\nline 5\n');
    expect(await read(store, { tailLines: 0 })).toBe('');
  });

  it('tailLines counts a last line without its newline yet', async () => {
    const store = newStore();
    writer(store)('a\nb\nc');
    expect(await read(store, { tailLines: 1 })).toBe('c');
    expect(await read(store, { tailLines: 2 })).toBe('b\nc');
  });

  it('sinceTime keeps the lines first seen at or after it', async () => {
    const store = await fiveLines();
    expect(await read(store, { sinceTime: T0 + 3000 })).toBe('line 3\nline 4\nline 5\n');
    expect(await read(store, { sinceTime: T0 + 2500 })).toBe('line 3\nline 4\nline 5\n');
    expect(await read(store, { sinceTime: T0 + 9000 })).toBe('');
    expect(await read(store, { sinceTime: T0 + 2000, tailLines: 2 })).toBe('line 4\nline 5\n');
    expect(await read(store, { sinceTime: T0 + 4000, tailLines: 3 })).toBe('line 4\nline 5\n');
  });

  it('sinceTime leaves out a line that started before it, even if it ended after', async () => {
    const store = newStore();
    const write = writer(store);
    write('old li');
    await tick(store, 1000);
    write('ne\nnew line\n');
    await tick(store, 1000);
    expect(await read(store, { sinceTime: T0 + 2000 })).toBe('new line\n');
  });

  it('limitBytes stops after that many bytes of output, timestamps included', async () => {
    const store = await fiveLines();
    expect(await read(store, { limitBytes: 10 })).toBe('line 1\nlin');
    const withTimes = await read(store, { limitBytes: 40, timestamps: true });
    expect(withTimes).toBe(`${ts(T0 + 1000)} line 1\n${ts(T0 + 2000)} `.slice(0, 40));
    expect(withTimes).toHaveLength(40);
  });

  it('stops when the reader goes away (write returns false)', async () => {
    const store = await fiveLines();
    let calls = 0;
    await store.stream(
      { podUid: POD, container: 'app' },
      () => {
        calls++;
        return false;
      },
      new AbortController().signal,
    );
    expect(calls).toBe(1);
  });

  it('previous reads the instance before the current one', async () => {
    const store = newStore();
    writer(store, 'app', 0)('from the first run\n');
    await expect(read(store, { previous: true })).rejects.toThrow(
      /previous terminated container "app".*not found/,
    );
    await store.markEnded(POD, 'app', 0);
    writer(store, 'app', 1)('from the second run\n');
    expect(await read(store)).toBe('from the second run\n');
    expect(await read(store, { previous: true })).toBe('from the first run\n');
    expect(await store.instanceNumbers(POD, 'app')).toEqual([0, 1]);
  });

  it('says what is wrong for a container without logs', async () => {
    const store = newStore();
    await expect(read(store, { container: 'nope' })).rejects.toThrow(
      /has no logs on this node: it has not started yet/,
    );
  });
});

describe('LogStore rotation', () => {
  it('copies a full log to .1 (shifting older copies, keeping maxFiles), truncates it, keeps the times', async () => {
    const store = newStore({ maxBytes: 20, maxFiles: 2 });
    const write = writer(store);
    const base = path.join(dir, 'pods', POD, 'app', '0.log');
    for (let n = 1; n <= 4; n++) {
      write(`batch ${n} aaaaaaaaaaa\n`); // 20 bytes: every batch fills the log
      await tick(store, 1000);
    }
    write('tail\n');
    await tick(store, 1000);
    expect(readFileSync(base, 'utf8')).toBe('tail\n');
    expect(readFileSync(`${base}.1`, 'utf8')).toBe('batch 4 aaaaaaaaaaa\n');
    expect(readFileSync(`${base}.2`, 'utf8')).toBe('batch 3 aaaaaaaaaaa\n');
    expect(existsSync(`${base}.3`)).toBe(false);
    expect(parseIndex(readFileSync(`${base}.1.idx`, 'utf8'))).toEqual([{ end: 20, time: T0 + 4000 }]);
    expect(await read(store, { timestamps: true })).toBe(
      `${ts(T0 + 3000)} batch 3 aaaaaaaaaaa\n${ts(T0 + 4000)} batch 4 aaaaaaaaaaa\n${ts(T0 + 5000)} tail\n`,
    );
    expect(await read(store, { tailLines: 2 })).toBe('batch 4 aaaaaaaaaaa\ntail\n');
    expect(await read(store, { sinceTime: T0 + 4000 })).toBe('batch 4 aaaaaaaaaaa\ntail\n');
  });

  it('keeps a line whole when a rotation cuts it in two', async () => {
    const store = newStore({ maxBytes: 10, maxFiles: 3 });
    const write = writer(store);
    write('0123456789ab');
    await tick(store, 1000); // rotated mid-line
    write('cd\nnext\n');
    await tick(store, 1000);
    expect(await read(store, { timestamps: true })).toBe(
      `${ts(T0 + 1000)} 0123456789abcd\n${ts(T0 + 2000)} next\n`,
    );
  });

  it('the process keeps writing into the truncated file (O_APPEND)', async () => {
    const store = newStore({ maxBytes: 10, maxFiles: 1 });
    const write = writer(store);
    write('0123456789\n');
    await tick(store);
    write('after\n');
    const base = path.join(dir, 'pods', POD, 'app', '0.log');
    expect(readFileSync(base, 'utf8')).toBe('after\n');
    expect(statSync(base).size).toBe(6); // no hole where the old bytes were
  });
});

describe('LogStore follow', () => {
  it('streams new lines as the poller sees them, and ends once the instance ended and all was sent', async () => {
    const store = newStore();
    const write = writer(store);
    write('before\n');
    await tick(store);
    const received: string[] = [];
    let done = false;
    const streaming = store
      .stream(
        { podUid: POD, container: 'app', follow: true },
        (chunk) => {
          received.push(chunk.toString());
          return true;
        },
        new AbortController().signal,
      )
      .then(() => (done = true));
    await until(() => received.join('') === 'before\n');
    write('during\n');
    await tick(store);
    await until(() => received.join('') === 'before\nduring\n');
    write('last words');
    await store.markEnded(POD, 'app', 0);
    await streaming;
    expect(done).toBe(true);
    expect(received.join('')).toBe('before\nduring\nlast words');
  });

  it('holds a partial line back until its end comes', async () => {
    const store = newStore();
    const write = writer(store);
    const received: string[] = [];
    const streaming = store.stream(
      { podUid: POD, container: 'app', follow: true },
      (chunk) => received.push(chunk.toString()) > 0,
      new AbortController().signal,
    );
    write('hal');
    await tick(store);
    await settle();
    expect(received).toEqual([]);
    write('f\n');
    await tick(store);
    await until(() => received.join('') === 'half\n');
    await store.markEnded(POD, 'app', 0);
    await streaming;
  });

  it('follows through rotations without losing or repeating a line', async () => {
    const store = newStore({ maxBytes: 30, maxFiles: 2 });
    const write = writer(store);
    const received: string[] = [];
    const streaming = store.stream(
      { podUid: POD, container: 'app', follow: true },
      (chunk) => received.push(chunk.toString()) > 0,
      new AbortController().signal,
    );
    const expected: string[] = [];
    for (let n = 0; n < 20; n++) {
      const line = `line number ${String(n).padStart(2, '0')}\n`; // 15 bytes
      expected.push(line);
      write(line);
      await tick(store);
      await settle();
    }
    await store.markEnded(POD, 'app', 0);
    await streaming;
    expect(received.join('')).toBe(expected.join(''));
  });

  it('catches up through rotations that happened while it was not reading', async () => {
    const store = newStore({ maxBytes: 30, maxFiles: 3 });
    const write = writer(store);
    const received: string[] = [];
    let reading = false;
    const streaming = store.stream(
      { podUid: POD, container: 'app', follow: true, timestamps: true },
      (chunk) => {
        reading = true;
        return received.push(chunk.toString()) > 0;
      },
      new AbortController().signal,
    );
    const expected: string[] = [];
    // Two rotations between the reader's turns: no settle() between the polls.
    for (let n = 0; n < 4; n++) {
      const line = `line number ${String(n).padStart(2, '0')}\n`;
      write(line);
      clock.advance(250);
      expected.push(`${ts(clock.now())} ${line}`);
      await store.pollOnce();
    }
    expect(existsSync(path.join(dir, 'pods', POD, 'app', '0.log.2'))).toBe(true);
    await store.markEnded(POD, 'app', 0);
    await streaming;
    expect(reading).toBe(true);
    expect(received.join('')).toBe(expected.join(''));
  });

  it('ends when the signal aborts', async () => {
    const store = newStore();
    writer(store)('x\n');
    const abort = new AbortController();
    const streaming = store.stream({ podUid: POD, container: 'app', follow: true }, () => true, abort.signal);
    await settle();
    abort.abort();
    await streaming;
  });

  it('returns at once for an instance that is not live (previous, or ended)', async () => {
    const store = newStore();
    writer(store)('done\n');
    await store.markEnded(POD, 'app', 0);
    expect(await read(store, { follow: true })).toBe('done\n');
  });

  it('ends followers when the pod is removed, and deletes its directory', async () => {
    const store = newStore();
    writer(store)('x\n');
    const streaming = store.stream(
      { podUid: POD, container: 'app', follow: true },
      () => true,
      new AbortController().signal,
    );
    await settle();
    await store.removePod(POD);
    await streaming;
    expect(existsSync(path.join(dir, 'pods', POD))).toBe(false);
  });
});

describe('LogStore across an agent restart', () => {
  it('times bytes written while the agent was down by the file mtime (at the latest), then by polls', async () => {
    clock = new FakeClock(Date.now() - 3600_000); // "seen" an hour before the real writes below
    const first = newStore();
    const write = writer(first);
    write('seen\n');
    await first.pollOnce();
    const seenAt = clock.now();
    first.close(); // the agent stops; the process writes on
    write('unseen\n');
    const mtime = Math.floor(statSync(first.logPath(POD, 'app', 0)).mtimeMs);

    clock.advance(2 * 3600_000); // the agent comes back an hour after the write
    const second = newStore();
    await second.track(POD, 'app', 0);
    write('after\n');
    await tick(second);
    expect(await read(second, { timestamps: true })).toBe(
      `${ts(seenAt)} seen\n${ts(mtime)} unseen\n${ts(clock.now())} after\n`,
    );
  });

  it('indexes an untracked log when it is read (an instance that ended while the agent was down)', async () => {
    const first = newStore();
    const write = writer(first);
    write('one\n');
    first.close();
    write('two\n');
    const second = newStore();
    expect(await read(second, { timestamps: true })).toBe(`${ts(T0)} one\n${ts(T0)} two\n`);
  });
});

describe('LogStore housekeeping', () => {
  it('removeInstance deletes a log with its copies and indexes', async () => {
    const store = newStore({ maxBytes: 5, maxFiles: 2 });
    const write = writer(store, 'app', 0);
    write('123456\n');
    await tick(store);
    write('x\n');
    await tick(store);
    writer(store, 'app', 1)('keep\n');
    await store.removeInstance(POD, 'app', 0);
    expect(await store.instanceNumbers(POD, 'app')).toEqual([1]);
    expect(existsSync(path.join(dir, 'pods', POD, 'app', '0.log.1'))).toBe(false);
    expect(existsSync(path.join(dir, 'pods', POD, 'app', '0.log.idx'))).toBe(false);
    expect(existsSync(path.join(dir, 'pods', POD, 'app', '1.log'))).toBe(true);
  });

  it('polls on the clock only while some instance is live', async () => {
    const store = newStore();
    expect(clock.pendingTimers()).toBe(0);
    writer(store)('x\n');
    expect(clock.pendingTimers()).toBe(1);
    await store.markEnded(POD, 'app', 0);
    clock.advance(250); // the last poll finds nothing live and does not reschedule
    await settle();
    expect(clock.pendingTimers()).toBe(0);
  });
});

/** Lets pending promise callbacks and file I/O run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('timed out');
}
