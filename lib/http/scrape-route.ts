import type { ZodType } from 'zod';
import { config } from '@/lib/config';
import { metricsTokenMatches } from '@/lib/console/metrics';
import { createLogger } from '@/lib/log';
import type { ScrapeContract } from './contract';
import { refuse, statusOf, type Result } from './refusal';

const log = createLogger('metrics');

export type ScrapeRouteHandler = ((request: Request) => Promise<Response>) & { contract: ScrapeContract };

/**
 * Prometheus's route: `Authorization: Bearer $METRICS_TOKEN`, answered in the text format.
 * With METRICS_TOKEN unset the endpoint answers 404: queue depth and quarantine counts are not
 * for the open internet, and "allow localhost" cannot be told apart from a proxied request here.
 */
export function scrapeRoute<O extends ZodType>(contract: ScrapeContract<O>, handler: () => Promise<{ contentType: string; text: string }>): ScrapeRouteHandler {
  const text = (status: number, body: string, headers: Record<string, string> = {}) =>
    new Response(`${body}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } });
  const route = async (request: Request): Promise<Response> => {
    const allowed = authorizeScrape(request.headers.get('authorization'));
    if (!allowed.ok) return text(statusOf(allowed.refusal), allowed.refusal.message, allowed.refusal.headers);
    try {
      const body = await handler();
      return new Response(body.text, { headers: { 'content-type': body.contentType, 'cache-control': 'no-store' } });
    } catch (error) {
      log.error({ err: error instanceof Error ? error.message : String(error), path: contract.path }, 'metrics scrape failed');
      return text(500, 'metrics could not be collected; see the console log');
    }
  };
  return Object.assign(route, { contract });
}

function authorizeScrape(authorization: string | null): Result<true> {
  const expected = config().METRICS_TOKEN;
  if (!expected) return refuse('not_found', 'metrics disabled: set METRICS_TOKEN');
  const presented = authorization?.replace(/^Bearer\s+/i, '') ?? null;
  if (!metricsTokenMatches(presented, expected)) return refuse('unauthenticated', 'unauthorized', { headers: { 'www-authenticate': 'Bearer' } });
  return { ok: true, data: true };
}
