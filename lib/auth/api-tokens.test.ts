import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { createApiToken, hashApiToken, mintApiToken, missingScope, recordApiTokenUse, revokeApiToken, verifyApiToken } from './api-tokens';

describe('mintApiToken', () => {
  it('mints distinct tokens whose stored form is the SHA-256 hex of the token', () => {
    const a = mintApiToken();
    const b = mintApiToken();
    expect(a.token).toMatch(/^nlk_[0-9a-f]{8}_[A-Za-z0-9_-]{43}$/);
    expect(a.token.startsWith(`nlk_${a.prefix}_`)).toBe(true);
    expect(a.tokenHash).toBe(hashApiToken(a.token));
    expect(a.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.token).not.toBe(b.token);
  });
});

describe('api tokens in the database', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('stores only the hash, verifies, refuses after revocation, and records use at most once a minute', async () => {
    const { token, summary } = await createApiToken(t.db, { name: 'billing', createdBy: null, actor: 'admin@example.test' });
    const secretPart = token.split('_').slice(2).join('_');
    const stored = await t.pool.query(`select row_to_json(x)::text as row from api_tokens x`);
    expect(stored.rows[0]?.row).not.toContain(secretPart);
    const audit = await t.pool.query(`select row_to_json(x)::text as row from audit_log x`);
    expect(audit.rows.map((r) => String(r.row)).join()).not.toContain(secretPart);

    const ok = await verifyApiToken(t.db, { authorization: `Bearer ${token}` });
    expect(ok).toMatchObject({ ok: true, actor: `token:${summary.prefix}` });
    expect(await verifyApiToken(t.db, { authorization: `bearer   ${token}` })).toMatchObject({ ok: true });
    expect(await verifyApiToken(t.db, { authorization: null })).toEqual({ ok: false, reason: 'missing' });
    expect(await verifyApiToken(t.db, { authorization: token })).toEqual({ ok: false, reason: 'malformed' });
    expect(await verifyApiToken(t.db, { authorization: `Bearer ${token}x` })).toEqual({ ok: false, reason: 'malformed' });
    expect(await verifyApiToken(t.db, { authorization: `Bearer ${mintApiToken().token}` })).toEqual({ ok: false, reason: 'unknown' });

    const first = new Date('2026-11-29T10:00:00Z');
    await recordApiTokenUse(t.db, { id: summary.id, now: first });
    await recordApiTokenUse(t.db, { id: summary.id, now: new Date(first.getTime() + 30_000) });
    const lastUsed = async () => (await t.pool.query(`select last_used_at from api_tokens where id = $1`, [summary.id])).rows[0]?.last_used_at as Date;
    expect(await lastUsed()).toEqual(first);
    await recordApiTokenUse(t.db, { id: summary.id, now: new Date(first.getTime() + 61_000) });
    expect((await lastUsed()).getTime()).toBe(first.getTime() + 61_000);

    await revokeApiToken(t.db, { id: summary.id, actor: 'admin@example.test', reason: 'leaked in a log' });
    expect(await verifyApiToken(t.db, { authorization: `Bearer ${token}` })).toEqual({ ok: false, reason: 'revoked' });
  });

  it('holds the scopes it was given, in the list order, once each; refuses from its expiry on; a token of before holds every scope', async () => {
    const expiresAt = new Date('2027-01-01T00:00:00Z');
    const { token, summary } = await createApiToken(t.db, {
      name: 'events only',
      createdBy: null,
      actor: 'admin@example.test',
      scopes: ['notices:read', 'events:write', 'events:write'],
      expiresAt,
    });
    expect(summary.scopes).toEqual(['events:write', 'notices:read']);
    expect(missingScope(summary, 'events:write')).toBeNull();
    expect(missingScope(summary, 'reminders:write')).toBe('reminders:write');
    const authorization = `Bearer ${token}`;
    expect(await verifyApiToken(t.db, { authorization, now: new Date(expiresAt.getTime() - 1) })).toMatchObject({ ok: true });
    expect(await verifyApiToken(t.db, { authorization, now: expiresAt })).toEqual({ ok: false, reason: 'expired' });
    await expect(createApiToken(t.db, { name: 'none', createdBy: null, actor: 'a', scopes: [] })).rejects.toThrow('at least one scope');

    // A row as the tokens before migration 0023 were: the column's default gives it every scope.
    const minted = mintApiToken();
    await t.pool.query('insert into api_tokens (name, prefix, token_hash) values ($1, $2, $3)', ['old', minted.prefix, minted.tokenHash]);
    const old = await verifyApiToken(t.db, { authorization: `Bearer ${minted.token}` });
    expect(old.ok && old.token.scopes).toEqual(['reminders:write', 'events:write', 'evidence:write', 'preferences:write', 'notices:read']);
    await expect(t.pool.query("update api_tokens set scopes = array['admin'] where prefix = $1", [minted.prefix])).rejects.toThrow(/api_tokens_scopes_check/);
  });
});
