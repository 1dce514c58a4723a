import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{client,main,agent,cli,proto,test}/**/*.test.ts'],
    exclude: ['node_modules/**', 'test/bench/**', 'out/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
