import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Test hooks stay out of production modules (issue 25): a test that needs another limit or another
// environment builds its own instance or sets the environment (config() follows it), instead of
// calling a `resetXForTests` the shipped module exports. Test files and the test infrastructure
// (testing/, test/) are where such helpers belong.
const root = path.resolve(import.meta.dirname, '..');
const productionTree = /^(?:app|db|lib|worker)\/.*\.(?:ts|tsx|mts)$/;
const testFile = /\.test\.tsx?$/;
const hookName = /ForTests?$/;

/** The names a module exports (declarations, `export { a as b }`), by the compiler's reading. */
export function exportedNames(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const names: string[] = [];
  const exported = (node: ts.Node) => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      names.push(...statement.exportClause.elements.map((element) => element.name.text));
    } else if (exported(statement)) {
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
      } else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) && statement.name) {
        names.push(statement.name.text);
      }
    }
  }
  return names;
}

/** `path: name` for every test hook a production module exports. */
export function testHooks(files: { path: string; text: string }[]): string[] {
  return files
    .filter((file) => productionTree.test(file.path) && !testFile.test(file.path))
    .flatMap((file) =>
      exportedNames(file.path, file.text)
        .filter((name) => hookName.test(name))
        .map((name) => `${file.path}: ${name}`),
    );
}

describe('test hooks', () => {
  it('are found however a production module exports them, and let be in tests and test infrastructure (the check itself)', () => {
    expect(
      testHooks([
        { path: 'lib/http/route.ts', text: 'let x = 1;\nexport function resetThrottleForTests(): void { x = 0; }\nexport const keep = x;\n' },
        { path: 'lib/config.ts', text: 'let c;\nexport const resetConfigForTests = () => { c = undefined; };\n' },
        { path: 'worker/queue.ts', text: 'function drop() {}\nexport { drop as dropConnectionForTests };\n' },
        { path: 'db/client.ts', text: 'export class PoolForTest {}\n' },
        { path: 'app/api/x/route.ts', text: 'export async function GET() {}\n' },
        { path: 'lib/http/route.test.ts', text: 'export function resetForTests() {}\n' },
        { path: 'testing/db.ts', text: 'export function createDatabaseForTests() {}\n' },
      ]),
    ).toEqual([
      'lib/http/route.ts: resetThrottleForTests',
      'lib/config.ts: resetConfigForTests',
      'worker/queue.ts: dropConnectionForTests',
      'db/client.ts: PoolForTest',
    ]);
  });

  it('are exported by no module under lib/, db/, worker/ or app/', () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((file) => productionTree.test(file))
      .map((file) => ({ path: file, text: readFileSync(path.join(root, file), 'utf8') }));
    expect(files.length).toBeGreaterThan(300);
    expect(testHooks(files)).toEqual([]);
  });
});
