import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// ARCHITECTURE.md is the map a newcomer reads first: a path it names that no longer exists sends
// them looking for a file that moved. Every backticked repository path must exist (placeholders
// like `<provider>` and paths outside the repository, `../shared/…`, are not checked). A bare file
// name (`claim.ts`, named in a sentence about its folder) must be some tracked file's name.
const root = path.resolve(import.meta.dirname, '..');
const pathLike = /^(?:app|components|lib|db|worker|scripts|e2e|bench|test|testing|config|docs|deploy)\/[\w./()[\]-]*$|^[\w-]+\.(?:ts|mjs|json|md)$/;

export function namedPaths(markdown: string): string[] {
  const names = new Set<string>();
  for (const [, code] of markdown.matchAll(/`([^`\n]+)`/g)) {
    if (code && pathLike.test(code)) names.add(code);
  }
  return [...names];
}

describe('ARCHITECTURE.md', () => {
  const markdown = readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8');

  it('finds the paths it names (the check itself reads the map)', () => {
    expect(namedPaths('`lib/queue/delivery.ts` and `db/queries/ledger/` but not `npm test` or `<x>/y.ts`')).toEqual([
      'lib/queue/delivery.ts',
      'db/queries/ledger/',
    ]);
    expect(namedPaths(markdown).length).toBeGreaterThan(50);
  });

  it('names only paths that exist', () => {
    const tracked = new Set(
      execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
        .split('\n')
        .map((file) => path.basename(file)),
    );
    const missing = namedPaths(markdown).filter((name) => (name.includes('/') ? !existsSync(path.join(root, name)) : !tracked.has(name)));
    expect(missing).toEqual([]);
  });
});
