import pg from 'pg';
import type PgBoss from 'pg-boss';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';

/**
 * The statements the pg-boss adapter writes itself, against pg-boss's own tables. They run on
 * pg-boss's pool (`boss.getDb()`, sized for the queue), not the application's, so they take
 * pg-boss's executor rather than a drizzle `DbOrTx`; `drizzleExecutor` goes the other way,
 * letting pg-boss's own `send` run inside an application transaction.
 */

export type PgBossExecutor = Pick<PgBoss.Db, 'executeSql'>;

/** A wake-up as our fetch returns it: what the adapter needs of pg-boss's job row. */
export type FetchedWakeup = { id: string; data: unknown; retryCount: number; expireInSeconds: number };

/**
 * pg-boss runs a text with `$n` placeholders through an executor; this runs it on a drizzle
 * connection (pool or open transaction) by splitting the text into raw chunks and params.
 * Each occurrence of `$n` becomes its own parameter, which PostgreSQL treats alike.
 */
export function drizzleExecutor(db: DbOrTx): PgBoss.Db {
  return {
    executeSql: async (text: string, values: unknown[]) => {
      const chunks: SQL[] = [];
      let last = 0;
      for (const match of text.matchAll(/\$(\d+)/g)) {
        const index = Number(match[1]) - 1;
        chunks.push(sql.raw(text.slice(last, match.index)));
        chunks.push(sql`${normaliseParam(values[index])}`);
        last = match.index + match[0].length;
      }
      chunks.push(sql.raw(text.slice(last)));
      const result = await db.execute(sql.join(chunks));
      return { rows: result.rows };
    },
  };
}

function normaliseParam(value: unknown): unknown {
  if (value === undefined) return null;
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !Array.isArray(value)) return JSON.stringify(value);
  return value;
}

/**
 * pg-boss's own fetch orders due wake-ups by (priority, created_on), which its index
 * (name, start_after) cannot give: every fetch read and sorted the whole due backlog
 * (bench/worker-e2e.ts: the costliest statement on the server). We never set priorities, so
 * we take the earliest due first, in index order, reading only the rows we take. The
 * transition is pg-boss's own (state, started_on, retry_count), so its expiry maintenance,
 * retries and complete() work unchanged.
 */
export async function fetchDueWakeups(
  executor: PgBossExecutor,
  { schema, queueName, limit }: { schema: string; queueName: string; limit: number },
): Promise<FetchedWakeup[]> {
  const { rows } = await executor.executeSql(
    `with next as (
      select id from ${schema}.job
      where name = $1 and state < 'active' and start_after < now()
      order by start_after
      limit $2
      for update skip locked
    )
    update ${schema}.job j set state = 'active', started_on = now(),
      retry_count = case when j.started_on is not null then j.retry_count + 1 else j.retry_count end
    from next where j.name = $1 and j.id = next.id
    returning j.id, j.data, j.retry_count as "retryCount", extract(epoch from j.expire_in)::int as "expireInSeconds"`,
    [queueName, limit],
  );
  return rows as FetchedWakeup[];
}

/**
 * pg-boss's complete() statement (pg-boss 10 `completeJobs`), for many ids at once: only an
 * `active` wake-up completes, so one that maintenance already moved back to `retry` is left.
 */
export async function completeWakeups(
  executor: PgBossExecutor,
  { schema, queueName, ids, output = null }: { schema: string; queueName: string; ids: readonly string[]; output?: Record<string, string> | null },
): Promise<void> {
  await executor.executeSql(
    `update ${schema}.job set completed_on = now(), state = 'completed', output = $3::jsonb
      where name = $1 and id in (select unnest($2::uuid[])) and state = 'active'`,
    [queueName, [...ids], output === null ? null : JSON.stringify(output)],
  );
}

/** Wake-ups not yet completed (created, retry or active) for these jobs; the sweeper skips them. */
export async function listLiveWakeupJobIds(
  executor: PgBossExecutor,
  { schema, queueName, jobIds }: { schema: string; queueName: string; jobIds: readonly string[] },
): Promise<Set<string>> {
  if (jobIds.length === 0) return new Set();
  const { rows } = await executor.executeSql(
    `select distinct data->>'jobId' as "jobId" from ${schema}.job
      where name = $1 and state in ('created', 'retry', 'active') and data->>'jobId' = any($2::text[])`,
    [queueName, [...jobIds]],
  );
  return new Set((rows as { jobId: string }[]).map((row) => row.jobId));
}

/** Wake-ups that ran out of retries (pg-boss keeps them until its retention deletes them): pg-boss's dead letters. */
export async function countFailedWakeups(executor: PgBossExecutor, { schema, queueName }: { schema: string; queueName: string }): Promise<number> {
  const { rows } = await executor.executeSql(`select count(*)::int as n from ${schema}.job where name = $1 and state = 'failed'`, [queueName]);
  return (rows as { n: number }[])[0]?.n ?? 0;
}

/**
 * Queues must exist in pg-boss 10 before send/fetch. Creating one is DDL (a partition with
 * foreign keys to pgboss.queue), and two processes creating the same new queue at once
 * deadlock: the loser's start failed with "deadlock detected" (workers starting together on a
 * fresh database). So: nothing to do when it exists, else create it under an advisory lock,
 * held on a connection of its own because pg-boss runs the DDL on its pool.
 */
export async function createQueueUnlessExists({ boss, url, queueName }: { boss: PgBoss; url: string; queueName: string }): Promise<void> {
  if (await boss.getQueue(queueName)) return;
  const client = new pg.Client({ connectionString: url, application_name: 'notice-ledger-pgboss' });
  await client.connect();
  try {
    await client.query("select pg_advisory_lock(hashtext('notice-ledger:pgboss.create_queue'))");
    if (!(await boss.getQueue(queueName))) await boss.createQueue(queueName, { name: queueName, policy: 'standard' });
  } finally {
    // Ending the session releases the lock.
    await client.end();
  }
}
