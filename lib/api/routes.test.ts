import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ZodType } from 'zod';
import { expectedPermissions } from '@/test/fuzz/console-handlers';
import { routeFileOf } from '@/testing/route-handlers';
import type { RouteContract } from '@/lib/http/contract';
import { consoleRouteContracts, routeContracts } from './routes';

/**
 * The route list against the route files: every export under app/api/, app/r/ and app/.well-known/ is built from a contract
 * in lib/api/routes.ts (so it goes through the one boundary), every contract is served, each
 * has a request and a response schema, and each console route is in the authorization matrix.
 */

const root = path.resolve(import.meta.dirname, '..', '..');
const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** next-auth's own protocol endpoints (sign-in, callback, CSRF, session): its handler, its wire format. */
const exempt = new Set(['app/api/auth/[...nextauth]/route.ts']);

function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return routeFiles(full);
    return name === 'route.ts' ? [path.relative(root, full)] : [];
  });
}

function schemasOf(contract: RouteContract): { request: unknown[]; response: unknown } {
  switch (contract.audience) {
    case 'console':
      return { request: [contract.input], response: contract.output };
    case 'producer':
      return { request: [contract.params, contract.body], response: contract.output };
    case 'provider':
    case 'scrape':
    case 'public':
    case 'recipient':
      return { request: [contract.input], response: contract.output };
    case 'one_click':
      return { request: [contract.params], response: contract.output };
  }
}

describe('the route list', () => {
  it('every exported handler under app/api and app/r is built from a listed contract with its own method and path', async () => {
    const served = new Set<RouteContract>();
    for (const file of [
      ...routeFiles(path.join(root, 'app/api')),
      ...routeFiles(path.join(root, 'app/r')),
      ...routeFiles(path.join(root, 'app/.well-known')),
    ].filter((file) => !exempt.has(file))) {
      const module: Record<string, unknown> = await import(`@/${file.replace(/\.ts$/, '')}`);
      for (const method of methods) {
        const exported = module[method];
        if (exported === undefined) continue;
        const contract = routeContracts.find((candidate) => typeof exported === 'function' && 'contract' in exported && exported.contract === candidate);
        expect(contract, `${method} in ${file} is not built from a contract listed in lib/api/routes.ts (lib/http/*-route.ts)`).toBeDefined();
        if (!contract) continue;
        expect({ method: contract.method, file: routeFileOf(contract.path) }).toEqual({ method, file });
        expect(served.has(contract), `${contract.method} ${contract.path} is served twice`).toBe(false);
        served.add(contract);
      }
    }
    const unserved = routeContracts.filter((contract) => !served.has(contract)).map((contract) => `${contract.method} ${contract.path}`);
    expect(unserved, 'contracts no route file serves').toEqual([]);
  });

  it('every contract has a request and a response schema', () => {
    for (const contract of routeContracts) {
      const { request, response } = schemasOf(contract);
      for (const schema of request) expect(schema, `${contract.method} ${contract.path} request`).toBeInstanceOf(ZodType);
      expect(response, `${contract.method} ${contract.path} response`).toBeInstanceOf(ZodType);
    }
  });

  it('every console route is in the authorization matrix, with the permission DESIGN.md gives it', () => {
    const listed = Object.keys(expectedPermissions).sort();
    expect(listed).toEqual(consoleRouteContracts.map((contract) => `${contract.method} ${contract.path}`).sort());
    for (const contract of consoleRouteContracts)
      expect(contract.permission, `${contract.method} ${contract.path}`).toBe(expectedPermissions[`${contract.method} ${contract.path}`]);
  });
});
