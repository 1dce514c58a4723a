/**
 * A kubelab store held open by another process: it opens the SQLite store at the given path,
 * says "open" on stdout, and keeps it open until SIGTERM (then closes it and exits) or until it
 * is killed (which leaves the lock behind, as a crash does).
 * Usage: tsx storeholder.ts <state.db path>
 */
import { openSqliteStorage } from '../../main/storage/sqlite.js';

const store = await openSqliteStorage({ path: process.argv[2], compactIntervalMs: 0 });
process.once('SIGTERM', () => void store.close().then(() => process.exit(0)));
process.stdout.write('open\n');
setInterval(() => undefined, 60_000);
