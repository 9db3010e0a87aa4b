import { getDb } from '@/lib/process-db';
import journal from '@/db/migrations/meta/_journal.json';
import { getReady } from '@/lib/api/health';
import { checkDatabase, checkMigrations } from '@/lib/health';
import { publicRoute } from '@/lib/http/public-route';
import { ok, refuse } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = publicRoute(getReady, async () => {
  const db = getDb();
  const database = await checkDatabase(db);
  if (!database.ok) return refuse('unavailable', database.reason);
  const migrations = await checkMigrations(db, { journal: journal.entries });
  if (!migrations.ok)
    return refuse('unavailable', migrations.reason, { details: { missing: migrations.missing, applied: migrations.applied, expected: migrations.expected } });
  return ok({ status: 'ready' as const });
});
