import { sql } from 'drizzle-orm';
import { bigint, bigserial, check, customType, index, pgTable, smallint, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

/**
 * The evidence record (issue 28; lib/evidence/): what happened to a notice that a rule requires,
 * written as it happens, append-only, in one hash chain. Not the `evidence` table (a producer's
 * reconciliation evidence).
 *
 * A writer only inserts: no lock, nothing on the claim's path, and no row here is ever updated.
 * An insert trigger (migration 0040) puts each new entry's id in `evidence_unchained`; one chainer
 * at a time (lib/evidence/chain.ts, under the single head row's lock) takes them from there in id
 * order and appends their links to `evidence_chain`, whose unique seq and entry id are the second
 * guard against a fork.
 */
export const evidenceEntries = pgTable(
  'evidence_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    noticeKey: text('notice_key').notNull(),
    jobId: uuid('job_id'),
    kind: text('kind').notNull(),
    recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * The entry's body as RFC 8785 canonical JSON: the exact bytes its body hash is of. Held in one
     * of two forms (db/queries/evidence-body.ts): as text, or, from 2 000 UTF-8 bytes on (a send's
     * rendered message, ~14 KB), Brotli-compressed by its writer in body_brotli with its SHA-256 in
     * body_hash. Readers get the text either way.
     */
    body: text('body'),
    /** The body's UTF-8 bytes, Brotli-compressed by the writer; stored as it is (STORAGE EXTERNAL: the server does not try to compress it again). */
    bodyBrotli: bytea('body_brotli'),
    /** SHA-256 (hex) of the body's UTF-8 bytes, from the writer of a compressed body: what the chainer links; the verification pass recomputes it. */
    bodyHash: text('body_hash'),
  },
  (table) => [
    index('evidence_entries_notice_idx').on(table.noticeKey, table.id),
    index('evidence_entries_recorded_idx').on(table.recordedAt),
    check('evidence_entries_one_body', sql`(body is null) <> (body_brotli is null) and (body_brotli is null or body_hash is not null)`),
  ],
);

/**
 * The chain: each entry's place (seq), the hash before it and its own, appended by the chainer
 * only. Kept apart from the entries so that chaining an entry is an insert of ~150 bytes, not a
 * rewrite of the entry's row (its body inline, every index again, a dead row for vacuum): the
 * update it replaced was the largest evidence statement on the server (~39 µs and ~2.4 KB of WAL
 * per entry, pg_stat_statements, session 22).
 */
export const evidenceChain = pgTable('evidence_chain', {
  seq: bigint('seq', { mode: 'number' }).primaryKey(),
  entryId: bigint('entry_id', { mode: 'number' }).notNull().unique('evidence_chain_entry_unique'),
  prevHash: text('prev_hash').notNull(),
  entryHash: text('entry_hash').notNull(),
});

/** Entries written and not yet chained, filled by evidence_entries' insert trigger and emptied by the chainer. */
export const evidenceUnchained = pgTable('evidence_unchained', {
  entryId: bigint('entry_id', { mode: 'number' }).primaryKey(),
});

/** The chain's head: one row, locked by the chainer, so two chainers can never extend it from the same entry. */
export const evidenceChainHead = pgTable(
  'evidence_chain_head',
  {
    id: smallint('id').primaryKey().default(1),
    seq: bigint('seq', { mode: 'number' }).notNull().default(0),
    hash: text('hash').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  () => [check('evidence_chain_head_one_row', sql`id = 1`)],
);

/**
 * A signed chain head: the entries (from_seq … to_seq] since the previous one, their Merkle root
 * (RFC 6962 hashing, the inclusion path a pack carries) and the head's entry hash, signed with
 * Ed25519 (EVIDENCE_SIGNING_KEYS, `kid`); an RFC 3161 token on the signed bytes when TSA_URL is set.
 */
export const evidenceSignedHeads = pgTable(
  'evidence_signed_heads',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    fromSeq: bigint('from_seq', { mode: 'number' }).notNull(),
    toSeq: bigint('to_seq', { mode: 'number' }).notNull().unique('evidence_signed_heads_to_seq_unique'),
    headHash: text('head_hash').notNull(),
    merkleRoot: text('merkle_root').notNull(),
    signedAt: timestamp('signed_at', { withTimezone: true }).notNull(),
    kid: text('kid').notNull(),
    /** The canonical JSON that was signed. */
    payload: text('payload').notNull(),
    signature: text('signature').notNull(),
    /** DER TimeStampToken (base64) over the signed payload, when TSA_URL was set. */
    timestampToken: text('timestamp_token'),
  },
  () => [check('evidence_signed_heads_range', sql`from_seq >= 1 and to_seq >= from_seq`)],
);

/**
 * A compiled template's static pieces (lib/templates/compiled.ts), by the SHA-256 of their
 * canonical JSON array: what a send's entry names instead of holding its HTML's ~10 KB of markup
 * (lib/templates/trace.ts). Written once per worker process per template before the first entry
 * naming it commits; `last_used_at` is refreshed by each process at most daily, and a row is
 * pruned a day after the evidence retention has passed it (no entry can still name it then).
 */
export const evidencePieces = pgTable('evidence_pieces', {
  digest: text('digest').primaryKey(),
  /** The pieces as the canonical JSON array of strings the digest is of. */
  texts: text('texts').notNull(),
  recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull().defaultNow(),
  lastUsedAt: timestamp('last_used_at', { withTimezone: true }).notNull().defaultNow(),
});

export type EvidenceEntryRow = typeof evidenceEntries.$inferSelect;
export type EvidenceSignedHeadRow = typeof evidenceSignedHeads.$inferSelect;
