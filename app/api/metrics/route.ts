import { after } from 'next/server';
import { getDb } from '@/db/client';
import { config } from '@/lib/config';
import { metricsTokenMatches, renderConsoleMetrics } from '@/lib/console/metrics';
import { registry } from '@/lib/metrics/registry';

export const dynamic = 'force-dynamic';

/**
 * Prometheus text. Not a console session route: scrapers present `Authorization: Bearer
 * $METRICS_TOKEN`. With METRICS_TOKEN unset the endpoint answers 404: queue depth and
 * quarantine counts are not for the open internet, and "allow localhost" cannot be told
 * apart from a proxied request here.
 */
export async function GET(request: Request): Promise<Response> {
  const expected = config().METRICS_TOKEN;
  if (!expected) return new Response('metrics disabled: set METRICS_TOKEN\n', { status: 404 });
  const presented = request.headers.get('authorization')?.replace(/^Bearer\s+/i, '') ?? null;
  if (!metricsTokenMatches(presented, expected)) return new Response('unauthorized\n', { status: 401, headers: { 'www-authenticate': 'Bearer' } });
  const body = await renderConsoleMetrics(getDb(), { quarantineAfterMs: config().QUARANTINE_AFTER, recountLater: after });
  return new Response(body, { headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' } });
}
