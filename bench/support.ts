import { appendFile } from 'node:fs/promises';
import { ensureDatabase, startEmbeddedPostgres } from '@/db/embedded';
import { migrateDatabase } from '@/db/migrate';
import { assertLocalDatabaseUrl, withDatabase } from '@/testing/database';

/** A database a benchmark keeps across runs; `dataDir` is an embedded server's (for bench/cpu.ts), null on DATABASE_URL's. */
export type KeptDatabase = { url: string; dataDir: string | null; release: () => Promise<void> };

/**
 * A seeded database worth keeping (a throw-away one comes from testing/database.ts,
 * provisionDatabase): the database `name` on the local server DATABASE_URL names, or an
 * embedded server whose data lives in `dir` (used only without DATABASE_URL); migrated either way, so a new migration is
 * applied to kept data. Release stops an embedded server and deletes nothing.
 */
export async function openKeptDatabase({ name, dir }: { name: string; dir: string | undefined }): Promise<KeptDatabase> {
  const external = process.env.DATABASE_URL;
  if (external) {
    assertLocalDatabaseUrl(external);
    await ensureDatabase(external, name);
    const url = withDatabase(external, name);
    await migrateDatabase(url);
    return { url, dataDir: null, release: async () => undefined };
  }
  if (!dir) throw new Error('openKeptDatabase: no DATABASE_URL and no directory to keep the server in');
  const server = await startEmbeddedPostgres({ dir, database: name });
  await migrateDatabase(server.url);
  return { url: server.url, dataDir: dir, release: server.stop };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export function printTable(title: string, rows: Record<string, string | number>[]): void {
  console.log(`\n${title}`);
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0] ?? {});
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ');
  console.log(line(columns));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(columns.map((c) => String(row[c] ?? ''))));
}

export type TargetRow = { figure: string; value: string; target: string };

/**
 * A benchmark's verdicts on the targets. Printed by the benchmark itself; with
 * BENCH_TARGETS_FILE set (bench/all.ts sets it) also appended there as JSON lines, so
 * `npm run bench` can end with one table of every target across its separate processes.
 */
export async function recordTargets(rows: TargetRow[]): Promise<void> {
  const file = process.env.BENCH_TARGETS_FILE;
  if (!file) return;
  await appendFile(file, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
}

/**
 * The database as a deployment that has run a while keeps it, before a measured run: statistics
 * current, dead rows vacuumed, dirty pages written (`VACUUM (ANALYZE)`, then `CHECKPOINT`). The
 * server's autovacuum and checkpoints otherwise land in whichever run comes next, one run of
 * 6 000 notices lasts ~10 s, and such a run was seen with PostgreSQL at 1.14 ms of CPU per notice
 * against 0.72 in the same variant's other round (session 19's evidence comparison). `CHECKPOINT`
 * needs a superuser or pg_checkpoint; a server that refuses it is only vacuumed.
 *
 * What the previous run left is not hidden: measureWorker charges it to that run as its upkeep
 * (bench/worker-e2e.ts), measured by the same call.
 */
export async function settleDatabase(pool: { query: (text: string) => Promise<unknown> }): Promise<void> {
  await pool.query('vacuum (analyze)');
  try {
    await pool.query('checkpoint');
  } catch {
    // Not allowed on this server: vacuumed and analysed only.
  }
}
