import type { DbOrTx } from '@/db/client';
import { backfillSentJobs, existingNoticeKeys, insertBackfilledSent, type BackfillRow } from '@/db/queries/ledger/backfill';
import { recipientDomain } from '@/lib/jobs/rate-limit';
import { noticeKey } from './notice-key';
import { allIdentityFields, identityFieldsOf, InvalidNoticeError, parseNoticeFact } from '@/lib/windows/notice-fact';

/**
 * Backfill writes `sent` ledger rows (source `backfill`) for notices that went out before
 * enforcement started, so the first enforced run does not treat them as new. Both sources
 * are idempotent: an existing row is never overwritten, whatever its state.
 */

export type BackfillProblem = { line: number; message: string };

export type BackfillReport = {
  total: number;
  inserted: number;
  existing: number;
  invalid: BackfillProblem[];
  dryRun: boolean;
};

/** Parses one CSV line; ids never contain commas or quotes (a configured identity's `id` forbids them, lib/windows/identity.ts). */
function splitLine(line: string): string[] {
  return line.split(',').map((cell) => cell.trim());
}

export type ParsedCsv = { rows: Array<BackfillRow & { line: number }>; invalid: BackfillProblem[] };

/**
 * CSV with a header row: notice_type, revision, sent_at, the identity columns of the types
 * used (subscription_id, period_start, account_id, …), optional provider_message_id and
 * recipient_email. Every row is validated; the key is derived exactly as the worker does.
 */
export function parseBackfillCsv({ text, secret, now = new Date() }: { text: string; secret: string; now?: Date }): ParsedCsv {
  const lines = text.split(/\r?\n/);
  const header = splitLine(lines[0] ?? '');
  const invalid: BackfillProblem[] = [];
  const rows: ParsedCsv['rows'] = [];
  // The identity columns are every configured type's (NOTICE_CONFIG), read when a file is parsed.
  const identityColumns = allIdentityFields();
  const knownColumns = new Set(['notice_type', 'revision', 'sent_at', 'provider_message_id', 'recipient_email', ...identityColumns]);
  const unknown = header.filter((name) => !knownColumns.has(name));
  if (unknown.length > 0 || !header.includes('notice_type') || !header.includes('sent_at')) {
    return { rows, invalid: [{ line: 1, message: `header must name notice_type, sent_at and identity columns; unknown: ${unknown.join(' ') || 'none'}` }] };
  }
  const seen = new Set<string>();
  for (let index = 1; index < lines.length; index += 1) {
    const raw = lines[index] ?? '';
    if (raw.trim() === '') continue;
    const lineNo = index + 1;
    if (/["]/.test(raw)) {
      invalid.push({ line: lineNo, message: 'quoted fields are not supported' });
      continue;
    }
    // PostgreSQL text cannot hold NUL: refused with the rest of the file, before any write.
    if (raw.includes('\0')) {
      invalid.push({ line: lineNo, message: 'NUL characters are not allowed' });
      continue;
    }
    const cells = splitLine(raw);
    if (cells.length !== header.length) {
      invalid.push({ line: lineNo, message: `expected ${header.length} fields, found ${cells.length}` });
      continue;
    }
    const record = Object.fromEntries(header.map((name, i) => [name, cells[i] ?? '']));
    try {
      const type = record.notice_type ?? '';
      const fields = identityFieldsOf(type);
      const stray = identityColumns.filter((name) => !fields.includes(name) && (record[name] ?? '') !== '');
      if (fields.length > 0 && stray.length > 0) throw new InvalidNoticeError(`${stray.join(', ')} not part of ${type}'s identity`);
      const identity = Object.fromEntries(fields.filter((name) => (record[name] ?? '') !== '').map((name) => [name, record[name] ?? '']));
      const revisionText = record.revision ?? '';
      const fact = parseNoticeFact({ type, identity, revision: revisionText === '' ? 0 : Number(revisionText) });
      const sentAt = new Date(record.sent_at ?? '');
      if (!/^\d{4}-\d{2}-\d{2}T/.test(record.sent_at ?? '') || Number.isNaN(sentAt.getTime()))
        throw new InvalidNoticeError('sent_at must be an ISO 8601 timestamp');
      if (sentAt > now) throw new InvalidNoticeError('sent_at is in the future');
      const key = noticeKey(secret, fact);
      if (seen.has(key)) throw new InvalidNoticeError('the same notice appears twice in this file');
      seen.add(key);
      const email = record.recipient_email ?? '';
      rows.push({
        line: lineNo,
        noticeKey: key,
        noticeType: fact.type,
        identity: fact.identity,
        revision: fact.revision,
        jobId: null,
        sentAt,
        providerMessageId: (record.provider_message_id ?? '') === '' ? null : (record.provider_message_id ?? '').slice(0, 200),
        recipientDomain: email === '' ? null : recipientDomain(email),
      });
    } catch (error) {
      if (!(error instanceof InvalidNoticeError)) throw error;
      invalid.push({ line: lineNo, message: error.message });
    }
  }
  return { rows, invalid };
}

/** Validates the whole file first; with any invalid row nothing is written. */
export async function backfillFromCsv({
  db,
  text,
  secret,
  dryRun = false,
  batchSize = 500,
}: {
  db: DbOrTx;
  text: string;
  secret: string;
  dryRun?: boolean;
  batchSize?: number;
}): Promise<BackfillReport> {
  const parsed = parseBackfillCsv({ text, secret });
  const total = parsed.rows.length + parsed.invalid.length;
  if (parsed.invalid.length > 0) return { total, inserted: 0, existing: 0, invalid: parsed.invalid, dryRun };
  let inserted = 0;
  let existing = 0;
  for (let start = 0; start < parsed.rows.length; start += batchSize) {
    const batch = parsed.rows.slice(start, start + batchSize).map(({ line: _line, ...row }) => row);
    if (dryRun) {
      const present = await existingNoticeKeys(db, { keys: batch.map((row) => row.noticeKey) });
      existing += present.size;
      continue;
    }
    const written = await insertBackfilledSent(db, { rows: batch });
    inserted += written.length;
    existing += batch.length - written.length;
  }
  return { total, inserted, existing, invalid: [], dryRun };
}

export async function backfillFromJobs({ db, dryRun = false, limit }: { db: DbOrTx; dryRun?: boolean; limit?: number }): Promise<BackfillReport> {
  const result = await backfillSentJobs(db, { dryRun, limit });
  // total: every sent job looked at, new (candidates) and already in the ledger (existing), as the CSV source counts them.
  return { total: result.candidates + result.existing, inserted: result.inserted, existing: result.existing, invalid: [], dryRun };
}
