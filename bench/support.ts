import { appendFile, chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureDatabase, startEmbeddedPostgres } from '@/db/embedded';
import { migrateDatabase } from '@/db/migrate';
import { postmasterOf } from './cpu';

/** `postmaster`: the embedded server's pid, for CPU accounting (bench/cpu.ts); null on an external server. */
export type BenchDatabase = { url: string; serverUrl: (db: string) => string; postmaster: number | null; stop: () => Promise<void> };

/**
 * A fresh database for a benchmark: a throw-away embedded server in a temporary directory,
 * or a new database on the local server named by DATABASE_URL.
 */
export async function startBenchDatabase(name: string): Promise<BenchDatabase> {
  const external = process.env.DATABASE_URL;
  if (external) {
    const server = (db: string) => {
      const url = new URL(external);
      url.pathname = `/${db}`;
      return url.toString();
    };
    await ensureDatabase(external, name);
    await migrateDatabase(server(name));
    return { url: server(name), serverUrl: server, postmaster: null, stop: async () => undefined };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'notice-ledger-bench-'));
  await chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), database: name });
  await migrateDatabase(pg.url);
  return {
    url: pg.url,
    serverUrl: pg.serverUrl,
    postmaster: postmasterOf(path.join(dir, 'pg')),
    stop: async () => {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
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
