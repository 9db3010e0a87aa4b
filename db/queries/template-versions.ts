import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { templateVersions, type TemplateVersionRow } from '@/db/schema/templates';

export type NewTemplateVersion = { id: string; templateId: string; channel: 'email' | 'sms'; locale: string; content: Record<string, unknown> };

/** A version of the template files, once: the id is the content's digest, so a second insert of it changes nothing. */
export async function insertTemplateVersion(db: DbOrTx, version: NewTemplateVersion): Promise<void> {
  await db
    .insert(templateVersions)
    .values({ ...version, firstSeenAt: sql`now()` })
    .onConflictDoNothing({ target: templateVersions.id });
}

export async function findTemplateVersion(db: DbOrTx, { id }: { id: string }): Promise<TemplateVersionRow | null> {
  const [row] = await db.select().from(templateVersions).where(eq(templateVersions.id, id)).limit(1);
  return row ?? null;
}

export type SentNoticeForRerender = {
  noticeKey: string;
  ledgerState: string;
  templateVersionId: string | null;
  job: {
    id: string;
    noticeType: string;
    category: 'required' | 'courtesy';
    payload: Record<string, unknown>;
    recipientLocale: string | null;
    recipientTimeZone: string;
    anchorAt: Date | null;
    deadlineAt: Date;
  } | null;
};

/**
 * What a re-render needs of a notice, by its key or a job id: the ledger row (its state and the
 * version its send recorded) and the job that sent it (the ledger's job_id, else the key's job).
 */
export async function findSentNoticeForRerender(db: DbOrTx, { id }: { id: string }): Promise<SentNoticeForRerender | null> {
  const byKey = /^[0-9a-f]{64}$/.test(id);
  const { rows } = await db.execute<{
    notice_key: string;
    ledger_state: string;
    template_version_id: string | null;
    job_id: string | null;
    notice_type: string | null;
    category: 'required' | 'courtesy' | null;
    payload: Record<string, unknown> | null;
    recipient_locale: string | null;
    recipient_time_zone: string | null;
    anchor_at: string | null;
    deadline_at: string | null;
  }>(sql`
    select l.notice_key, l.state as ledger_state, l.template_version_id,
           j.id as job_id, j.notice_type, j.category, j.payload, j.recipient_locale, j.recipient_time_zone, j.anchor_at, j.deadline_at
    from notice_ledger l
    left join lateral (
      select * from reminder_jobs j where j.id = l.job_id or (l.job_id is null and j.notice_key = l.notice_key) order by (j.id = l.job_id) desc nulls last limit 1
    ) j on true
    where ${byKey ? sql`l.notice_key = ${id}` : sql`l.notice_key = (select notice_key from reminder_jobs where id = ${id}::uuid)`}
    limit 1`);
  const row = rows[0];
  if (!row) return null;
  return {
    noticeKey: row.notice_key,
    ledgerState: row.ledger_state,
    templateVersionId: row.template_version_id,
    job:
      row.job_id && row.notice_type && row.category && row.deadline_at
        ? {
            id: row.job_id,
            noticeType: row.notice_type,
            category: row.category,
            payload: row.payload ?? {},
            recipientLocale: row.recipient_locale,
            recipientTimeZone: row.recipient_time_zone ?? 'UTC',
            anchorAt: row.anchor_at ? new Date(row.anchor_at) : null,
            deadlineAt: new Date(row.deadline_at),
          }
        : null,
  };
}
