import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { ingestEvents } from '@/lib/events/ingest';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { runScript, scriptEnv } from '@/testing/run-script';

/**
 * `npm run ledger -- post-failover` as on-call runs it after a failover: the real script in a
 * child process against a real database holding a job with no claim and the relay's accepted
 * event for it (what a promoted asynchronous standby shows for a claim it lost).
 */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const runLedger = (args: string[]) => runScript({ script: 'scripts/ledger-cli.ts', args, env: scriptEnv(t.url) });

describe('npm run ledger -- post-failover', () => {
  it('lists on --dry-run and changes nothing, then records the notice sent, audited as cli:<os user>; a bad instant is a usage error', async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    const job = await insertTestJob(t.db);
    const correlation = correlationOf(job.noticeKey);
    await ingestEvents(t.db, {
      events: [
        {
          provider: 'generic',
          eventId: `evt-${randomBytes(4).toString('hex')}`,
          type: 'accepted',
          rawType: 'accepted',
          correlationId: correlation,
          messageId: null,
          providerMessageId: null,
          recipient: null,
          bounceType: null,
          occurredAt: new Date(),
          details: {},
        },
      ],
    });

    const bad = await runLedger(['post-failover', '--since', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not an ISO 8601 instant/);

    const dry = await runLedger(['post-failover', '--since', since, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(correlation);
    expect(dry.stdout).toMatch(/1 notice\(s\) .* found \(dry run: nothing changed\)/);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeNull();

    const run = await runLedger(['post-failover', '--since', since]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/1 notice\(s\) .* recorded as sent/);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'sent' });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' });
    const audit = await t.db.execute<{ actor: string }>(sql`select actor from audit_log where action = 'ledger.post_failover_sent'`);
    expect(audit.rows).toEqual([{ actor: `cli:${userInfo().username.toLowerCase()}` }]);
  }, 120_000);
});
