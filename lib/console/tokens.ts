import type { DbOrTx } from '@/db/client';
import type { ActionResult } from '@/lib/auth/guard';
import { createApiToken, listApiTokens, revokeApiToken } from '@/lib/auth/api-tokens';

export type TokenView = { id: string; name: string; prefix: string; createdAt: string; lastUsedAt: string | null; revokedAt: string | null };

type Summary = { id: string; name: string; prefix: string; createdAt: Date; lastUsedAt: Date | null; revokedAt: Date | null };

function view(token: Summary): TokenView {
  return {
    id: token.id,
    name: token.name,
    prefix: token.prefix,
    createdAt: token.createdAt.toISOString(),
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
    revokedAt: token.revokedAt?.toISOString() ?? null,
  };
}

export async function loadTokens(db: DbOrTx): Promise<TokenView[]> {
  return (await listApiTokens(db, { limit: 200 })).map(view);
}

/**
 * The clear token is in this answer and nowhere else: the page (or the CLI) shows it once.
 * `actorId` is the console user who made it; null from the CLI, whose actor is no user.
 */
export async function createConsoleToken(
  db: DbOrTx,
  params: { name: string; reason: string; actor: string; actorId: string | null },
): Promise<{ token: string; summary: TokenView }> {
  return db.transaction(async (tx) => {
    const created = await createApiToken(tx, { name: params.name, createdBy: params.actorId, actor: params.actor, reason: params.reason });
    return { token: created.token, summary: view(created.summary) };
  });
}

export async function revokeConsoleToken(db: DbOrTx, params: { id: string; reason: string; actor: string }): Promise<ActionResult<TokenView>> {
  return db.transaction(async (tx) => {
    const revoked = await revokeApiToken(tx, params);
    if (!revoked) return { ok: false, error: { code: 'not_found', message: 'No such token, or it was already revoked.' } };
    return { ok: true, data: view(revoked) };
  });
}
