import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createDb, createPool } from '@/db/client';
import { migrateDatabase } from '@/db/migrate';
import { config } from '@/lib/config';
import { backfillFromCsv, backfillFromJobs, type BackfillReport } from '@/lib/ledger/backfill';

/**
 * Writes `sent` ledger rows for notices that went out before enforcement:
 *   npm run backfill -- --csv sent.csv [--dry-run]
 *   npm run backfill -- --from-jobs [--limit 10000] [--dry-run]
 * Idempotent: run it as often as you like; existing rows are never changed.
 */
const usage = 'usage: tsx scripts/backfill.ts (--csv FILE | --from-jobs [--limit N]) [--dry-run]';

function parseBackfillArgs() {
  return parseArgs({
    options: {
      csv: { type: 'string' },
      'from-jobs': { type: 'boolean' },
      limit: { type: 'string' },
      'dry-run': { type: 'boolean' },
      help: { type: 'boolean' },
    },
    strict: true,
  }).values;
}

async function main(): Promise<number> {
  let values: ReturnType<typeof parseBackfillArgs>;
  try {
    values = parseBackfillArgs();
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
    return 2;
  }
  if (values.help || (!values.csv && !values['from-jobs']) || (values.csv && values['from-jobs'])) {
    console.error(usage);
    return values.help ? 0 : 2;
  }
  // Decided before any connection opens: a bad invocation changes nothing.
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!/^\d+$/.test(values.limit ?? '') || !Number.isSafeInteger(limit) || limit < 1 || values.csv)) {
    console.error(`--limit must be a positive whole number, with --from-jobs only\n${usage}`);
    return 2;
  }
  const settings = config();
  let url = settings.DATABASE_URL;
  if (!url) {
    const { startEmbeddedPostgres } = await import('@/db/embedded');
    url = (await startEmbeddedPostgres({ dir: settings.EMBEDDED_PG_DIR })).url;
  }
  await migrateDatabase(url);
  const pool = createPool(url, { max: 2, applicationName: 'notice-ledger-backfill' });
  const db = createDb(pool);
  const dryRun = values['dry-run'] ?? false;
  let report: BackfillReport;
  try {
    if (values.csv) {
      report = await backfillFromCsv({ db, text: await readFile(values.csv, 'utf8'), secret: settings.NOTICE_KEY_SECRET, dryRun });
    } else {
      report = await backfillFromJobs({ db, dryRun, limit });
    }
  } finally {
    await pool.end();
  }
  if (report.invalid.length > 0) {
    console.error(`refused: ${report.invalid.length} invalid row(s); nothing written`);
    for (const problem of report.invalid.slice(0, 50)) console.error(`  line ${problem.line}: ${problem.message}`);
    return 1;
  }
  const verb = dryRun ? 'would insert' : 'inserted';
  const fresh = dryRun ? report.total - report.existing : report.inserted;
  console.log(`${report.total} notice(s): ${verb} ${fresh}, already in the ledger ${report.existing}`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
