import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillFromCsv } from '@/lib/ledger/backfill';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { fuzzParameters, hostileString, plausibleString, poisoned } from './arbitraries';
import { snapshotTables } from './harness';

/**
 * The backfill CLI's input file (`npm run ledger -- backfill --csv FILE`), through the library call
 * the script makes. Never throws (the script would print a driver error and exit 1 half-way);
 * a file with any invalid row writes nothing; a valid one only adds `sent` ledger rows.
 */

const secret = 'fuzz-backfill-secret-0123456789abcdef';
let t: TestDatabase;
let line = 0;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t.drop();
});

const validRow = (): string[] => {
  line += 1;
  return ['renewal_notice_t72', '0', '2026-01-01T00:00:00Z', `sub_${line}`, '2026-01-01', `pm-${line}`, `customer${line}@example.com`];
};
const header = 'notice_type,revision,sent_at,subscription_id,period_start,provider_message_id,recipient_email';

const cell = fc.oneof(
  plausibleString,
  poisoned(fc.constantFrom('pm-1', 'customer@example.com', 'sub_1', '2026-01-01')),
  hostileString.filter((text) => text.length < 300),
);
const rowsArbitrary = fc.array(
  fc.tuple(fc.nat({ max: 6 }), cell, fc.boolean()).map(([index, value, mutate]) => {
    const row = validRow();
    if (mutate) row[index] = value;
    return row.join(',');
  }),
  { minLength: 1, maxLength: 8 },
);

describe('backfill CSV with hostile rows', () => {
  it('never throws; any invalid row means nothing written; otherwise only ledger rows are added', async () => {
    await fc.assert(
      fc.asyncProperty(rowsArbitrary, fc.constantFrom('\n', '\r\n'), async (rows, newline) => {
        const text = [header, ...rows].join(newline);
        const before = await snapshotTables(t.pool);
        let report: Awaited<ReturnType<typeof backfillFromCsv>>;
        try {
          report = await backfillFromCsv({ db: t.db, text, secret, batchSize: 2 });
        } catch (error) {
          throw new Error(`backfillFromCsv threw: ${error instanceof Error ? error.message.slice(0, 200) : String(error)}`);
        }
        const after = await snapshotTables(t.pool);
        if (report.invalid.length > 0) {
          expect(after).toEqual(before);
          return;
        }
        for (const table of Object.keys(before)) if (table !== 'notice_ledger') expect(after[table], table).toBe(before[table]);
      }),
      { ...fuzzParameters(60), examples: [[[validRow().join(','), [...validRow().slice(0, 5), 'pm-\u0000', 'a@example.com'].join(',')], '\n']] },
    );
  });
});
