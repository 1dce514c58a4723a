import { describe, expect, it } from 'vitest';
import type { ConfigMap } from '../../../client/api/types.js';
import { formatFieldError } from '../../../client/api/validation.js';
import { configMapStrategy, MAX_CONFIG_BYTES } from './configmap.js';

const cm = (fields: Partial<ConfigMap>): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'app', namespace: 'default' },
  ...fields,
});
const errorsOf = (c: ConfigMap) => configMapStrategy.validate(c).map(formatFieldError);

describe('ConfigMap validation', () => {
  it('takes file-name keys in data and base64 in binaryData', () => {
    expect(
      errorsOf(cm({ data: { 'app.conf': 'x=1', KEY_NAME: 'y' }, binaryData: { 'logo.png': 'iVBORw0K' } })),
    ).toEqual([]);
  });

  it('refuses keys that are not file names, keys in both maps and values that are not base64', () => {
    expect(errorsOf(cm({ data: { 'a b': '1', '..hidden': '2' } }))).toEqual([
      `data: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name')`,
      `data: Invalid value: "..hidden": must not start with '..'`,
    ]);
    expect(errorsOf(cm({ data: { k: 'text' }, binaryData: { k: 'AAAA' } }))).toEqual([
      'binaryData: Invalid value: "k": duplicate of key present in data',
    ]);
    expect(errorsOf(cm({ binaryData: { k: 'not base64!' } }))).toEqual([
      'binaryData[k]: Invalid value: "<binary>": must be base64-encoded',
    ]);
  });

  it('refuses more than 1 MiB of data', () => {
    const half = 'x'.repeat(MAX_CONFIG_BYTES / 2);
    expect(errorsOf(cm({ data: { a: half, b: half } }))).toEqual([]);
    expect(errorsOf(cm({ data: { a: half, b: `${half}x` } }))).toEqual([
      `data: Too long: may not be more than ${MAX_CONFIG_BYTES} bytes`,
    ]);
  });

  it('keeps an immutable ConfigMap as it is', () => {
    const old = cm({ data: { a: '1' }, immutable: true });
    expect(
      configMapStrategy.validateUpdate!(
        cm({ data: { a: '1' }, immutable: true, metadata: { name: 'app', labels: { x: 'y' } } }),
        old,
      ),
    ).toEqual([]);
    expect(
      configMapStrategy.validateUpdate!(cm({ data: { a: '2' }, immutable: true }), old).map(formatFieldError),
    ).toEqual(['data: Forbidden: field is immutable when `immutable` is set']);
    expect(configMapStrategy.validateUpdate!(cm({ data: { a: '1' } }), old).map(formatFieldError)).toEqual([
      'immutable: Forbidden: field is immutable when `immutable` is set',
    ]);
    expect(configMapStrategy.validateUpdate!(cm({ data: { a: '2' } }), cm({ data: { a: '1' } }))).toEqual([]);
  });
});
