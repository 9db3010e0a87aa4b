import type { RouteContract } from '@/lib/http/contract';

/** A route file's handler as Next calls it, with the contract it was built from (lib/http/*-route.ts). */
export type BuiltHandler = ((request: Request, context?: { params?: Promise<Record<string, string | string[]> | undefined> }) => Promise<Response>) & {
  contract?: RouteContract;
};

/** `/api/v1/reminders/{id}/cancel` → `app/api/v1/reminders/[id]/cancel/route.ts`. */
export function routeFileOf(path: string): string {
  return `app${path.replace(/\{(\w+)\}/g, '[$1]')}/route.ts`;
}

function isHandler(value: unknown): value is BuiltHandler {
  return typeof value === 'function';
}

/** The export of the contract's route file that serves its method. */
export async function loadRouteHandler(contract: Pick<RouteContract, 'method' | 'path'>): Promise<BuiltHandler> {
  const module: Record<string, unknown> = await import(`@/${routeFileOf(contract.path).replace(/\.ts$/, '')}`);
  const handler = module[contract.method];
  if (!isHandler(handler)) throw new Error(`${routeFileOf(contract.path)} exports no ${contract.method}`);
  return handler;
}
