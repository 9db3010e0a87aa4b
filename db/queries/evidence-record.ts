import { sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '@/db/client';
import { bodyText, type StoredBody } from './evidence-body';

/**
 * Every statement on the evidence record (db/schema/evidence-record.ts). Writers append
 * unchained rows; the chainer (lib/evidence/chain.ts) is the only one to append links to
 * evidence_chain; nothing here updates an entry or a link, or deletes one younger than its retention.
 */

/** An entry to append, its body (canonical JSON) already in the form it is stored in (./evidence-body.ts storedBody). */
export type NewEvidenceEntry = { noticeKey: string; jobId: string | null; kind: string; body: StoredBody };

/** The recorded_at text every hash covers: microseconds in UTC, as PostgreSQL holds it (a JS Date would round it). */
const recordedAtTextOf = (table: string | null) =>
  sql.raw(`to_char(${table === null ? '' : `${table}.`}recorded_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`);
const recordedAtText = recordedAtTextOf(null);

/** Entries as jsonb_to_recordset rows, each body in its stored form (./evidence-body.ts; compressed bytes as base64). */
function storedRows(entries: readonly NewEvidenceEntry[]): string {
  return JSON.stringify(
    entries.map((e) => ({
      notice_key: e.noticeKey,
      job_id: e.jobId,
      kind: e.kind,
      body: e.body.text,
      body_brotli: e.body.brotli?.toString('base64') ?? null,
      body_hash: e.body.hash,
    })),
  );
}

export async function insertEvidenceEntries(db: DbOrTx, entries: readonly NewEvidenceEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.execute(sql`
    insert into evidence_entries (notice_key, job_id, kind, body, body_brotli, body_hash)
    select e.notice_key, e.job_id::uuid, e.kind, e.body, decode(e.body_brotli, 'base64'), e.body_hash
    from jsonb_to_recordset(${storedRows(entries)}::jsonb)
      as e(notice_key text, job_id text, kind text, body text, body_brotli text, body_hash text)`);
}

/**
 * A later fact about a notice (a provider event, the recipient's action, a person's resolution):
 * written when the notice keeps a record — its job's category or type is in the selection
 * (EVIDENCE_FOR), or it already has entries — and skipped otherwise. Decided in the statement,
 * so a webhook that beats the worker's own send entry is still recorded.
 */
export async function insertEvidenceForRecordedNotice(
  db: DbOrTx,
  entry: NewEvidenceEntry,
  selection: { all: boolean; categories: readonly string[]; types: readonly string[] },
): Promise<boolean> {
  const stored = entry.body;
  const result = await db.execute(sql`
    insert into evidence_entries (notice_key, job_id, kind, body, body_brotli, body_hash)
    select ${entry.noticeKey}, ${entry.jobId}::uuid, ${entry.kind}, ${stored.text}::text, ${stored.brotli}::bytea, ${stored.hash}::text
    where exists (
        select 1 from reminder_jobs j where j.notice_key = ${entry.noticeKey}
          and (${selection.all} or j.category = any(${`{${selection.categories.join(',')}}`}::text[]) or j.notice_type = any(${`{${selection.types.join(',')}}`}::text[])))
      or exists (select 1 from evidence_entries where notice_key = ${entry.noticeKey})`);
  return (result.rowCount ?? 0) > 0;
}

/** insertEvidenceForRecordedNotice for many notices in one statement (a replay batch's items); returns how many were written. */
export async function insertEvidenceForRecordedNotices(
  db: DbOrTx,
  entries: readonly NewEvidenceEntry[],
  selection: { all: boolean; categories: readonly string[]; types: readonly string[] },
): Promise<number> {
  if (entries.length === 0) return 0;
  const result = await db.execute(sql`
    insert into evidence_entries (notice_key, job_id, kind, body, body_brotli, body_hash)
    select e.notice_key, e.job_id::uuid, e.kind, e.body, decode(e.body_brotli, 'base64'), e.body_hash
    from jsonb_to_recordset(${storedRows(entries)}::jsonb)
      as e(notice_key text, job_id text, kind text, body text, body_brotli text, body_hash text)
    where exists (
        select 1 from reminder_jobs j where j.notice_key = e.notice_key
          and (${selection.all} or j.category = any(${`{${selection.categories.join(',')}}`}::text[]) or j.notice_type = any(${`{${selection.types.join(',')}}`}::text[])))
      or exists (select 1 from evidence_entries x where x.notice_key = e.notice_key)`);
  return result.rowCount ?? 0;
}

export type ChainHead = { seq: number; hash: string };

/** The head row, locked for the rest of `tx`: the one chainer at a time. */
export async function lockChainHead(tx: Tx, genesis: string): Promise<ChainHead> {
  await tx.execute(sql`insert into evidence_chain_head (id, seq, hash) values (1, 0, ${genesis}) on conflict (id) do nothing`);
  const { rows } = await tx.execute<{ seq: number; hash: string }>(sql`select seq, hash from evidence_chain_head where id = 1 for update`);
  const [row] = rows;
  if (!row) throw new Error('evidence_chain_head has no row');
  return { seq: Number(row.seq), hash: row.hash };
}

export async function readChainHead(db: DbOrTx): Promise<ChainHead | null> {
  const { rows } = await db.execute<{ seq: number; hash: string }>(sql`select seq, hash from evidence_chain_head where id = 1`);
  const [row] = rows;
  return row ? { seq: Number(row.seq), hash: row.hash } : null;
}

export type UnchainedEntry = { id: number; noticeKey: string; kind: string; recordedAt: string; bodyHash: string };

/**
 * The unchained rows in id order, each with its body's SHA-256 (of its UTF-8 bytes, as sha256Hex
 * takes a string): for a compressed body the one its writer stored beside it, for a text body
 * computed by the server. The chainer needs only the hash, and a send's body (the rendered
 * message, tens of KB) would otherwise cross to the worker to be hashed there. The verification
 * pass still hashes every body itself (lib/evidence/verify-chain.ts).
 */
export async function listUnchained(tx: Tx, { limit }: { limit: number }): Promise<UnchainedEntry[]> {
  const { rows } = await tx.execute<{ id: number; notice_key: string; kind: string; recorded_at: string; body_hash: string }>(sql`
    select id, notice_key, kind, ${recordedAtText} as recorded_at, coalesce(body_hash, encode(sha256(convert_to(body, 'UTF8')), 'hex')) as body_hash
    from evidence_entries where id in (select entry_id from evidence_unchained order by entry_id limit ${limit}) order by id`);
  return rows.map((row) => ({ id: Number(row.id), noticeKey: row.notice_key, kind: row.kind, recordedAt: row.recorded_at, bodyHash: row.body_hash }));
}

export type ChainedLink = { id: number; seq: number; prevHash: string; entryHash: string };

export async function chainEntries(tx: Tx, { links, head }: { links: readonly ChainedLink[]; head: ChainHead }): Promise<void> {
  if (links.length === 0) return;
  // Appended, and taken off the unchained list, in one statement; the unique seq and entry id refuse a second link.
  await tx.execute(sql`
    with links as (
      select * from jsonb_to_recordset(${JSON.stringify(links.map((l) => ({ id: l.id, seq: l.seq, prev_hash: l.prevHash, entry_hash: l.entryHash })))}::jsonb)
        as l(id bigint, seq bigint, prev_hash text, entry_hash text)
    ), done as (
      delete from evidence_unchained u using links l where u.entry_id = l.id
    )
    insert into evidence_chain (seq, entry_id, prev_hash, entry_hash) select seq, id, prev_hash, entry_hash from links`);
  await tx.execute(sql`update evidence_chain_head set seq = ${head.seq}, hash = ${head.hash}, updated_at = now() where id = 1`);
}

export type ChainedEntry = {
  id: number;
  seq: number;
  noticeKey: string;
  jobId: string | null;
  kind: string;
  recordedAt: string;
  body: string;
  prevHash: string;
  entryHash: string;
};

type ChainedRow = {
  id: number;
  seq: number;
  notice_key: string;
  job_id: string | null;
  kind: string;
  recorded_at: string;
  body: string | null;
  body_brotli: Buffer | null;
  prev_hash: string;
  entry_hash: string;
};

const chainedOf = (row: ChainedRow): ChainedEntry => ({
  id: Number(row.id),
  seq: Number(row.seq),
  noticeKey: row.notice_key,
  jobId: row.job_id,
  kind: row.kind,
  recordedAt: row.recorded_at,
  body: bodyText(row.body, row.body_brotli),
  prevHash: row.prev_hash,
  entryHash: row.entry_hash,
});

/** Chained entries with seq > afterSeq, in seq order: the verification pass's walk. */
export async function listChainedAfter(db: DbOrTx, { afterSeq, limit }: { afterSeq: number; limit: number }): Promise<ChainedEntry[]> {
  const { rows } = await db.execute<ChainedRow>(sql`
    select e.id, c.seq, e.notice_key, e.job_id::text, e.kind, ${recordedAtTextOf('e')} as recorded_at, e.body, e.body_brotli, c.prev_hash, c.entry_hash
    from evidence_chain c join evidence_entries e on e.id = c.entry_id where c.seq > ${afterSeq} order by c.seq limit ${limit}`);
  return rows.map(chainedOf);
}

/** A notice's entries, chained or not yet, in the order they were written. */
export async function listNoticeEntries(
  db: DbOrTx,
  { noticeKey }: { noticeKey: string },
): Promise<(Omit<ChainedEntry, 'seq' | 'prevHash' | 'entryHash'> & { seq: number | null; prevHash: string | null; entryHash: string | null })[]> {
  const { rows } = await db.execute<
    Omit<ChainedRow, 'seq' | 'prev_hash' | 'entry_hash'> & { seq: number | null; prev_hash: string | null; entry_hash: string | null }
  >(sql`
    select e.id, c.seq, e.notice_key, e.job_id::text, e.kind, ${recordedAtTextOf('e')} as recorded_at, e.body, e.body_brotli, c.prev_hash, c.entry_hash
    from evidence_entries e left join evidence_chain c on c.entry_id = e.id where e.notice_key = ${noticeKey} order by e.id`);
  return rows.map((row) => ({
    id: Number(row.id),
    seq: row.seq === null ? null : Number(row.seq),
    noticeKey: row.notice_key,
    jobId: row.job_id,
    kind: row.kind,
    recordedAt: row.recorded_at,
    body: bodyText(row.body, row.body_brotli),
    prevHash: row.prev_hash,
    entryHash: row.entry_hash,
  }));
}

/** The entry hashes of seq from … to, in order: the leaves of one signed head. */
export async function listEntryHashes(db: DbOrTx, { fromSeq, toSeq }: { fromSeq: number; toSeq: number }): Promise<{ seq: number; entryHash: string }[]> {
  const { rows } = await db.execute<{ seq: number; entry_hash: string }>(sql`
    select seq, entry_hash from evidence_chain where seq between ${fromSeq} and ${toSeq} order by seq`);
  return rows.map((row) => ({ seq: Number(row.seq), entryHash: row.entry_hash }));
}

export type SignedHead = {
  id: number;
  fromSeq: number;
  toSeq: number;
  headHash: string;
  merkleRoot: string;
  signedAt: Date;
  kid: string;
  payload: string;
  signature: string;
  timestampToken: string | null;
};

type SignedHeadRow = {
  id: number;
  from_seq: number;
  to_seq: number;
  head_hash: string;
  merkle_root: string;
  signed_at: Date;
  kid: string;
  payload: string;
  signature: string;
  timestamp_token: string | null;
};

const signedHeadOf = (row: SignedHeadRow): SignedHead => ({
  id: Number(row.id),
  fromSeq: Number(row.from_seq),
  toSeq: Number(row.to_seq),
  headHash: row.head_hash,
  merkleRoot: row.merkle_root,
  signedAt: new Date(row.signed_at),
  kid: row.kid,
  payload: row.payload,
  signature: row.signature,
  timestampToken: row.timestamp_token,
});

const signedHeadColumns = sql.raw('id, from_seq, to_seq, head_hash, merkle_root, signed_at, kid, payload, signature, timestamp_token');

export async function latestSignedHead(db: DbOrTx): Promise<SignedHead | null> {
  const { rows } = await db.execute<SignedHeadRow>(sql`select ${signedHeadColumns} from evidence_signed_heads order by to_seq desc limit 1`);
  const [row] = rows;
  return row ? signedHeadOf(row) : null;
}

/** The signed head whose range holds `seq`, if it was signed yet. */
export async function signedHeadCovering(db: DbOrTx, { seq }: { seq: number }): Promise<SignedHead | null> {
  const { rows } = await db.execute<SignedHeadRow>(sql`
    select ${signedHeadColumns} from evidence_signed_heads where from_seq <= ${seq} and to_seq >= ${seq} limit 1`);
  const [row] = rows;
  return row ? signedHeadOf(row) : null;
}

export async function listSignedHeadsAfter(db: DbOrTx, { afterToSeq, limit }: { afterToSeq: number; limit: number }): Promise<SignedHead[]> {
  const { rows } = await db.execute<SignedHeadRow>(sql`
    select ${signedHeadColumns} from evidence_signed_heads where to_seq > ${afterToSeq} order by to_seq limit ${limit}`);
  return rows.map(signedHeadOf);
}

export async function insertSignedHead(db: DbOrTx, head: Omit<SignedHead, 'id'>): Promise<void> {
  await db.execute(sql`
    insert into evidence_signed_heads (from_seq, to_seq, head_hash, merkle_root, signed_at, kid, payload, signature, timestamp_token)
    values (${head.fromSeq}, ${head.toSeq}, ${head.headHash}, ${head.merkleRoot}, ${head.signedAt.toISOString()}, ${head.kid}, ${head.payload}, ${head.signature}, ${head.timestampToken})
    on conflict (to_seq) do nothing`);
}

/**
 * Evidence retention (RETENTION_EVIDENCE_RECORD, 3 years): whole entries older than the cutoff,
 * oldest first, and only once chained and signed over (an unsigned entry is never dropped).
 */
export async function deleteEvidenceEntriesBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  const result = await db.execute(sql`
    with doomed as (
      select c.seq, c.entry_id from evidence_chain c join evidence_entries e on e.id = c.entry_id
      where e.recorded_at < ${before.toISOString()}
        and c.seq <= coalesce((select max(to_seq) from evidence_signed_heads), 0)
      order by c.seq limit ${limit}
    ), links as (
      delete from evidence_chain where seq in (select seq from doomed)
    )
    delete from evidence_entries where id in (select entry_id from doomed)`);
  return result.rowCount ?? 0;
}

/** A notice key from a reminder job id or the key itself, when the notice has a job or a record. */
export async function findEvidenceNoticeKey(db: DbOrTx, { id }: { id: string }): Promise<string | null> {
  const isKey = /^[0-9a-f]{64}$/.test(id);
  const { rows } = await db.execute<{ notice_key: string }>(
    isKey
      ? sql`select notice_key from evidence_entries where notice_key = ${id} limit 1`
      : sql`select notice_key from reminder_jobs where id = ${id}::uuid union select notice_key from evidence_entries where job_id = ${id}::uuid limit 1`,
  );
  return rows[0]?.notice_key ?? null;
}

export type NoticeEvidenceSummary = { kind: string; recordedAt: Date; seq: number | null; signedAt: Date | null };

/** A notice's entries for the lookup timeline: when each was recorded and, once signed, when its head was. */
export async function listNoticeEvidenceSummary(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<NoticeEvidenceSummary[]> {
  const { rows } = await db.execute<{ kind: string; recorded_at: Date; seq: number | null; signed_at: Date | null }>(sql`
    select e.kind, e.recorded_at, c.seq, h.signed_at
    from evidence_entries e
    left join evidence_chain c on c.entry_id = e.id
    left join evidence_signed_heads h on c.seq between h.from_seq and h.to_seq
    where e.notice_key = ${noticeKey} order by e.id limit 200`);
  return rows.map((row) => ({
    kind: row.kind,
    recordedAt: new Date(row.recorded_at),
    seq: row.seq === null ? null : Number(row.seq),
    signedAt: row.signed_at ? new Date(row.signed_at) : null,
  }));
}

/**
 * A template's static pieces for the entries that name them (lib/templates/trace.ts), stored
 * before the first of those commits; again later only to say they are still in use. `texts` is
 * the canonical JSON array their digest is of: a row that exists already keeps its own.
 */
export async function storeEvidencePieces(db: DbOrTx, { digest, texts }: { digest: string; texts: string }): Promise<void> {
  await db.execute(sql`
    insert into evidence_pieces (digest, texts) values (${digest}, ${texts})
    on conflict (digest) do update set last_used_at = now()`);
}

/** The stored pieces of these digests (canonical JSON arrays, as stored); a digest with no row is absent. */
export async function readEvidencePieces(db: DbOrTx, { digests }: { digests: readonly string[] }): Promise<Map<string, string>> {
  if (digests.length === 0) return new Map();
  const { rows } = await db.execute<{ digest: string; texts: string }>(sql`
    select digest, texts from evidence_pieces where digest in (select jsonb_array_elements_text(${JSON.stringify(digests)}::jsonb))`);
  return new Map(rows.map((row) => [row.digest, row.texts]));
}

/** Every stored pieces row, oldest first, for the verification pass (a handful per template version). */
export async function listEvidencePieces(
  db: DbOrTx,
  { afterDigest, limit }: { afterDigest: string; limit: number },
): Promise<{ digest: string; texts: string }[]> {
  const { rows } = await db.execute<{ digest: string; texts: string }>(sql`
    select digest, texts from evidence_pieces where digest > ${afterDigest} order by digest limit ${limit}`);
  return rows;
}

/** Pieces no process has used since `before`: retention, run with the entries' (lib/evidence/maintenance.ts). */
export async function deleteEvidencePiecesUnusedSince(db: DbOrTx, { before }: { before: Date }): Promise<number> {
  const result = await db.execute(sql`delete from evidence_pieces where last_used_at < ${before.toISOString()}`);
  return result.rowCount ?? 0;
}
