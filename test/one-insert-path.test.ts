import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// A job row is made in one place: enqueueNotices (lib/planning/enqueue-notice.ts; enqueueNotice is
// a list of one) is the only caller of insertJobsUnlessExist (db/queries/scheduling.ts), which
// holds the only insert into reminder_jobs; insertJobUnlessExists, for fixtures, is a list of one
// in the same file. A producer's batch goes through the same path. A second writer is how the three copies of ~25 fields drifted apart before
// (traceparent in two, the UTC default in one). The demo seeds are let be: they write finished
// histories (sent, failed, retried rows with fixed ids) that no producer request makes.
const root = path.resolve(import.meta.dirname, '..');
const productionTree = /^(?:app|components|db|lib|scripts|worker)\/.*\.(?:ts|tsx|mts|mjs)$/;
const testFile = /\.(?:test|spec|property\.test)\.tsx?$/;
const demoSeed = /^scripts\/demo\//;

export const INSERT_HOME = 'db/queries/scheduling.ts';
export const ENQUEUE_HOME = 'lib/planning/enqueue-notice.ts';

const drizzleInsert = /\.insert\(\s*(?:\w+\.)?reminderJobs\s*\)/g;
const rawInsert = /insert\s+into\s+(?:"?public"?\.)?"?reminder_jobs"?[\s(]/gi;
const insertCall = /\binsert(?:JobUnlessExists|JobsUnlessExist)\s*\(/g;
const insertDefinition = /\bfunction\s+insert(?:JobUnlessExists|JobsUnlessExist)\s*\(/g;

type SourceFile = { path: string; text: string };

/** Every place outside the one home that writes reminder_jobs rows; empty when there is one way. */
export function secondWriters(files: SourceFile[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    if (!productionTree.test(file.path) || testFile.test(file.path) || demoSeed.test(file.path)) continue;
    const inserts = (file.text.match(drizzleInsert)?.length ?? 0) + (file.text.match(rawInsert)?.length ?? 0);
    const allowedInserts = file.path === INSERT_HOME ? 1 : 0;
    if (inserts > allowedInserts) found.push(`${file.path}: ${inserts} insert(s) into reminder_jobs`);
    const calls = (file.text.match(insertCall)?.length ?? 0) - (file.text.match(insertDefinition)?.length ?? 0);
    // enqueueNotices' one call, and the fixtures' list of one beside the insert.
    const allowedCalls = file.path === ENQUEUE_HOME || file.path === INSERT_HOME ? 1 : 0;
    if (calls > allowedCalls) found.push(`${file.path}: ${calls} call(s) of the job insert`);
  }
  return found;
}

function trackedSources(): SourceFile[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((file) => productionTree.test(file))
    .map((file) => ({ path: file, text: readFileSync(path.join(root, file), 'utf8') }));
}

describe('one way to make a job', () => {
  it('finds a second writer, however it is spelt (the check itself)', () => {
    const home = { path: INSERT_HOME, text: 'export async function insertJobUnlessExists(db) { return db.insert(reminderJobs).values(job); }' };
    const enqueue = { path: ENQUEUE_HOME, text: 'await insertJobsUnlessExist(tx, rows);' };
    expect(secondWriters([home, enqueue])).toEqual([]);
    expect(
      secondWriters([
        home,
        enqueue,
        { path: 'lib/replay/schedule-item.ts', text: 'await insertJobUnlessExists(tx, { noticeKey });' },
        { path: 'lib/planning/bulk.ts', text: 'await tx\n  .insert(schema.reminderJobs)\n  .values(rows);' },
        { path: 'worker/backfill.ts', text: 'await db.execute(sql`INSERT INTO reminder_jobs (notice_key) values (${key})`);' },
        { path: 'db/queries/other.ts', text: 'insert into "reminder_jobs"(id) select 1' },
        { path: 'lib/planning/schedule-batch.ts', text: 'await insertJobsUnlessExist(tx, rows);' },
        { path: ENQUEUE_HOME, text: 'await insertJobsUnlessExist(tx, a); await insertJobUnlessExists(tx, b);' },
        { path: INSERT_HOME, text: 'db.insert(reminderJobs); db.insert(reminderJobs);' },
      ]),
    ).toEqual([
      'lib/replay/schedule-item.ts: 1 call(s) of the job insert',
      'lib/planning/bulk.ts: 1 insert(s) into reminder_jobs',
      'worker/backfill.ts: 1 insert(s) into reminder_jobs',
      'db/queries/other.ts: 1 insert(s) into reminder_jobs',
      'lib/planning/schedule-batch.ts: 1 call(s) of the job insert',
      `${ENQUEUE_HOME}: 2 call(s) of the job insert`,
      `${INSERT_HOME}: 2 insert(s) into reminder_jobs`,
    ]);
    // Tests, fixtures and the demo seeds may write rows of any shape.
    const elsewhere = 'db.insert(reminderJobs); insertJobUnlessExists(t.db, row);';
    expect(
      secondWriters(
        ['lib/jobs/sweeper.test.ts', 'testing/jobs.ts', 'e2e/fixtures/x.ts', 'bench/worker-ab.ts', 'scripts/demo/seed.ts', 'scripts/demo/billing.ts'].map(
          (p) => ({
            path: p,
            text: elsewhere,
          }),
        ),
      ),
    ).toEqual([]);
  });

  it('has one insert into reminder_jobs in the production tree, called only by enqueueNotice', () => {
    const sources = trackedSources();
    expect(sources.map((file) => file.path)).toEqual(
      expect.arrayContaining([INSERT_HOME, ENQUEUE_HOME, 'lib/planning/schedule-notice.ts', 'lib/replay/schedule-item.ts']),
    );
    expect(secondWriters(sources)).toEqual([]);
    const home = sources.find((file) => file.path === ENQUEUE_HOME)?.text ?? '';
    expect(home.match(insertCall)?.length).toBe(1);
  });
});
