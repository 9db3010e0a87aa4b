import { createHash, randomBytes } from 'node:crypto';
import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { apiTokenScopes, defaultApiTokenScopes, type ApiTokenScope } from '@/db/schema/states';
import { findApiTokenByHash, insertApiToken, listApiTokens, revokeApiTokenById, touchApiToken, type ApiTokenSummary } from '@/db/queries/api-tokens';

/**
 * Producer API tokens look like `nlk_<prefix>_<secret>`. Only SHA-256(token) is stored; the
 * prefix is stored in clear so people can tell tokens apart and audit rows can name one
 * (`token:<prefix>`) without revealing it. A token has 256 bits of entropy, so a fast hash is
 * enough: there is nothing to brute-force.
 *
 * A token holds scopes (`apiTokenScopes`: each producer route names the one it needs) and may
 * expire; a token made before scopes existed holds every scope (migration 0023's default).
 */

const tokenPattern = /^nlk_([0-9a-f]{8})_([A-Za-z0-9_-]{43})$/;

export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function mintApiToken(): { token: string; prefix: string; tokenHash: string } {
  const prefix = randomBytes(4).toString('hex');
  const token = `nlk_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { token, prefix, tokenHash: hashApiToken(token) };
}

/** Creates a token; the clear token is returned once and never stored or logged. */
export async function createApiToken(
  db: DbOrTx,
  {
    name,
    createdBy,
    actor,
    reason,
    scopes = [...defaultApiTokenScopes],
    expiresAt = null,
  }: { name: string; createdBy: string | null; actor: string; reason?: string; scopes?: readonly ApiTokenScope[]; expiresAt?: Date | null },
): Promise<{ token: string; summary: ApiTokenSummary }> {
  const minted = mintApiToken();
  // Stored in the list's own order, once each, so a token's scopes read the same wherever they show.
  const held = apiTokenScopes.filter((scope) => scopes.includes(scope));
  if (held.length === 0) throw new Error('an API token needs at least one scope');
  const summary = await insertApiToken(db, {
    name: name.trim().slice(0, 100),
    prefix: minted.prefix,
    tokenHash: minted.tokenHash,
    createdBy,
    scopes: held,
    expiresAt,
  });
  await insertAuditEntries(db, {
    entries: [
      {
        actor,
        action: 'api_token.create',
        targetType: 'api_token',
        targetId: summary.id,
        reason: reason ?? `created token ${summary.prefix}`,
        after: { name: summary.name, prefix: summary.prefix, scopes: summary.scopes, expiresAt: summary.expiresAt?.toISOString() ?? null },
      },
    ],
  });
  return { token: minted.token, summary };
}

export async function revokeApiToken(
  db: DbOrTx,
  { id, actor, reason, now = new Date() }: { id: string; actor: string; reason: string; now?: Date },
): Promise<ApiTokenSummary | null> {
  const summary = await revokeApiTokenById(db, { id, now });
  if (!summary) return null;
  await insertAuditEntries(db, {
    entries: [
      {
        actor,
        action: 'api_token.revoke',
        targetType: 'api_token',
        targetId: summary.id,
        reason,
        after: { prefix: summary.prefix, revokedAt: summary.revokedAt?.toISOString() ?? null },
      },
    ],
  });
  return summary;
}

export { listApiTokens };

export type TokenCheck =
  { ok: true; token: ApiTokenSummary; actor: string } | { ok: false; reason: 'missing' | 'malformed' | 'unknown' | 'revoked' | 'expired' };

/**
 * Checks an `Authorization` header value. Writes nothing: the caller records use with
 * `recordApiTokenUse` once the request has succeeded, so a refused request changes no row.
 */
export async function verifyApiToken(db: DbOrTx, { authorization, now = new Date() }: { authorization: string | null; now?: Date }): Promise<TokenCheck> {
  if (!authorization) return { ok: false, reason: 'missing' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  const token = match?.[1];
  if (!token || !tokenPattern.test(token)) return { ok: false, reason: 'malformed' };
  const found = await findApiTokenByHash(db, { tokenHash: hashApiToken(token) });
  if (!found) return { ok: false, reason: 'unknown' };
  if (found.revokedAt) return { ok: false, reason: 'revoked' };
  if (found.expiresAt && found.expiresAt.getTime() <= now.getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, token: found, actor: `token:${found.prefix}` };
}

/** The scope a route needs, or null when the token holds it. */
export function missingScope(token: Pick<ApiTokenSummary, 'scopes'>, needed: ApiTokenScope): ApiTokenScope | null {
  return token.scopes.includes(needed) ? null : needed;
}

export async function recordApiTokenUse(db: DbOrTx, { id, now = new Date() }: { id: string; now?: Date }): Promise<void> {
  await touchApiToken(db, { id, now });
}
