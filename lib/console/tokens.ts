import type { DbOrTx } from '@/db/client';
import type { ApiTokenScope } from '@/db/schema/states';
import type { CreatedToken, TokenView } from '@/lib/api/console/tokens';
import { createApiToken, listApiTokens, revokeApiToken } from '@/lib/auth/api-tokens';
import { ok, refuse, type Result } from '@/lib/http/refusal';

type Summary = {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  scopes: ApiTokenScope[];
  expiresAt: Date | null;
};

function view(token: Summary): TokenView {
  return {
    id: token.id,
    name: token.name,
    prefix: token.prefix,
    createdAt: token.createdAt.toISOString(),
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
    revokedAt: token.revokedAt?.toISOString() ?? null,
    scopes: token.scopes,
    expiresAt: token.expiresAt?.toISOString() ?? null,
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
  params: {
    name: string;
    reason: string;
    actor: string;
    actorId: string | null;
    scopes: readonly ApiTokenScope[];
    expiresAt?: string | null;
    now?: Date;
  },
): Promise<Result<CreatedToken>> {
  const expiresAt = params.expiresAt ? new Date(params.expiresAt) : null;
  if (expiresAt && expiresAt.getTime() <= (params.now ?? new Date()).getTime())
    return refuse('invalid_input', 'The expiry must be in the future; leave it empty for a token that does not expire.', { code: 'invalid_request' });
  return db.transaction(async (tx) => {
    const created = await createApiToken(tx, {
      name: params.name,
      createdBy: params.actorId,
      actor: params.actor,
      reason: params.reason,
      scopes: params.scopes,
      expiresAt,
    });
    return ok({ token: created.token, summary: view(created.summary) });
  });
}

export async function revokeConsoleToken(db: DbOrTx, params: { id: string; reason: string; actor: string }): Promise<Result<TokenView>> {
  return db.transaction(async (tx) => {
    const revoked = await revokeApiToken(tx, params);
    if (!revoked) return refuse('not_found', 'No such token, or it was already revoked.');
    return ok(view(revoked));
  });
}
