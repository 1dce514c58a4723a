// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * One-way layering: proto <- client <- (main | agent | cli); renderer sees the bridge only.
 * A layer may import itself and the layers to its left, nothing else. Patterns match the
 * import specifier, so `../main/x.js` from client/ is caught however deep the file sits.
 */
const layer = (files, forbidden, message) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      { patterns: forbidden.map((dir) => ({ group: [`**/${dir}/**`, `${dir}/**`], message })) },
    ],
  },
});

export default tseslint.config(
  { ignores: ['node_modules/**', 'out/**', 'dist/**', 'proto/gen/**', 'coverage/**', '.probe/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  layer(
    ['proto/**'],
    ['client', 'main', 'agent', 'cli', 'renderer'],
    'proto is the bottom layer: it imports nothing of ours.',
  ),
  layer(
    ['client/**'],
    ['main', 'agent', 'cli', 'renderer'],
    'client/ is shared by main, agent and cli: it must not import them.',
  ),
  layer(['main/**'], ['agent', 'cli', 'renderer'], 'main/ may import proto/ and client/ only.'),
  layer(
    ['main/controllers/**', 'main/scheduler/**'],
    ['agent', 'cli', 'renderer', 'apiserver', 'storage', 'grpc'],
    'Controllers see the cluster only through client/ (DESIGN.md §2).',
  ),
  layer(['agent/**'], ['main', 'cli', 'renderer'], 'agent/ may import proto/ and client/ only.'),
  layer(['cli/**'], ['main', 'agent', 'renderer'], 'cli/ may import proto/ and client/ only.'),
  layer(
    ['renderer/**'],
    ['main', 'agent', 'cli', 'proto', 'storage', 'apiserver'],
    'renderer/ talks to main only through the bridge.',
  ),
);
