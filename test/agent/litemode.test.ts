import { expect, it } from 'vitest';
import { wantsLiteMode } from '../../agent/litemode.js';

const node = ['/usr/bin/node', 'kubelab-agent'];

it('runs a machine agent in lite mode, whatever its other flags', () => {
  expect(wantsLiteMode(node)).toBe(true);
  expect(wantsLiteMode([...node, '--server', 'https://10.0.0.2:6443', '--hollow-prefix', 'x'])).toBe(true);
  expect(wantsLiteMode([...node, '--no-hollow-pods'])).toBe(true);
});

it('keeps the optimizing compilers for a hollow fleet', () => {
  expect(wantsLiteMode([...node, '--hollow', '5000'])).toBe(false);
  expect(wantsLiteMode([...node, '--hollow=100', '--server', 'https://h:6443'])).toBe(false);
});
