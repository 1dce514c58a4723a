/**
 * `labctl edit TYPE NAME`: opens the object as YAML in $KUBE_EDITOR, $EDITOR or vi; saves the
 * changes as a merge patch pinned to the version that was opened. When the server rejects the
 * change, the editor opens again with the errors as comments at the top, as kubectl does; an
 * unchanged or emptied file cancels.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import mergePatch from 'json-merge-patch';
import { stringify } from 'yaml';
import { ApiError, isApiError } from '../../client/api/errors.js';
import type { KindName } from '../../client/api/types.js';
import { formatFieldError } from '../../client/api/validation.js';
import { verb } from '../command.js';
import { CliError, formatError } from '../errors.js';
import { namespaceFor } from '../fetch.js';
import type { Io } from '../io.js';
import { parseDocuments, toManifest } from '../manifests.js';
import { forDisplay } from '../print/output.js';
import { objectRef, parseResourceArgs, qualifiedKind } from '../resources.js';
import type { Session } from '../session.js';

const HEADER = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`;

/** The problems of a rejected edit, as comment lines. */
export function errorComment(ref: string, err: unknown): string {
  const lines =
    err instanceof ApiError && err.causes.length
      ? [`${ref} was not valid:`, ...err.causes.map((c) => `* ${formatFieldError(c)}`)]
      : [
          `${ref} was not valid:`,
          ...formatError(err)
            .split('\n')
            .map((l) => `* ${l}`),
        ];
  return `${lines.map((l) => `# ${l}`).join('\n')}\n#\n`;
}

function stripComments(text: string): string {
  return text
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n');
}

function runEditor(io: Io, file: string): void {
  const editor = io.env.KUBE_EDITOR || io.env.EDITOR || 'vi';
  // The editor setting may carry arguments ("code --wait"), so a shell reads it.
  const result = spawnSync(`${editor} "${file}"`, { shell: true, stdio: 'inherit', env: io.env });
  if (result.error || result.status !== 0) {
    throw new CliError(
      `the editor "${editor}" failed (${result.error?.message ?? `exit code ${result.status}`}); set $EDITOR to one that works`,
    );
  }
}

async function editOne(session: Session, kind: KindName, name: string, namespace: string): Promise<void> {
  const io = session.io;
  const client = session.client();
  const original = await client.get(kind, name, { namespace });
  const info = parseResourceArgs([kind])[0].info;
  const ref = `${info.plural} "${name}"`;
  const shown = forDisplay(info, original);
  const originalText = stringify(shown);
  const dir = mkdtempSync(join(tmpdir(), 'labctl-edit-'));
  const file = join(dir, `${qualifiedKind(info)}-${name}.yaml`);
  let body = originalText;
  let errors = '';
  try {
    for (;;) {
      writeFileSync(file, `${HEADER}${errors}${body}`);
      runEditor(io, file);
      const edited = stripComments(readFileSync(file, 'utf8'));
      if (!edited.trim()) {
        io.out('Edit cancelled, no changes made.\n');
        return;
      }
      if (edited === body && errors) {
        // Saved again without a change after an error: kubectl gives up and keeps the file.
        const kept = join(tmpdir(), `labctl-edit-${Date.now()}.yaml`);
        writeFileSync(kept, edited);
        throw new CliError(
          `Edit cancelled, no valid changes were saved.\nA copy of your changes has been stored to "${kept}"`,
        );
      }
      body = edited;
      let patch: object | undefined;
      try {
        const parsed = parseDocuments(edited, file);
        if (parsed.length !== 1)
          throw new CliError(`${file} must hold exactly one object (it holds ${parsed.length})`);
        const object = toManifest(parsed[0], file).object;
        patch = mergePatch.generate(shown, forDisplay(info, object)) as object | undefined;
      } catch (err) {
        errors = errorComment(ref, err);
        continue;
      }
      if (!patch) {
        io.out('Edit cancelled, no changes made.\n');
        return;
      }
      try {
        // Pinned to the version opened: someone else's change meanwhile is a conflict, not lost.
        const pinned = {
          ...patch,
          metadata: {
            ...(patch as { metadata?: object }).metadata,
            resourceVersion: original.metadata?.resourceVersion,
          },
        };
        await client.patch(kind, name, pinned, { namespace });
        io.out(`${objectRef(info, original)} edited\n`);
        return;
      } catch (err) {
        if (!isApiError(err, 'Invalid') && !isApiError(err, 'BadRequest')) throw err;
        errors = errorComment(ref, err);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function edit(session: Session, _opts: object, args: string[]): Promise<void> {
  for (const sel of parseResourceArgs(args)) {
    if (!sel.names.length) throw new CliError(`give the name of the ${sel.info.singular} to edit`);
    for (const name of sel.names)
      await editOne(session, sel.info.kind as KindName, name, namespaceFor(sel.info, session.namespace));
  }
}

export function editCommand(program: Command, io: Io): void {
  program
    .command('edit')
    .description(
      'edit an object in $KUBE_EDITOR or $EDITOR and save it; rejected edits reopen with the errors',
    )
    .argument('<resources...>', 'TYPE NAME or TYPE/NAME')
    .addHelpText('after', '\nExamples:\n  labctl edit ds exporter\n  EDITOR=nano labctl edit node/lab-1')
    .action(verb<[string[]], object>(io, (s, o, args) => edit(s, o, args)));
}
