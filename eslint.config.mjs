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

// Layering (STYLE.md): lib/ never imports app/ or components/; components/ never imports db/.
const layering = {
  'lib/**/*.ts': [{ group: ['@/app/*', '@/components/*'], message: 'lib/ is framework-free: it never imports app/ or components/.' }],
  'components/**/*.{ts,tsx}': [{ group: ['@/db/*'], message: 'components/ never reads the database: go through lib/ or a route.' }],
};

// Contracts are leaves (issue 25): a file under lib/api/ holds a route's request, answer and
// vocabulary, and imports only zod, the contract builder, other contracts and db/schema/states.
const contractLeaves = [
  {
    regex: '^(?!zod$|@/lib/api/|@/lib/http/contract$|@/db/schema/states$|\\./)',
    message: 'lib/api/ contracts are leaves: import only zod, @/lib/http/contract, other contracts and @/db/schema/states.',
  },
];

const testInfrastructure = [
  { group: ['vitest', 'vitest/*'], message: 'vitest is for tests: production code never imports it.' },
  {
    group: ['@/testing/*', '@/test/*'],
    message: 'testing/ and test/ are test infrastructure: production code never imports them (scripts/, bench/, e2e/ may).',
  },
];

/** The import rules for `files`: their own `patterns` everywhere, and no test infrastructure outside tests. */
const restrictedFor = (files, ...patterns) => [
  { files, rules: { 'no-restricted-imports': restrictImports(...patterns) } },
  { files, ignores: testCode, rules: { 'no-restricted-imports': restrictImports(...patterns, ...testInfrastructure) } },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.next/', '.data/', 'db/migrations/', 'test-results/', 'playwright-report/', 'next-env.d.ts', 'bench/tmp/'] },
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
  // Production code never loads test infrastructure: vitest, testing/ (the SMTP sink, the queue
  // contract, provider signers, the harness) or test/. A block per productionCode glob lists
  // its layering and, outside tests, these as well (options replace, they do not merge).
  ...productionCode.flatMap((files) => restrictedFor([files], ...(layering[files] ?? []))),
  // lib/telemetry/ is the tracing API, the SDK start and the scrubbing processor: it imports nothing
  // from the domain (the spans a step records live beside the step, in lib/jobs/ and lib/events/).
  ...restrictedFor(['lib/telemetry/**/*.ts'], ...layering['lib/**/*.ts'], {
    group: ['@/lib/*', '!@/lib/telemetry', '!@/lib/config', '@/db/*', '@/worker/*'],
    message: "lib/telemetry/ imports nothing from the domain: a step's span lives beside the step, which imports tracing.ts.",
  }),
  {
    files: ['lib/api/**/*.ts'],
    ignores: testCode,
    rules: { 'no-restricted-imports': restrictImports(...layering['lib/**/*.ts'], ...testInfrastructure, ...contractLeaves) },
  },
  {
    // drizzle-kit loads db/schema/ on its own, without the @/ alias: relative imports are its only kind.
    files: ['db/schema/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: testInfrastructure }] },
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
