import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import type { RouteContract } from '@/lib/http/contract';
import { openApiDocument } from './document';
import { operationExamples } from './examples';

/**
 * The OpenAPI document against the route files and itself: every route under app/api and app/r
 * but the console's and next-auth's is an operation; every operation has an answer example; every
 * example validates (ajv, JSON Schema 2020-12) against the schema beside it; and Redocly's
 * recommended rules pass with no warning.
 */

const root = path.resolve(import.meta.dirname, '..', '..');
const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

type Json = Record<string, unknown>;
type Media = { schema?: Json; examples?: Record<string, { value: unknown }> };
type Operation = { requestBody?: { content: Record<string, Media> }; responses: Record<string, { content?: Record<string, Media> }> };

function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return routeFiles(full);
    return name === 'route.ts' ? [path.relative(root, full)] : [];
  });
}

const document = openApiDocument() as { paths: Record<string, Record<string, Operation>> };

function operations(): { key: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([route, item]) =>
    Object.entries(item).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${route}`, operation })),
  );
}

describe('the OpenAPI document', () => {
  it('has an operation for every route but the console and next-auth, found by walking the route files', async () => {
    const files = [
      ...routeFiles(path.join(root, 'app/api')),
      ...routeFiles(path.join(root, 'app/r')),
      ...routeFiles(path.join(root, 'app/.well-known')),
    ].filter((file) => !file.startsWith('app/api/console/') && !file.startsWith('app/api/auth/'));
    const missing: string[] = [];
    let served = 0;
    for (const file of files) {
      const module: Record<string, unknown> = await import(`@/${file.replace(/\.ts$/, '')}`);
      for (const method of methods) {
        const exported = module[method] as { contract?: RouteContract } | undefined;
        if (exported === undefined) continue;
        served += 1;
        const contract = exported.contract;
        if (!contract || !document.paths[contract.path]?.[method.toLowerCase()]) missing.push(`${method} in ${file}`);
      }
    }
    expect(missing, 'route files with no operation in the document').toEqual([]);
    expect(operations().length).toBe(served);
  });

  it('every operation has an answer example, and no example names an operation that does not exist', () => {
    const keys = operations().map(({ key }) => key);
    expect(
      keys.filter((key) => !operationExamples[key]?.responses),
      'operations without examples (lib/openapi/examples.ts)',
    ).toEqual([]);
    expect(Object.keys(operationExamples).filter((key) => !keys.includes(key))).toEqual([]);
  });

  it('every example validates against its own schema (ajv, JSON Schema 2020-12)', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    let checked = 0;
    const failures: string[] = [];
    for (const { key, operation } of operations()) {
      const media = [
        ...Object.entries(operation.requestBody?.content ?? {}).map(([type, content]) => ({ where: `request ${type}`, content })),
        ...Object.entries(operation.responses).flatMap(([status, answer]) =>
          Object.entries(answer.content ?? {}).map(([type, content]) => ({ where: `${status} ${type}`, content })),
        ),
      ];
      for (const { where, content } of media) {
        for (const [name, example] of Object.entries(content.examples ?? {})) {
          checked += 1;
          const validate = ajv.compile(content.schema ?? {});
          if (!validate(example.value)) failures.push(`${key} ${where} example ${name}: ${ajv.errorsText(validate.errors)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(operations().length);
  });

  it('an example that breaks its schema is caught (the control)', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    const media = document.paths['/api/v1/reminders']?.post?.responses['201']?.content?.['application/json'];
    const validate = ajv.compile(media?.schema ?? {});
    expect(validate({ ...(media?.examples?.answer?.value as Json), dueAt: 'tomorrow' })).toBe(false);
  });

  it('lints clean with Redocly (recommended rules, no warnings)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'openapi-lint-'));
    try {
      const file = path.join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(document));
      const run = await promisify(execFile)(
        path.join(root, 'node_modules/.bin/redocly'),
        ['lint', '--format=stylish', '--max-problems=50', `--config=${path.join(root, 'redocly.yaml')}`, file],
        {
          cwd: dir,
          env: { NODE_ENV: 'test', PATH: process.env.PATH ?? '', HOME: dir, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        },
      ).catch((error: { stdout: string; stderr: string }) => ({ stdout: error.stdout, stderr: `${error.stderr}\nexit non-zero` }));
      const output = `${run.stdout}\n${run.stderr}`;
      expect(output, output).not.toMatch(/^\s*\d+:\d+\s+(warning|error)\b/m);
      expect(output, output).not.toContain('exit non-zero');
      expect(output).toContain('Your API description is valid');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
