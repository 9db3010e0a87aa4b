import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAuditEntries } from '@/db/queries/audit';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { noticeLedger, reminderJobs } from '@/db/schema';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { backfillFromCsv, backfillFromJobs, parseBackfillCsv } from './backfill';
import { noticeKey } from './notice-key';

const secret = process.env.NOTICE_KEY_SECRET ?? '';
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

const header = 'notice_type,revision,sent_at,subscription_id,period_start,account_id,reconciliation_id,exception_id,provider_message_id,recipient_email';

describe('parseBackfillCsv', () => {
  it('derives the same key as the worker and validates every row', () => {
    const text = [
      header,
      'renewal_notice_t72,0,2026-09-28T10:00:00Z,sub_1,2026-10-01,,,,Q1,a@Example.test',
      'payment_recovery,,2026-09-28T10:00:00Z,,,acct_1,rec_1,exc_1,,',
      'renewal_notice_t72,0,not-a-date,sub_2,2026-10-01,,,,,',
      'renewal_notice_t72,0,2026-09-28T10:00:00Z,sub_3,2026-10-01,acct_9,,,,',
      'mystery,0,2026-09-28T10:00:00Z,sub_4,2026-10-01,,,,,',
      'renewal_notice_t72,0,2999-01-01T00:00:00Z,sub_5,2026-10-01,,,,,',
      'renewal_notice_t72,0,2026-09-28T10:00:00Z,sub_1,2026-10-01,,,,,',
      'renewal_notice_t72,0,2026-09-28T10:00:00Z,sub_6',
    ].join('\n');
    const parsed = parseBackfillCsv({ text, secret, now: new Date('2026-11-01T00:00:00Z') });
    expect(parsed.rows.map((row) => row.noticeKey)).toEqual([
      noticeKey(secret, { type: 'renewal_notice_t72', identity: { subscription_id: 'sub_1', period_start: '2026-10-01' }, revision: 0 }),
      noticeKey(secret, { type: 'payment_recovery', identity: { account_id: 'acct_1', reconciliation_id: 'rec_1', exception_id: 'exc_1' }, revision: 0 }),
    ]);
    expect(parsed.rows[0]).toMatchObject({ providerMessageId: 'Q1', recipientDomain: 'example.test' });
    expect(parsed.invalid.map((problem) => [problem.line, problem.message])).toEqual([
      [4, 'sent_at must be an ISO 8601 timestamp'],
      [5, "account_id not part of renewal_notice_t72's identity"],
      [6, expect.stringContaining('unknown notice type')],
      [7, 'sent_at is in the future'],
      [8, 'the same notice appears twice in this file'],
      [9, 'expected 10 fields, found 4'],
    ]);
  });

  it('backfills the configured required types too, with their own keys', () => {
    const types = ['auto_renewal_notice', 'trial_conversion_notice', 'price_change_notice', 'pre_debit_notice'];
    const text = [
      header,
      ...types.map((type) => `${type},0,2026-09-28T10:00:00Z,sub_r,2026-10-01,,,,,`),
      'pre_debit_notice,0,2026-09-28T10:00:00Z,sub_r,2026-10-01,acct_1,,,,',
    ].join('\n');
    const parsed = parseBackfillCsv({ text, secret, now: new Date('2026-11-01T00:00:00Z') });
    expect(parsed.rows.map((row) => [row.noticeType, row.noticeKey])).toEqual(
      types.map((type) => [type, noticeKey(secret, { type, identity: { subscription_id: 'sub_r', period_start: '2026-10-01' }, revision: 0 })]),
    );
    expect(parsed.invalid).toEqual([{ line: 6, message: "account_id not part of pre_debit_notice's identity" }]);
  });

  it('refuses an unknown header', () => {
    expect(parseBackfillCsv({ text: 'notice_type,sent_at,card_number\n', secret }).invalid).toEqual([
      { line: 1, message: expect.stringContaining('card_number') },
    ]);
  });
});

describe('backfill writes', () => {
  it('writes sent rows from a CSV once, never overwrites, and refuses a file with any bad row', async () => {
    const text = [header, 'renewal_notice_t24,1,2026-09-28T10:00:00Z,sub_bf,2026-10-01,,,,Q9,x@y.test'].join('\n');
    expect(await backfillFromCsv({ db: t.db, text, secret, dryRun: true })).toMatchObject({ total: 1, inserted: 0, existing: 0 });
    expect(await backfillFromCsv({ db: t.db, text, secret })).toMatchObject({ total: 1, inserted: 1, existing: 0 });
    expect(await backfillFromCsv({ db: t.db, text, secret })).toMatchObject({ total: 1, inserted: 0, existing: 1 });
    const key = noticeKey(secret, { type: 'renewal_notice_t24', identity: { subscription_id: 'sub_bf', period_start: '2026-10-01' }, revision: 1 });
    expect(await getLedgerRow(t.db, { noticeKey: key })).toMatchObject({
      state: 'sent',
      source: 'backfill',
      providerMessageId: 'Q9',
      sentAt: new Date('2026-09-28T10:00:00Z'),
    });

    const bad = [header, 'renewal_notice_t24,0,2026-09-28T10:00:00Z,sub_ok,2026-10-01,,,,,', 'renewal_notice_t24,0,yesterday,sub_bad,2026-10-01,,,,,'].join(
      '\n',
    );
    const report = await backfillFromCsv({ db: t.db, text: bad, secret });
    expect(report.invalid).toHaveLength(1);
    const okKey = noticeKey(secret, { type: 'renewal_notice_t24', identity: { subscription_id: 'sub_ok', period_start: '2026-10-01' }, revision: 0 });
    expect(await getLedgerRow(t.db, { noticeKey: okKey })).toBeNull();
  });

  it('backfills jobs the old pipeline marked sent, idempotently, leaving claimed rows alone', async () => {
    const sent = await insertTestJob(t.db, { state: 'sent' });
    const pending = await insertTestJob(t.db);
    const dry = await backfillFromJobs({ db: t.db, dryRun: true });
    expect(dry.total - dry.existing).toBeGreaterThanOrEqual(1);
    const first = await backfillFromJobs({ db: t.db });
    expect(first).toMatchObject({ inserted: dry.total - dry.existing, existing: dry.existing });
    expect(await getLedgerRow(t.db, { noticeKey: sent.noticeKey })).toMatchObject({
      state: 'sent',
      source: 'backfill',
      jobId: sent.id,
      recipientDomain: 'example.test',
    });
    expect(await getLedgerRow(t.db, { noticeKey: pending.noticeKey })).toBeNull();
    // Run again: every sent job is reported as already in the ledger, none written.
    expect(await backfillFromJobs({ db: t.db })).toMatchObject({ total: first.total, inserted: 0, existing: first.total });
  });

  it('runs as `npm run ledger -- backfill` against DATABASE_URL, audited as the CLI user', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'nl-backfill-'));
    try {
      const file = path.join(dir, 'sent.csv');
      await writeFile(file, [header, 'payment_recovery,0,2026-09-28T10:00:00Z,,,acct_cli,rec_cli,exc_cli,,'].join('\n'));
      const root = path.resolve(import.meta.dirname, '../..');
      const run = (args: string[]) =>
        promisify(execFile)(process.execPath, ['--import', path.join(root, 'node_modules/tsx/dist/loader.mjs'), 'scripts/ledger-cli.ts', 'backfill', ...args], {
          cwd: root,
          env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', NOTICE_KEY_SECRET: secret, DATABASE_URL: t.url },
        });
      const why = ['--reason', 'notices the old system sent'];
      expect((await run(['--csv', file, '--dry-run', ...why])).stdout).toContain('1 notice(s): would insert 1, already in the ledger 0 (dry run');
      expect((await run(['--csv', file, ...why])).stdout).toContain('1 notice(s): inserted 1, already in the ledger 0; audited');
      expect((await run(['--csv', file, ...why])).stdout).toContain('inserted 0, already in the ledger 1');
      const audit = await listAuditEntries(t.db, { filter: { target: 'backfill:csv' }, limit: 10 });
      expect(audit.map((row) => [row.action, row.actor.startsWith('cli:'), row.reason, row.after])).toEqual([
        ['ledger.backfill', true, 'notices the old system sent', { total: 1, inserted: 0, newKeys: 0, existing: 1, dryRun: false }],
        ['ledger.backfill', true, 'notices the old system sent', { total: 1, inserted: 1, newKeys: 1, existing: 0, dryRun: false }],
        ['ledger.backfill_dry_run', true, 'notices the old system sent', { total: 1, inserted: 0, newKeys: 1, existing: 0, dryRun: true }],
      ]);
      const [job] = await t.db.select().from(reminderJobs).where(eq(reminderJobs.state, 'sent'));
      expect(job).toBeDefined();
      const rows = await t.db.select().from(noticeLedger).where(eq(noticeLedger.source, 'backfill'));
      expect(rows.length).toBeGreaterThanOrEqual(3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
