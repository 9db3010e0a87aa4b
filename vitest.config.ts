import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: {
      '@': path.resolve(import.meta.dirname),
      // The console's page loaders start with `import 'server-only'`; Next resolves it to its empty
      // module in server code (the react-server condition), and so do the tests, which run on the server.
      'server-only': path.resolve(import.meta.dirname, 'node_modules/server-only/empty.js'),
    },
  },
  test: {
    // e2e/*.spec.ts belong to Playwright; vitest's default glob would pick them up.
    include: ['**/*.test.ts'],
    // bench/tmp holds scratch copies of older trees (bench/worker-ab.ts baselines).
    exclude: ['node_modules/**', '.next/**', '.data/**', 'e2e/**', 'bench/tmp/**'],
    globalSetup: ['./testing/global-setup.ts'],
    env: {
      NODE_ENV: 'test',
      NOTICE_KEY_SECRET: 'test-secret-0123456789abcdef0123456789abcdef',
      LOG_LEVEL: 'silent',
      // OWASP's N=2^17 costs ~0.4 s a hash on two shared cores; password.test.ts checks that default.
      PASSWORD_HASH_N: '1024',
    },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: integration files share one PostgreSQL server, each with its own database.
    maxWorkers: 2,
  },
});
