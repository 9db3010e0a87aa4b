import type { Db } from '@/db/client';
import { insertTemplateVersion } from '@/db/queries/template-versions';
import type { Logger } from '@/lib/log';
import type { TemplateVersion } from '@/lib/templates/versions';

/**
 * The template versions already stored, per database: a version is inserted by its process's
 * first send with it (every concurrent send awaits the same insert) and is a resolved promise
 * for every later one, so the send path's cost per notice is a map lookup, not a statement.
 */
const storedByDb = new WeakMap<Db, Map<string, Promise<boolean>>>();

/**
 * The version's id once its row is stored, for the result commit to record (the ledger's
 * foreign key needs the row first). A failed insert is logged and answered null: the commit
 * goes ahead without a version (the lookup then says it is unknown), and the next send tries
 * the insert again. Never throws: a sent notice's commit must not wait on this.
 */
export async function storedTemplateVersionId(db: Db, version: TemplateVersion | null | undefined, log: Logger): Promise<string | null> {
  if (!version) return null;
  let stored = storedByDb.get(db);
  if (!stored) {
    stored = new Map();
    storedByDb.set(db, stored);
  }
  let insert = stored.get(version.id);
  if (!insert) {
    const known = stored;
    insert = insertTemplateVersion(db, version).then(
      () => true,
      (error: unknown) => {
        known.delete(version.id);
        log.warn(
          { templateVersion: version.id, error: error instanceof Error ? error.message.split('\n')[0] : String(error) },
          'template version not stored; committed without it',
        );
        return false;
      },
    );
    stored.set(version.id, insert);
  }
  return (await insert) ? version.id : null;
}
