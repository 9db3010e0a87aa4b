import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, primaryKey, text, timestamp, unique, uuid, type AnyPgColumn } from 'drizzle-orm/pg-core';
import { apiTokenScopes, defaultApiTokenScopes, inList, roles } from './states';

export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    email: text('email').notNull().unique('users_email_unique'),
    name: text('name').notNull(),
    role: text('role', { enum: roles }).notNull(),
    /** scrypt, self-describing: `scrypt$N$r$p$salt$hash`. Null for OIDC-only users. */
    passwordHash: text('password_hash'),
    failedLogins: integer('failed_logins').notNull().default(0),
    lockedUntil: timestamp('locked_until', { withTimezone: true }),
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastLoginAt: timestamp('last_login_at', { withTimezone: true }),
    /** Every console session carries the version it was issued with; raising it ends them all (lib/auth/session.ts). */
    sessionVersion: integer('session_version').notNull().default(0),
    /** The last request any session of this user made, kept to the minute: the idle timeout's clock. */
    sessionSeenAt: timestamp('session_seen_at', { withTimezone: true }),
    /** The console user who created this one (null: the CLI, the seed, or before migration 0024): four eyes refuse the pair. */
    createdBy: uuid('created_by').references((): AnyPgColumn => users.id, { onDelete: 'set null' }),
  },
  () => [check('users_role_check', sql.raw(`role in (${inList(roles)})`)), check('users_email_lowercase', sql`email = lower(email)`)],
);

/**
 * A single sign-on identity (the id_token's `iss` + `sub`) linked to a console user: OIDC signs
 * in by this pair, never by email. One subject per issuer and user; lib/auth/oidc-sign-in.ts
 * links it on the user's first single sign-on, by their verified email.
 */
export const userIdentities = pgTable(
  'user_identities',
  {
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    linkedAt: timestamp('linked_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.issuer, table.subject] }), unique('user_identities_user_issuer_unique').on(table.userId, table.issuer)],
);

/**
 * A user's authenticator (TOTP, lib/auth/totp.ts). The secret is sealed with AES-256-GCM under a
 * key derived from NOTICE_KEY_SECRET (lib/auth/mfa-secret.ts); recovery codes are kept as SHA-256
 * only. Until `enabled_at` the enrollment awaits its first code and sign-in ignores it.
 */
export const userMfa = pgTable('user_mfa', {
  userId: uuid('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  secretSealed: text('secret_sealed').notNull(),
  enabledAt: timestamp('enabled_at', { withTimezone: true }),
  /** The last 30 s step a code was accepted for: a code of that step or an earlier one is refused (replay). */
  lastStep: bigint('last_step', { mode: 'number' }),
  recoveryCodeHashes: text('recovery_code_hashes')
    .array()
    .notNull()
    .default(sql`'{}'::text[]`),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Producer API tokens. Only a SHA-256 of the token is stored; the prefix helps people tell them apart. */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    tokenHash: text('token_hash').notNull().unique('api_tokens_hash_unique'),
    createdBy: uuid('created_by'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    /** The producer scopes by default, so the tokens that existed before scopes keep working (README, "Producer tokens"). */
    scopes: text('scopes', { enum: apiTokenScopes })
      .array()
      .notNull()
      .default(sql.raw(`array[${inList(defaultApiTokenScopes)}]::text[]`)),
    /** Refused (401) from this instant on; null never expires. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
  },
  (table) => [
    index('api_tokens_created_idx').on(table.createdAt),
    check('api_tokens_scopes_check', sql.raw(`cardinality(scopes) > 0 and scopes <@ array[${inList(apiTokenScopes)}]::text[]`)),
  ],
);

export type UserRow = typeof users.$inferSelect;
export type UserIdentityRow = typeof userIdentities.$inferSelect;
export type UserMfaRow = typeof userMfa.$inferSelect;
export type ApiTokenRow = typeof apiTokens.$inferSelect;
