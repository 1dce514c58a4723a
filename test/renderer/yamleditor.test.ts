/**
 * The YAML editor's error marks: a field path from the API is found in the text (through
 * nested maps, lists, flow style, keys with dots, several documents), a missing field is
 * placed at its parent, YAML syntax errors at their line; the CodeMirror state marks those
 * lines with their messages, keeps the marks on their lines while the text is edited, and
 * drops them for the next set.
 */
import { EditorState } from '@codemirror/state';
import { describe, expect, it } from 'vitest';
import type { FieldError } from '../../client/api/validation.js';
import { BridgeRequestError } from '../../renderer/src/bridge/client.js';
import { placeFieldErrors, textFailure, yamlSyntaxErrors } from '../../renderer/src/editor/errorlines.js';
import { parseFieldPath } from '../../renderer/src/editor/fieldpath.js';
import { lineErrors, setLineErrors } from '../../renderer/src/editor/fielderrors.js';
import { changedOnlyInStatus, editableYaml, parseEdited } from '../../renderer/src/editor/objectyaml.js';
import { locateField } from '../../renderer/src/editor/yamlpath.js';

const daemonSet = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: exporter
  labels:
    app.kubernetes.io/name: exporter
spec:
  selector:
    matchLabels: { app: one }
  template:
    metadata:
      labels: { app: other }
    spec:
      containers:
        - name: first
          image: a
        - name: second
          image: b
`;

describe('field paths', () => {
  it('splits names, list indexes and bracketed keys that contain dots', () => {
    expect(parseFieldPath('spec.template.spec.containers[1].image')).toEqual([
      'spec',
      'template',
      'spec',
      'containers',
      1,
      'image',
    ]);
    expect(parseFieldPath('metadata.labels[app.kubernetes.io/name]')).toEqual([
      'metadata',
      'labels',
      'app.kubernetes.io/name',
    ]);
    expect(parseFieldPath('')).toEqual([]);
  });
});

describe('locateField', () => {
  it('finds the line of a field inside lists and flow maps', () => {
    expect(locateField(daemonSet, 'spec.template.spec.containers[1].image')).toMatchObject({
      line: 18,
      exact: true,
    });
    expect(locateField(daemonSet, 'spec.template.spec.containers[0]')).toMatchObject({
      line: 15,
      exact: true,
    });
    expect(locateField(daemonSet, 'spec.template.metadata.labels.app')).toMatchObject({
      line: 12,
      exact: true,
    });
    expect(locateField(daemonSet, 'metadata.labels[app.kubernetes.io/name]')).toMatchObject({
      line: 6,
      exact: true,
    });
  });

  it('places a missing field at its nearest ancestor, not exact', () => {
    expect(locateField(daemonSet, 'spec.updateStrategy.type')).toMatchObject({ line: 7, exact: false });
    expect(locateField(daemonSet, 'spec.template.spec.containers[5].image')).toMatchObject({
      line: 14,
      exact: false,
    });
  });

  it('looks in every document of a manifest and takes the one the path goes deepest in', () => {
    const text = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: lab\n---\n${daemonSet}`;
    expect(locateField(text, 'spec.template.spec.containers[0].image')).toMatchObject({
      line: 21,
      exact: true,
    });
    expect(locateField(text, 'metadata.name')).toMatchObject({ line: 4, exact: true });
  });

  it('gives the offset where the line starts', () => {
    const at = locateField(daemonSet, 'kind')!;
    expect(daemonSet.slice(at.offset).startsWith('kind: DaemonSet')).toBe(true);
  });
});

describe('placing errors', () => {
  it("puts each of the API's field errors at its line, worded without the field", () => {
    const causes: FieldError[] = [
      {
        field: 'spec.template.metadata.labels',
        type: 'FieldValueInvalid',
        value: { app: 'other' },
        message: '`selector` does not match template `labels`',
      },
      { field: 'spec.template.spec.containers[1].image', type: 'FieldValueRequired', message: '' },
      { field: 'spec.minReadySeconds', type: 'FieldValueRequired', message: '' },
      { field: '', type: 'FieldValueForbidden', message: 'not allowed' },
    ];
    const placed = placeFieldErrors(daemonSet, causes);
    expect(placed.lines).toEqual([
      {
        line: 12,
        field: 'spec.template.metadata.labels',
        message: 'Invalid value: {"app":"other"}: `selector` does not match template `labels`',
      },
      { line: 18, field: 'spec.template.spec.containers[1].image', message: 'Required value' },
      { line: 7, field: 'spec.minReadySeconds', message: 'minReadySeconds: Required value' },
    ]);
    expect(placed.unplaced).toEqual([causes[3]]);
  });

  it('sums a failure up: its first line pointing at the marked lines, the reason, the errors', () => {
    const invalid = new BridgeRequestError({
      reason: 'Invalid',
      message: 'DaemonSet "exporter" is invalid:\n- spec.template.spec.containers[1].image: Required value',
      causes: [{ field: 'spec.template.spec.containers[1].image', type: 'FieldValueRequired', message: '' }],
    });
    expect(textFailure(daemonSet, invalid)).toMatchObject({
      headline: 'DaemonSet "exporter" is invalid: see the marked line',
      reason: 'Invalid',
      lines: [{ line: 18 }],
      unplaced: [],
    });
    const conflict = new BridgeRequestError({ reason: 'Conflict', message: 'the object has been modified' });
    expect(textFailure(daemonSet, conflict)).toMatchObject({
      headline: 'the object has been modified',
      reason: 'Conflict',
      lines: [],
    });
    expect(textFailure(daemonSet, new Error('the connection dropped'))).toMatchObject({
      headline: 'the connection dropped',
      reason: undefined,
      causes: [],
    });
  });

  it('finds YAML syntax errors at their lines, and none in good YAML', () => {
    expect(yamlSyntaxErrors(daemonSet)).toEqual([]);
    const errors = yamlSyntaxErrors('metadata:\n  name: x\n  labels: { a: b\nspec: {}\n');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0].line).toBeGreaterThanOrEqual(3);
  });
});

describe('the editor state', () => {
  const marks = (state: EditorState) => {
    const found: Array<{ line: number; kind: string; message?: string }> = [];
    state.field(lineErrors).between(0, state.doc.length, (from, _to, deco) => {
      const widget = deco.spec.widget as { message?: string } | undefined;
      found.push({
        line: state.doc.lineAt(from).number,
        kind: widget ? 'message' : 'line',
        message: widget?.message,
      });
    });
    return found;
  };

  it('marks each line with its errors and keeps the marks on their lines through edits', () => {
    let state = EditorState.create({ doc: daemonSet, extensions: [lineErrors] });
    state = state.update({
      effects: setLineErrors.of([
        { line: 12, message: 'labels do not match' },
        { line: 18, message: 'image required' },
        { line: 99, message: 'past the end' },
      ]),
    }).state;
    expect(marks(state)).toEqual([
      { line: 12, kind: 'line', message: undefined },
      { line: 12, kind: 'message', message: 'labels do not match' },
      { line: 18, kind: 'line', message: undefined },
      { line: 18, kind: 'message', message: 'image required' },
      { line: 19, kind: 'line', message: undefined },
      { line: 19, kind: 'message', message: 'past the end' },
    ]);

    state = state.update({ changes: { from: 0, insert: '# a comment\n' } }).state;
    expect(marks(state).map((m) => m.line)).toEqual([13, 13, 19, 19, 20, 20]);

    state = state.update({ effects: setLineErrors.of([]) }).state;
    expect(marks(state)).toEqual([]);
  });
});

describe('objects as YAML to edit', () => {
  it('leaves status and managedFields out and keeps the resourceVersion, and reads the edit back', () => {
    const text = editableYaml({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: {
        name: 'x',
        resourceVersion: '42',
        managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
      },
      spec: { minReadySeconds: 5 },
      status: { numberReady: 3 },
    });
    expect(text).not.toContain('status');
    expect(text).not.toContain('managedFields');
    expect(text).toContain('resourceVersion: "42"');
    expect(parseEdited(text.replace('minReadySeconds: 5', 'minReadySeconds: 7'))).toEqual({
      object: {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'x', resourceVersion: '42' },
        spec: { minReadySeconds: 7 },
      },
    });
  });

  it('says what is wrong with an edit that is not one object', () => {
    expect(parseEdited('a: [1, 2\nb: 3\n').errors?.length).toBeGreaterThan(0);
    expect(parseEdited('a: 1\n---\nb: 2\n').errors).toEqual([
      { line: 1, message: 'expected one object, found 2: edit a single document' },
    ]);
    expect(parseEdited('- 1\n').errors?.[0].message).toContain('expected an object');
  });

  it('tells a conflict over status alone from a real one', () => {
    const opened = {
      kind: 'DaemonSet',
      metadata: { name: 'x', resourceVersion: '1', generation: 1 },
      spec: { a: 1 },
      status: { n: 1 },
    };
    // The status writer's managedFields entry moves with the status.
    const progressed = {
      ...opened,
      metadata: {
        ...opened.metadata,
        resourceVersion: '2',
        managedFields: [{ manager: 'kube-controller-manager' }],
      },
      status: { n: 2 },
    };
    const edited = { ...progressed, metadata: { ...progressed.metadata, generation: 2 }, spec: { a: 2 } };
    expect(changedOnlyInStatus(opened, progressed)).toBe(true);
    expect(changedOnlyInStatus(opened, edited)).toBe(false);
  });
});
