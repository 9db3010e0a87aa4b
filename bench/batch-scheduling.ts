import { cpus, loadavg } from 'node:os';
import { createDb, createPool } from '@/db/client';
import { BATCH_MAX_ITEMS } from '@/lib/api/producer';
import { createApiToken } from '@/lib/auth/api-tokens';
import { closeWakeupPublisher } from '@/lib/queue';
import { provisionDatabase } from '@/testing/database';
import { printTable } from './support';

/**
 * `npm run bench:batch` (tsx bench/batch-scheduling.ts): a nightly reconciliation's 40 000
 * reminders (BENCH_REMINDERS) scheduled through `POST /api/v1/reminders/batch` in batches of
 * 1 000, then as many fresh ones through `POST /api/v1/reminders` one at a time, in the same
 * run on the same throw-away database; reminders/s for each and the ratio.
 *
 * Through the route handlers in this process (a WHATWG Request in, a Response out, as
 * `next start` hands them), not over HTTP: no other bench starts `next start`, and a socket
 * per request would only add the same per-call cost to the single side. Each call is awaited
 * before the next (one producer connection); BENCH_SINGLE_CONCURRENCY lets the single side
 * run several at once. The reminders are due 1–30 days out, as a reconciliation's are: beyond
 * the queue's horizon, so no wake-up is published at scheduling on either side.
 */
process.env.NOTICE_KEY_SECRET ??= 'bench-secret-0123456789abcdef0123456789abcdef';
process.env.LOG_LEVEL ??= 'silent';
const total = Number(process.env.BENCH_REMINDERS ?? 40_000);
const singleConcurrency = Number(process.env.BENCH_SINGLE_CONCURRENCY ?? 1);
const DAY = 86_400_000;

type Route = (request: Request, context: { params?: Promise<Record<string, string>> }) => Promise<Response>;

function reminder(set: string, n: number, now: number) {
  return {
    type: 'payment_recovery',
    identity: { account_id: `acct_${n % 997}`, reconciliation_id: `${set}_rec`, exception_id: `${set}_exc_${n}` },
    recipient: { email: `billing+${n % 997}@example.com`, timeZone: 'Europe/Berlin' },
    dueAt: new Date(now + (1 + (n % 30)) * DAY).toISOString(),
    deadlineAt: new Date(now + (2 + (n % 30)) * DAY).toISOString(),
    payload: { customer_name: 'Ada Lovelace', amount: '49.00', currency: 'EUR', reference: `RC-${n}` },
    customerId: `cus_${n % 997}`,
    source: 'nightly-reconciliation',
  };
}

async function post(route: Route, token: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const request = new Request('http://localhost/api/v1/bench', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const response = await route(request, { params: undefined });
  return { status: response.status, json: await response.json() };
}

async function main(): Promise<void> {
  const database = await provisionDatabase({ prefix: 'bench_batch' });
  process.env.DATABASE_URL = database.url;
  const pool = createPool(database.url, { applicationName: 'bench-batch' });
  try {
    const { token } = await createApiToken(createDb(pool), { name: 'bench', createdBy: null, actor: 'bench' });
    // Imported once DATABASE_URL is set: the handlers read the process's pool on first use.
    const { POST: batchRoute } = await import('@/app/api/v1/reminders/batch/route');
    const { POST: singleRoute } = await import('@/app/api/v1/reminders/route');
    const now = Date.now();
    // Warm both paths (module loading, the queue publisher, the pool) outside the clock.
    await post(batchRoute, token, { items: [reminder('warm', 0, now)] });
    await post(singleRoute, token, reminder('warm', 1, now));

    const load = loadavg().map((figure) => figure.toFixed(2));
    const batchStart = performance.now();
    let calls = 0;
    for (let start = 0; start < total; start += BATCH_MAX_ITEMS) {
      const items = Array.from({ length: Math.min(BATCH_MAX_ITEMS, total - start) }, (_, i) => reminder('batch', start + i, now));
      const answer = await post(batchRoute, token, { items });
      calls += 1;
      const results = (answer.json as { results?: { status: number }[] }).results ?? [];
      if (answer.status !== 200 || results.some((result) => result.status !== 201))
        throw new Error(`batch ${calls} answered ${answer.status}: ${JSON.stringify(answer.json).slice(0, 300)}`);
    }
    const batchSeconds = (performance.now() - batchStart) / 1000;

    const singleStart = performance.now();
    let next = 0;
    const lane = async () => {
      for (let n = next++; n < total; n = next++) {
        const answer = await post(singleRoute, token, reminder('single', n, now));
        if (answer.status !== 201) throw new Error(`single ${n} answered ${answer.status}: ${JSON.stringify(answer.json).slice(0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: singleConcurrency }, lane));
    const singleSeconds = (performance.now() - singleStart) / 1000;

    const { rows } = await pool.query<{ n: number }>(`select count(*)::int as n from reminder_jobs where source = 'nightly-reconciliation'`);
    if (rows[0]?.n !== 2 * total + 2) throw new Error(`expected ${2 * total + 2} jobs, found ${rows[0]?.n}`);
    const batchRate = total / batchSeconds;
    const singleRate = total / singleSeconds;
    printTable(`${total} reminders, through the route handlers in process (${cpus().length} cores, load before ${load.join(' ')})`, [
      { path: `POST /api/v1/reminders/batch (${BATCH_MAX_ITEMS} a call)`, calls, seconds: batchSeconds.toFixed(1), 'reminders/s': Math.round(batchRate) },
      {
        path: `POST /api/v1/reminders (${singleConcurrency} at a time)`,
        calls: total,
        seconds: singleSeconds.toFixed(1),
        'reminders/s': Math.round(singleRate),
      },
    ]);
    console.log(
      `\nbatch / single: ${(batchRate / singleRate).toFixed(1)}×; load after ${loadavg()
        .map((figure) => figure.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await closeWakeupPublisher();
    await pool.end();
    await database.release();
  }
}

await main();
// The handlers' process pool (lib/process-db.ts) has no close; the figures are printed.
process.exit(0);
