import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import type { ProviderLookupOutcome } from '@/db/schema/provider-lookups';
import { toDate } from '@/db/queries/console-dates';

/**
 * The provider reconciler's statements (lib/ledger/provider-reconcile.ts): which claims to ask
 * the provider about, what it heard, and forgetting claims that are settled. Every read starts
 * from `state = 'claimed'` (the partial notice_ledger_claimed_idx), so it costs the claims in
 * flight, not the ledger's size.
 */

export type ReconcileCandidate = {
  noticeKey: string;
  claimedAt: Date;
  recipient: string;
  /** The claim is older than the give-up age: a "not found" now leaves it to a person. */
  pastGiveUp: boolean;
  checks: number;
};

/**
 * Email claims still `claimed` at least `afterMs` after the claim, not yet given up on, the ones
 * asked longest ago (or never) first. Only email jobs with an address: what Postmark and SendGrid
 * can be asked about.
 */
export async function listReconcileCandidates(
  db: DbOrTx,
  { afterMs, giveUpMs, limit }: { afterMs: number; giveUpMs: number; limit: number },
): Promise<ReconcileCandidate[]> {
  const result = await db.execute<{ noticeKey: string; claimedAt: unknown; recipient: string; pastGiveUp: boolean; checks: number | null }>(sql`
    select l.notice_key as "noticeKey", l.claimed_at as "claimedAt", j.recipient_email as recipient,
      l.claimed_at < now() - make_interval(secs => ${giveUpMs / 1000}) as "pastGiveUp", p.checks
    from notice_ledger l
    join reminder_jobs j on j.notice_key = l.notice_key
    -- A lookup row older than the claim is about an earlier claim of the key (released, claimed again): ignored.
    left join provider_lookups p on p.notice_key = l.notice_key and p.first_checked_at >= l.claimed_at
    where l.state = 'claimed' and l.claimed_at < now() - make_interval(secs => ${afterMs / 1000})
      and j.channel = 'email' and j.recipient_email is not null
      and (p.outcome is null or p.outcome in ('not_found', 'lookup_failed'))
    order by p.last_checked_at nulls first, l.claimed_at, l.notice_key
    limit ${limit}`);
  return result.rows.map((row) => ({ ...row, claimedAt: toDate(row.claimedAt), checks: row.checks ?? 0 }));
}

/**
 * What one lookup heard about the claim made at `claimedAt`, counted; the first check's time stays.
 * A row left from an earlier claim of the key (first checked before this claim) starts over.
 */
export async function recordProviderLookup(
  db: DbOrTx,
  {
    noticeKey,
    claimedAt,
    provider,
    outcome,
    detail,
  }: { noticeKey: string; claimedAt: Date; provider: string; outcome: ProviderLookupOutcome; detail: string | null },
): Promise<void> {
  await db.execute(sql`
    insert into provider_lookups (notice_key, provider, outcome, detail) values (${noticeKey}, ${provider}, ${outcome}, ${detail})
    on conflict (notice_key) do update set provider = excluded.provider, outcome = excluded.outcome, detail = excluded.detail,
      checks = case when provider_lookups.first_checked_at < ${claimedAt.toISOString()}::timestamptz then 1 else provider_lookups.checks + 1 end,
      first_checked_at = case when provider_lookups.first_checked_at < ${claimedAt.toISOString()}::timestamptz then now() else provider_lookups.first_checked_at end,
      last_checked_at = now()`);
}

/** Forgets lookups of claims that are no longer `claimed` (sent, released, suppressed, claimed again, or gone with retention): the table stays the size of the quarantine. */
export async function pruneProviderLookups(db: DbOrTx): Promise<number> {
  const result = await db.execute(sql`
    delete from provider_lookups p
    where not exists (
      select 1 from notice_ledger l where l.notice_key = p.notice_key and l.state = 'claimed' and l.claimed_at <= p.first_checked_at)`);
  return result.rowCount ?? 0;
}

export async function tryLockProviderReconciler(db: DbOrTx, lockKey: number): Promise<boolean> {
  const result = await db.execute<{ locked: boolean }>(sql`select pg_try_advisory_xact_lock(${lockKey}) as locked`);
  return result.rows[0]?.locked === true;
}
