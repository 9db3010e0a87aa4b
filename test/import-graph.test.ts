import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The floors (ARCHITECTURE.md): app/, worker/ and scripts/ on top, lib/ below them, db/ at the
// bottom. An arrow goes down only: db/ imports nothing from lib/, and inside lib/ no two modules
// import each other, directly or round a longer loop. A type-only import counts: it is the same
// dependency, erased at run time but not from the design. Tests are left out: nothing imports a
// test, so it cannot close a loop, and a test may check a floor against the one above it
// (db/queries/ledger/transitions.test.ts runs every statement against lib/ledger's table).
// The compiler's own module resolution (tsconfig's `@/` paths) finds each import's file.
const root = path.resolve(import.meta.dirname, '..');
const floors = ['app', 'db', 'lib', 'scripts', 'worker'];
const sourceFile = /\.(?:ts|tsx|mts)$/;
const testFile = /\.test\.tsx?$/;

export type ImportGraph = Map<string, Set<string>>;

/** Every non-test source file of the floors under `dir`, as repository paths. */
export function floorSources(dir: string): string[] {
  return floors
    .flatMap((floor) => {
      try {
        return readdirSync(path.join(dir, floor), { recursive: true, encoding: 'utf8' }).map((file) => `${floor}/${file.split(path.sep).join('/')}`);
      } catch {
        return [];
      }
    })
    .filter((file) => sourceFile.test(file) && !testFile.test(file) && !file.includes('node_modules/') && !file.startsWith('db/migrations/'))
    .sort();
}

function specifiersOf(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [first] = node.arguments;
      if (first && ts.isStringLiteral(first)) found.push(first.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Who imports whom among `files` (type-only, re-exports and `import()` included); packages are left out. */
export function importGraph(dir: string, files: string[], options: ts.CompilerOptions): ImportGraph {
  const known = new Set(files);
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const absolute = path.join(dir, file);
    const source = ts.createSourceFile(absolute, readFileSync(absolute, 'utf8'), ts.ScriptTarget.Latest, false);
    const targets = new Set<string>();
    for (const specifier of specifiersOf(source)) {
      const resolved = ts.resolveModuleName(specifier, absolute, options, ts.sys).resolvedModule;
      if (!resolved || resolved.isExternalLibraryImport) continue;
      const target = path.relative(dir, resolved.resolvedFileName).split(path.sep).join('/');
      if (known.has(target) && target !== file) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The loops among the files under `prefix`: each strongly connected set of two or more, sorted (Tarjan). */
export function circlesWithin(graph: ImportGraph, prefix: string): string[][] {
  const inside = (file: string) => file.startsWith(prefix) && graph.has(file);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  const connect = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!inside(target)) continue;
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file) ?? 0, index.get(target) ?? 0));
    }
    if (low.get(file) !== index.get(file)) return;
    const members: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      members.push(member);
      if (member === file) break;
    }
    if (members.length > 1) circles.push(members.sort());
  };
  for (const file of [...graph.keys()].sort()) if (inside(file) && !index.has(file)) connect(file);
  return circles.sort((a, b) => (a.join() < b.join() ? -1 : 1));
}

/** One loop through a circle's files, as `a → b → a`, for the message (breadth-first from its first file back to it). */
export function loopOf(graph: ImportGraph, circle: string[]): string {
  const members = new Set(circle);
  const [start = ''] = circle;
  const previous = new Map<string, string>();
  const queue = [start];
  for (let at = queue.shift(); at !== undefined; at = queue.shift()) {
    for (const target of graph.get(at) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const steps: string[] = [];
        for (let step: string | undefined = at; step !== undefined && step !== start; step = previous.get(step)) steps.unshift(step);
        return [start, ...steps, start].join(' → ');
      }
      if (!previous.has(target)) {
        previous.set(target, at);
        queue.push(target);
      }
    }
  }
  return circle.join(' · ');
}

/** Every arrow from db/ up to lib/. */
export function dbImportsOfLib(graph: ImportGraph): string[] {
  return [...graph].flatMap(([file, targets]) => (file.startsWith('db/') ? [...targets].filter((t) => t.startsWith('lib/')).map((t) => `${file} → ${t}`) : []));
}

function projectOptions(): ts.CompilerOptions {
  const read = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  return ts.convertCompilerOptionsFromJson(read.config.compilerOptions, root).options;
}

function writeTree(dir: string, files: Record<string, string>): void {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
}

describe('the import graph', () => {
  it('catches a planted circle inside lib/ and a planted arrow from db/ to lib/, and passes a tree without them (the check itself)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'import-graph-'));
    try {
      writeTree(dir, {
        // A value loop of three, through `@/` and a sibling import.
        'lib/jobs/a.ts': "import { b } from '@/lib/planning/b';\nexport const a = () => b;\n",
        'lib/planning/b.ts': "import { c } from './c';\nexport const b = c;\n",
        'lib/planning/c.ts': "import { a } from '@/lib/jobs/a';\nexport const c = a;\n",
        // A loop made of a type-only import and a re-export.
        'lib/api/contract.ts': "import type { Model } from '@/lib/console/model';\nexport type Answer = Model;\n",
        'lib/console/model.ts': "export type { Answer as Model } from '@/lib/api/contract';\n",
        // Arrows that go down or stay out of lib/ are fine, a test importing anything too.
        'lib/windows/leaf.ts': "import { row } from '@/db/queries/rows';\nexport const leaf = row;\n",
        'lib/windows/leaf.test.ts': "import { a } from '@/lib/jobs/a';\nimport { leaf } from './leaf';\nexport const t = [a, leaf];\n",
        'worker/main.ts': "import { leaf } from '@/lib/windows/leaf';\nimport { main } from '@/scripts/demo';\nexport { leaf, main };\n",
        'scripts/demo.ts': "import { leaf } from '@/lib/windows/leaf';\nimport { row } from '@/db/queries/rows';\nexport const main = [leaf, row];\n",
        'db/queries/rows.ts': 'export const row = 1;\n',
        // Up from db/: statically, and lazily.
        'db/client.ts': "import { config } from '@/lib/config';\nexport const url = () => config;\n",
        'db/seed.ts': "export const seed = () => import('@/lib/windows/leaf');\n",
        'lib/config.ts': 'export const config = {};\n',
      });
      const options: ts.CompilerOptions = {
        baseUrl: dir,
        paths: { '@/*': ['./*'] },
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        module: ts.ModuleKind.ESNext,
      };
      const files = floorSources(dir);
      expect(files).not.toContain('lib/windows/leaf.test.ts');
      const graph = importGraph(dir, files, options);
      const circles = circlesWithin(graph, 'lib/');
      expect(circles).toEqual([
        ['lib/api/contract.ts', 'lib/console/model.ts'],
        ['lib/jobs/a.ts', 'lib/planning/b.ts', 'lib/planning/c.ts'],
      ]);
      expect(circles.map((circle) => loopOf(graph, circle))).toEqual([
        'lib/api/contract.ts → lib/console/model.ts → lib/api/contract.ts',
        'lib/jobs/a.ts → lib/planning/b.ts → lib/planning/c.ts → lib/jobs/a.ts',
      ]);
      expect(dbImportsOfLib(graph)).toEqual(['db/client.ts → lib/config.ts', 'db/seed.ts → lib/windows/leaf.ts']);

      // The control: the same tree with the loops cut and db/ on its own floor.
      writeTree(dir, {
        'lib/planning/c.ts': 'export const c = 3;\n',
        'lib/console/model.ts': 'export type Model = { id: string };\n',
        'db/client.ts': 'export const url = (databaseUrl: string) => databaseUrl;\n',
        'db/seed.ts': 'export const seed = () => 1;\n',
      });
      const cut = importGraph(dir, floorSources(dir), options);
      expect(circlesWithin(cut, 'lib/')).toEqual([]);
      expect(dbImportsOfLib(cut)).toEqual([]);
      expect(cut.get('worker/main.ts')).toEqual(new Set(['lib/windows/leaf.ts', 'scripts/demo.ts']));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const graph = importGraph(root, floorSources(root), projectOptions());

  it('has no circle inside lib/', () => {
    expect(graph.size).toBeGreaterThan(300);
    const circles = circlesWithin(graph, 'lib/');
    for (const circle of circles) console.log(`import circle: ${loopOf(graph, circle)}`);
    expect(circles.map((circle) => circle.join(' · '))).toEqual([]);
  });

  it('has db/ import nothing from lib/', () => {
    expect(dbImportsOfLib(graph)).toEqual([]);
  });
});
