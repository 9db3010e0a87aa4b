import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// One import style (STYLE.md): a sibling in the same folder is `./name`; anything else is `@/path`
// from the repository root, so a moved file keeps its imports readable and grep finds every user.
// db/schema/ is the exception: drizzle-kit loads it on its own, without the `@/` alias.
const parentImports = { group: ['../*', '../**'], message: 'Import from another folder as @/path; ./name is for a sibling only.' };

/** `no-restricted-imports` replaces, not merges, its options per file: every block lists its patterns in full. */
const restrictImports = (...patterns) => ['error', { patterns: [parentImports, ...patterns] }];

// Code that runs in the worker or the console: the settings it reads come from lib/config.ts.
const productionCode = ['app/**/*.{ts,tsx}', 'components/**/*.{ts,tsx}', 'lib/**/*.ts', 'db/**/*.ts', 'worker/**/*.ts', 'proxy.ts'];
const testCode = ['**/*.test.ts'];

export default tseslint.config(
  { ignores: ['node_modules/', '.next/', '.data/', 'db/migrations/', 'test-results/', 'playwright-report/', 'next-env.d.ts', 'bench/tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/ban-ts-comment': 'error',
      '@typescript-eslint/consistent-type-definitions': ['error', 'type'],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
      'no-restricted-imports': restrictImports(),
    },
  },
  {
    // Layering (STYLE.md): lib/ never imports app/ or components/; components/ never imports db/.
    files: ['lib/**/*.ts'],
    rules: {
      'no-restricted-imports': restrictImports({
        group: ['@/app/*', '@/components/*'],
        message: 'lib/ is framework-free: it never imports app/ or components/.',
      }),
    },
  },
  {
    files: ['components/**/*.{ts,tsx}'],
    rules: { 'no-restricted-imports': restrictImports({ group: ['@/db/*'], message: 'components/ never reads the database: go through lib/ or a route.' }) },
  },
  {
    files: ['db/schema/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // process.env is read in one place, lib/config.ts, parsed and named; tests and launchers
    // (scripts/, bench/, test/, e2e/) build child environments and may read it.
    files: productionCode,
    ignores: [...testCode, 'lib/config.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read settings through lib/config.ts (config or processEnv).' }],
    },
  },
);
