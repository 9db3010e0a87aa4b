import type { Db } from '@/db/client';
import { storeEvidencePieces } from '@/db/queries/evidence-record';
import type { Logger } from '@/lib/log';
import type { RenderTrace } from '@/lib/templates/compiled';
import { tracePieces } from '@/lib/templates/trace';
import { canonicalJson } from './hash';

/**
 * The template pieces a send's entry names (lib/templates/trace.ts), stored before the entry's
 * commit: once per process per template, then a resolved promise, so a notice's cost is a map
 * lookup. Each process says again at most every REFRESH_MS that it still uses them (their
 * `last_used_at`, which their retention goes by). Never throws: when they cannot be stored, the
 * entry keeps the whole HTML instead (lib/evidence/record.ts), and the next send tries again.
 */

const REFRESH_MS = 6 * 3_600_000;

type Stored = { at: number; done: Promise<boolean> };
const storedByDb = new WeakMap<Db, Map<string, Stored>>();

export async function storedTracePieces(db: Db, trace: RenderTrace | null, log: Logger, now = Date.now()): Promise<boolean> {
  if (!trace) return false;
  let stored = storedByDb.get(db);
  if (!stored) {
    stored = new Map();
    storedByDb.set(db, stored);
  }
  const known = stored;
  const waits: Promise<boolean>[] = [];
  for (const [digest, pieces] of tracePieces(trace)) {
    let entry = known.get(digest);
    if (!entry || now - entry.at > REFRESH_MS) {
      const done = storeEvidencePieces(db, { digest, texts: canonicalJson(pieces.texts) }).then(
        () => true,
        (error: unknown) => {
          known.delete(digest);
          log.warn(
            { pieces: digest, error: error instanceof Error ? error.message.split('\n')[0] : String(error) },
            'template pieces not stored; the entry keeps its HTML',
          );
          return false;
        },
      );
      entry = { at: now, done };
      known.set(digest, entry);
    }
    waits.push(entry.done);
  }
  return (await Promise.all(waits)).every(Boolean);
}
