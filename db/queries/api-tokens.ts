import { and, desc, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { apiTokens, type ApiTokenRow } from '@/db/schema/auth';
import type { ApiTokenScope } from '@/db/schema/states';
import { isUuid } from '@/db/uuid';

export type ApiTokenSummary = Omit<ApiTokenRow, 'tokenHash'>;

const summaryColumns = {
  id: apiTokens.id,
  name: apiTokens.name,
  prefix: apiTokens.prefix,
  createdBy: apiTokens.createdBy,
  createdAt: apiTokens.createdAt,
  lastUsedAt: apiTokens.lastUsedAt,
  revokedAt: apiTokens.revokedAt,
  scopes: apiTokens.scopes,
  expiresAt: apiTokens.expiresAt,
};

export async function insertApiToken(
  db: DbOrTx,
  params: { name: string; prefix: string; tokenHash: string; createdBy: string | null; scopes: ApiTokenScope[]; expiresAt: Date | null },
): Promise<ApiTokenSummary> {
  const [row] = await db.insert(apiTokens).values(params).returning(summaryColumns);
  if (!row) throw new Error('api token insert returned nothing');
  return row;
}

export async function findApiTokenByHash(db: DbOrTx, { tokenHash }: { tokenHash: string }): Promise<ApiTokenSummary | null> {
  const [row] = await db.select(summaryColumns).from(apiTokens).where(eq(apiTokens.tokenHash, tokenHash)).limit(1);
  return row ?? null;
}

/** At most one write a minute per token: last_used_at is for people, not an access log. */
export async function touchApiToken(db: DbOrTx, { id, now }: { id: string; now: Date }): Promise<void> {
  await db
    .update(apiTokens)
    .set({ lastUsedAt: now })
    .where(and(eq(apiTokens.id, id), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, sql`${now}::timestamptz - interval '1 minute'`))));
}

export async function revokeApiTokenById(db: DbOrTx, { id, now }: { id: string; now: Date }): Promise<ApiTokenSummary | null> {
  if (!isUuid(id)) return null;
  const [row] = await db
    .update(apiTokens)
    .set({ revokedAt: sql`coalesce(${apiTokens.revokedAt}, ${now}::timestamptz)` })
    .where(eq(apiTokens.id, id))
    .returning(summaryColumns);
  return row ?? null;
}

export async function listApiTokens(db: DbOrTx, { limit }: { limit: number }): Promise<ApiTokenSummary[]> {
  return db.select(summaryColumns).from(apiTokens).orderBy(desc(apiTokens.createdAt)).limit(limit);
}
