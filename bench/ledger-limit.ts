import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { provisionDatabase } from '@/testing/database';
import { postmasterOf, selfSeconds, serverSeconds } from './cpu';
import { printTable } from './support';

/**
 * (a) The bare ledger path: claim insert + commit, result update + commit, in plain SQL
 * with named prepared statements, at several concurrencies. This is the ceiling the
 * worker's end-to-end rate is compared against.
 */

const CLAIM = {
  name: 'bench_claim',
  text: `insert into notice_ledger (notice_key, notice_type, identity, state, claim_token, claimed_by, recipient_domain)
         values ($1, 'renewal_notice_t72', '{}'::jsonb, 'claimed', $2, 'bench', 'example.com')
         on conflict (notice_key) do nothing returning claimed_at`,
};
const COMMIT = {
  name: 'bench_commit',
  text: `update notice_ledger set state = 'sent', sent_at = now(), provider_message_id = $3, updated_at = now()
         where notice_key = $1 and claim_token = $2 and state = 'claimed'`,
};

/** cpu: milliseconds per notice of PostgreSQL (NaN on an external server) and of this client process. */
export type LedgerLimitResult = { sessions: number; notices: number; seconds: number; perSecond: number; cpu: { serverMs: number; benchMs: number } };

export async function measureLedgerLimit(url: string, sessions: number, seconds: number, postmaster: number | null = null): Promise<LedgerLimitResult> {
  const clients = await Promise.all(
    Array.from({ length: sessions }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  let done = 0;
  const cpuBefore = { server: serverSeconds(postmaster), bench: selfSeconds() };
  const deadline = Date.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      while (Date.now() < deadline) {
        const key = randomBytes(32).toString('hex');
        const token = randomUUID();
        // Autocommit: each statement is its own durable commit, as in the worker.
        const claimed = await client.query({ ...CLAIM, values: [key, token] });
        if (claimed.rowCount !== 1) throw new Error('claim refused on a fresh key');
        await client.query({ ...COMMIT, values: [key, token, `bench-${key.slice(0, 12)}`] });
        done += 1;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = { serverMs: ((serverSeconds(postmaster) - cpuBefore.server) * 1000) / done, benchMs: ((selfSeconds() - cpuBefore.bench) * 1000) / done };
  await Promise.all(clients.map((c) => c.end()));
  return { sessions, notices: done, seconds: elapsed, perSecond: done / elapsed, cpu };
}

export async function findLedgerLimit(url: string, seconds = 5, postmaster: number | null = null): Promise<LedgerLimitResult> {
  const results: LedgerLimitResult[] = [];
  for (const sessions of [1, 4, 8, 16]) results.push(await measureLedgerLimit(url, sessions, seconds, postmaster));
  printTable(
    '(a) bare ledger path: 2 durable commits per notice',
    results.map((r) => ({
      sessions: r.sessions,
      notices: r.notices,
      'notices/s': Math.round(r.perSecond),
      'CPU ms/notice: postgres': r.cpu.serverMs.toFixed(2),
      client: r.cpu.benchMs.toFixed(2),
    })),
  );
  return results.reduce((best, r) => (r.perSecond > best.perSecond ? r : best));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const database = await provisionDatabase({ prefix: 'bench_ledger', serverUrl: process.env.DATABASE_URL });
  try {
    const best = await findLedgerLimit(database.url, Number(process.env.BENCH_SECONDS ?? 5), postmasterOf(database.dataDir));
    console.log(`\nbest: ${Math.round(best.perSecond)} notices/s at ${String(best.sessions)} sessions`);
  } finally {
    await database.release();
  }
}
