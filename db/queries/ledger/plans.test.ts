import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimParamsFor, insertTestJob } from '@/testing/jobs';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import type { JobRow } from '@/db/schema';
import { claimManyQuery, claimNotices, type ClaimParams } from './claim';
import { commitSentManyQuery, type CommitSentParams } from './commit';

/**
 * The send path's batched statements reach the ledger and the jobs by key, however many rows sit
 * in the partial indexes of open jobs and claimed rows, and whatever the planner's statistics say
 * of them. The situation that broke them: statistics taken when few jobs were open and few rows
 * claimed, then many jobs planned (a producer's import, a bench round) and many claims left in
 * quarantine (an outage's unknown outcomes) before autovacuum analysed again. The planner read the
 * batch's rows through those partial indexes, filtering by key: every open job and every claimed
 * row, per statement.
 *
 * Each statement is explained exactly as the send path sends it (claimManyQuery,
 * commitSentManyQuery), executed (`explain analyze`) and rolled back, and the rows its scans of
 * each table read are counted.
 */

const MANY = 3_000;
const BATCH = 40;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  // The statistics below are kept: this database's autovacuum must not analyse them away mid-test.
  await t.db.execute(sql`alter table reminder_jobs set (autovacuum_enabled = false)`);
  await t.db.execute(sql`alter table notice_ledger set (autovacuum_enabled = false)`);
  const template = await insertTestJob(t.db);
  // History: jobs sent, with their ledger rows; analysed while nothing else is open or claimed.
  await t.db.execute(sql`
    insert into reminder_jobs
    select (jsonb_populate_record(null::reminder_jobs, to_jsonb(j) || jsonb_build_object('id', gen_random_uuid(), 'notice_key', 'sent-' || n, 'state', 'sent'))).*
    from reminder_jobs j, generate_series(1, ${MANY}) n where j.id = ${template.id}`);
  await t.db.execute(sql`
    insert into notice_ledger (notice_key, notice_type, identity, job_id, state, recipient_domain, one_time_code, sent_at)
    select notice_key, notice_type, identity, id, 'sent', 'example.test', 'code', now() from reminder_jobs where state = 'sent'`);
  await t.db.execute(sql`analyze reminder_jobs`);
  await t.db.execute(sql`analyze notice_ledger`);
  // Since: many jobs planned, and as many claims in quarantine.
  await t.db.execute(sql`
    insert into reminder_jobs
    select (jsonb_populate_record(null::reminder_jobs, to_jsonb(j) || jsonb_build_object('id', gen_random_uuid(), 'notice_key', 'open-' || n))).*
    from reminder_jobs j, generate_series(1, ${MANY}) n where j.id = ${template.id}`);
  await t.db.execute(sql`
    insert into notice_ledger (notice_key, notice_type, identity, job_id, state, claim_token, claimed_by, claimed_at, recipient_domain, one_time_code)
    select 'stale-' || n, notice_type, identity, id, 'claimed', gen_random_uuid(), 'gone', now() - interval '1 hour', 'example.test', 'code'
    from reminder_jobs, generate_series(1, ${MANY}) n where id = ${template.id}`);
}, 60_000);
afterAll(async () => {
  await t?.drop();
});

type PlanNode = {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
};

/** Rows each table's scans read (returned or filtered out), over the whole plan, CTEs included. */
function rowsReadByTable(node: PlanNode, into = new Map<string, number>()): Map<string, number> {
  if (node['Relation Name'] && /Scan/.test(node['Node Type'])) {
    const loops = node['Actual Loops'] ?? 1;
    const read = ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * loops;
    into.set(node['Relation Name'], (into.get(node['Relation Name']) ?? 0) + read);
  }
  for (const child of node.Plans ?? []) rowsReadByTable(child, into);
  return into;
}

async function explainAnalyzed(query: { text: string; values: unknown[] }): Promise<Map<string, number>> {
  const client = await t.db.$client.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`explain (analyze, format json) ${query.text}`, query.values);
    const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
    if (!plan) throw new Error('no plan');
    return rowsReadByTable(plan);
  } finally {
    await client.query('rollback');
    client.release();
  }
}

const commitOf = (claim: ClaimParams, n: number): CommitSentParams => ({
  noticeKey: claim.noticeKey,
  claimToken: claim.claimToken,
  providerMessageId: `relay-${String(n)}`,
  jobId: claim.jobId,
  workerId: 'w-plan',
  startedAt: new Date(),
  queueMessageId: `q-${String(n)}`,
  batchId: null,
  correlationId: 'c'.repeat(32),
  claimToCommitMs: 1,
  mode: 'enforce',
  evidence: null,
});

describe('the batched claim and commit read only their batch, however many jobs are open', () => {
  it(`claims ${String(BATCH)} jobs beside ${String(MANY)} other open ones and ${String(MANY)} stale claims, then commits them, reading about ${String(BATCH)} rows of each table`, async () => {
    const jobs: JobRow[] = [];
    for (let i = 0; i < BATCH; i += 1) jobs.push(await insertTestJob(t.db));
    const claims = jobs.map((job) => claimParamsFor(job));

    const claimRead = await explainAnalyzed(claimManyQuery(claims));
    expect(claimRead.get('reminder_jobs')).toBeGreaterThanOrEqual(BATCH);
    expect(claimRead.get('reminder_jobs')).toBeLessThanOrEqual(3 * BATCH);

    // The claims, for real this time (the explain's were rolled back), so the commit has rows to move.
    expect((await claimNotices(t.db, claims)).every(Boolean)).toBe(true);
    for (const outbox of [false, true]) {
      const commitRead = await explainAnalyzed(commitSentManyQuery(claims.map(commitOf), { outbox }));
      expect(commitRead.get('reminder_jobs') ?? 0).toBeLessThanOrEqual(3 * BATCH);
      expect(commitRead.get('notice_ledger')).toBeGreaterThanOrEqual(BATCH);
      expect(commitRead.get('notice_ledger')).toBeLessThanOrEqual(3 * BATCH);
    }
  }, 60_000);
});
