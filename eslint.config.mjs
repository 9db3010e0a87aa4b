import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    },
  },
  {
    // Layering (STYLE.md): lib/ never imports app/ or components/; components/ never imports db/.
    files: ['lib/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['@/app/*', '@/components/*', '../app/*', '../components/*'] }] },
  },
  {
    files: ['components/**/*.{ts,tsx}'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['@/db/*', '../db/*', '../../db/*'] }] },
  },
);
