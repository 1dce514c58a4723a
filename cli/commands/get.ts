/**
 * `labctl get`: tables like kubectl's (per kind, `-o wide`), or yaml/json/name; label and field
 * selectors, -n/-A; `-w` keeps printing a row for every change until interrupted.
 */
import type { Command } from 'commander';
import { isApiError, isExpired, isNotFound } from '../../client/api/errors.js';
import type { KindInfo } from '../../client/api/kinds.js';
import type { Event, KindName, KubeObject } from '../../client/api/types.js';
import { verb } from '../command.js';
import { AlreadyReported, CliError, formatError } from '../errors.js';
import { listAll, namespaceFor, noResourcesMessage, type Selectors } from '../fetch.js';
import type { Io } from '../io.js';
import { byLastSeen } from '../../client/print/columns/event.js';
import {
  formatStreamed,
  formatStructured,
  outputFormat,
  tableHeader,
  tableRow,
  type OutputFormat,
  type TableOptions,
} from '../print/output.js';
import { formatTable, StreamingTable } from '../print/table.js';
import { parseResourceArgs, type ResourceSelection } from '../resources.js';
import type { Session } from '../session.js';
import { fetchServerVersion } from '../../client/grpc/cluster.js';

export interface GetOptions {
  output?: OutputFormat;
  selector?: string;
  fieldSelector?: string;
  allNamespaces?: boolean;
  watch?: boolean;
  watchOnly?: boolean;
  outputWatchEvents?: boolean;
  showLabels?: boolean;
  /** yaml/json: keep metadata.managedFields (hidden by default, as in kubectl). */
  showManagedFields?: boolean;
  headers: boolean;
}

interface Found {
  info: KindInfo;
  objects: KubeObject[];
  resourceVersion: string;
}

async function fetchSelection(
  session: Session,
  sel: ResourceSelection,
  namespace: string,
  selectors: Selectors,
  failures: unknown[],
): Promise<Found> {
  const client = session.client();
  if (!sel.names.length) {
    const { items, resourceVersion } = await listAll(client, sel.info, namespace, selectors);
    if (sel.info.kind === 'Event') (items as Event[]).sort(byLastSeen);
    return { info: sel.info, objects: items, resourceVersion };
  }
  const objects: KubeObject[] = [];
  for (const name of sel.names) {
    try {
      objects.push(
        await client.get(sel.info.kind as KindName, name, { namespace: namespaceFor(sel.info, namespace) }),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
      failures.push(err);
    }
  }
  return { info: sel.info, objects, resourceVersion: '' };
}

function tableOptions(
  opts: GetOptions,
  kindPrefix: boolean,
  now: number,
  serverVersion?: string,
): TableOptions {
  return {
    wide: opts.output === 'wide',
    namespaceColumn: opts.allNamespaces === true,
    showLabels: opts.showLabels === true,
    kindPrefix,
    now,
    serverVersion,
  };
}

/** The control plane's version, when a table of Nodes is to say which agents are older. */
async function serverVersionFor(session: Session, kinds: string[]): Promise<string | undefined> {
  if (!kinds.includes('Node')) return undefined;
  try {
    return (await fetchServerVersion(session.connectionOptions())).version;
  } catch {
    return undefined; // the table is still right without the marks
  }
}

function printTables(io: Io, found: Found[], opts: GetOptions, serverVersion?: string): void {
  const nonEmpty = found.filter((f) => f.objects.length);
  const kindPrefix = found.length > 1;
  const blocks = nonEmpty.map((f) => {
    const t = tableOptions(opts, kindPrefix, io.clock.now(), serverVersion);
    const rows = f.objects.map((o) => tableRow(f.info, o, t));
    return formatTable(opts.headers ? [tableHeader(f.info, t), ...rows] : rows);
  });
  if (blocks.length) io.out(`${blocks.join('\n\n')}\n`);
}

async function get(session: Session, opts: GetOptions, args: string[]): Promise<void> {
  const io = session.io;
  const selections = parseResourceArgs(args);
  const namespace = opts.allNamespaces ? '' : session.namespace;
  const selectors: Selectors = { labelSelector: opts.selector, fieldSelector: opts.fieldSelector };
  if (opts.watch || opts.watchOnly) return watch(session, opts, selections, namespace, selectors);

  const failures: unknown[] = [];
  const found: Found[] = [];
  for (const sel of selections)
    found.push(await fetchSelection(session, sel, namespace, selectors, failures));
  const total = found.reduce((n, f) => n + f.objects.length, 0);
  const format = opts.output ?? '';
  if (format === 'yaml' || format === 'json' || format === 'name') {
    const items = found.flatMap((f) => f.objects.map((object) => ({ info: f.info, object })));
    const single = selections.length === 1 && selections[0].names.length === 1;
    if (items.length || format !== 'name')
      io.out(formatStructured(format, items, single && items.length === 1, opts.showManagedFields));
  } else {
    printTables(
      io,
      found,
      opts,
      await serverVersionFor(
        session,
        found.map((f) => f.info.kind),
      ),
    );
  }
  for (const err of failures) io.err(`${formatError(err)}\n`);
  if (failures.length) throw new AlreadyReported();
  if (!total && format !== 'yaml' && format !== 'json') {
    io.err(
      noResourcesMessage(
        selections.length === 1 ? selections[0].info : undefined,
        namespace,
        Boolean(opts.allNamespaces),
      ),
    );
  }
}

/** Prints the list, then a row per change; relists when the server's history has moved on. */
async function watch(
  session: Session,
  opts: GetOptions,
  selections: ResourceSelection[],
  namespace: string,
  selectors: Selectors,
): Promise<void> {
  if (selections.length !== 1) throw new CliError('you may only watch one resource type at a time');
  const [sel] = selections;
  if (sel.names.length > 1)
    throw new CliError('you may only watch one named object at a time; use a label selector for several');
  const io = session.io;
  const client = session.client();
  const fieldSelector = [selectors.fieldSelector, ...sel.names.map((n) => `metadata.name=${n}`)]
    .filter(Boolean)
    .join(',');
  const scoped = { labelSelector: selectors.labelSelector, fieldSelector };
  const format = opts.output ?? '';
  const table = new StreamingTable();
  let headerPrinted = false;
  const print = (objects: KubeObject[], eventType?: string) => {
    if (format === 'yaml' || format === 'json') {
      for (const o of objects) io.out(formatStreamed(format, sel.info, o, opts.showManagedFields));
      return;
    }
    if (format === 'name') {
      io.out(
        formatStructured(
          'name',
          objects.map((object) => ({ info: sel.info, object })),
          false,
        ),
      );
      return;
    }
    const t = tableOptions(opts, false, io.clock.now());
    const withEvent = (cells: string[]) =>
      opts.outputWatchEvents ? [eventType ?? 'ADDED', ...cells] : cells;
    const rows = objects.map((o) => withEvent(tableRow(sel.info, o, t)));
    if (!headerPrinted && opts.headers) {
      rows.unshift(
        opts.outputWatchEvents ? ['EVENT', ...tableHeader(sel.info, t)] : tableHeader(sel.info, t),
      );
    }
    headerPrinted = true;
    if (rows.length) io.out(`${table.format(rows)}\n`);
  };

  let { items, resourceVersion } = await listAll(client, sel.info, namespace, scoped);
  if (!opts.watchOnly) {
    if (items.length) print(items);
    else io.err(noResourcesMessage(sel.info, namespace, Boolean(opts.allNamespaces)));
  }
  for (;;) {
    const w = await client.watch(sel.info.kind as KindName, {
      namespace: namespaceFor(sel.info, namespace),
      ...scoped,
      resourceVersion,
      allowWatchBookmarks: true,
    });
    try {
      for await (const ev of w) {
        resourceVersion = ev.object.metadata?.resourceVersion || resourceVersion;
        if (ev.type === 'BOOKMARK') continue;
        print([ev.object as KubeObject], ev.type);
      }
    } catch (err) {
      if (!isExpired(err) && !isApiError(err, 'Unavailable')) throw err;
      if (isExpired(err)) {
        // The server no longer has the history since our resourceVersion: list again and
        // print the current state, so no change goes unseen.
        ({ items, resourceVersion } = await listAll(client, sel.info, namespace, scoped));
        print(items);
      }
    }
  }
}

export function getCommand(program: Command, io: Io): void {
  program
    .command('get')
    .description('display one or many resources as a table, yaml, json or names')
    .argument('[resources...]', 'TYPE[,TYPE...] [NAME...] or TYPE/NAME ...')
    .option('-o, --output <format>', 'output format: wide, yaml, json or name', outputFormat)
    .option('-l, --selector <selector>', 'label selector, e.g. app=web,tier!=db')
    .option('--field-selector <selector>', 'field selector, e.g. spec.nodeName=lab-1,status.phase=Running')
    .option('-A, --all-namespaces', 'list across all namespaces')
    .option('-w, --watch', 'after listing, keep printing the objects that change')
    .option('--watch-only', 'print only changes, not the current list')
    .option('--output-watch-events', 'with --watch, add an EVENT column (ADDED, MODIFIED, DELETED)')
    .option('--show-labels', 'add a LABELS column')
    .option(
      '--show-managed-fields',
      'with -o yaml or json, keep metadata.managedFields (who owns which field)',
    )
    .option('--no-headers', 'leave out the header row')
    .addHelpText(
      'after',
      '\nExamples:\n  labctl get nodes -o wide\n  labctl get pods -A -l app=web\n  labctl get pods --field-selector spec.nodeName=lab-1\n  labctl get ds exporter -o yaml\n  labctl get pods -w',
    )
    .action(verb<[string[]], GetOptions>(io, (s, o, args) => get(s, o, args)));
}
