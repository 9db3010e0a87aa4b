import 'server-only';
import type { Db, DbOrTx } from '@/db/client';
import { insertAuditEntries, listAuditForTargets } from '@/db/queries/audit';
import { listPreferenceChanges, listPreferences } from '@/db/queries/preferences';
import { setPreferenceReported } from '@/lib/webhooks/outbox';
import { listOpenNoticesFor } from '@/db/queries/recipient-notices';
import {
  addRecipientSuppression,
  findRecipientSuppression,
  lockRecipientSuppression,
  removeRecipientSuppression,
  type RecipientSuppression,
} from '@/db/queries/suppressions';
import type { RecipientView } from '@/lib/api/console/recipients';
import { can } from '@/lib/auth/permissions';
import type { Role } from '@/lib/auth/roles';
import { cancelReminder } from '@/lib/planning/cancel-notice';
import { ok, refuse, type Result } from '@/lib/http/refusal';
import { preferenceChangeText, preferenceStateText, recipientSuppressionText } from './words';

/**
 * Support's tools for one recipient. Every change is one transaction with its audit row
 * (target `recipient`, the address; before and after), as quarantine resolution does.
 * Removing a suppression does not opt anyone in or out: it only lets mail to the address be
 * tried again (a preference is a separate fact). Cancelling a pending notice goes through the
 * producer's cancel (cancelReminder): the job row is locked, and a claimed one is refused with
 * "the notice may already be on its way".
 */

export const RECIPIENT_TARGET = 'recipient';

function summarize(state: Record<string, unknown> | null): string {
  if (!state) return '—';
  return Object.entries(state)
    .map(([key, value]) => `${key}=${value === null || value === undefined ? '—' : String(value)}`)
    .join(', ');
}

function suppressionState(row: RecipientSuppression | null): Record<string, unknown> {
  return row ? { suppressed: true, reason: row.reason, note: row.note, since: row.createdAt.toISOString() } : { suppressed: false };
}

export async function loadRecipientView(db: DbOrTx, { email }: { email: string }): Promise<RecipientView> {
  const [suppression, stored, history, audit, open] = await Promise.all([
    findRecipientSuppression(db, { email }),
    listPreferences(db, { recipient: email, channel: 'email' }),
    listPreferenceChanges(db, { recipient: email, channel: 'email', limit: 100 }),
    listAuditForTargets(db, { targetIds: [email] }),
    listOpenNoticesFor(db, { email }),
  ]);
  const courtesy = stored.find((row) => row.category === 'courtesy');
  const courtesyState = courtesy?.state ?? 'opted_in';
  return {
    email,
    suppression: suppression
      ? {
          reason: suppression.reason,
          text: recipientSuppressionText[suppression.reason] ?? suppression.reason,
          note: suppression.note,
          source: suppression.sourceEventId,
          since: suppression.createdAt.toISOString(),
        }
      : null,
    preferences: [
      {
        category: 'courtesy',
        channel: 'email',
        state: courtesyState,
        source: courtesy?.source ?? null,
        changedAt: courtesy?.changedAt.toISOString() ?? null,
        text: preferenceStateText[courtesyState] ?? courtesyState,
      },
      { category: 'required', channel: 'email', state: 'required', source: null, changedAt: null, text: preferenceStateText.required ?? 'required' },
    ],
    history: history.map((row) => ({
      at: row.changedAt.toISOString(),
      category: row.category,
      from: row.fromState,
      to: row.toState,
      source: row.source,
      actor: row.actor,
      reason: row.reason,
      text: preferenceChangeText({ to: row.toState, source: row.source, category: row.category }),
    })),
    audit: audit
      .filter((row) => row.targetType === RECIPIENT_TARGET)
      .reverse()
      .map((row) => ({
        at: row.at.toISOString(),
        actor: row.actor,
        action: row.action,
        reason: row.reason,
        summary: `${summarize(row.before)} → ${summarize(row.after)}`,
      })),
    openNotices: open.map((job) => ({
      jobId: job.id,
      noticeKey: job.noticeKey,
      noticeType: job.noticeType,
      category: job.category,
      state: job.state,
      dueAt: job.dueAt.toISOString(),
      deadlineAt: job.deadlineAt.toISOString(),
    })),
  };
}

/** What the provider reported: lifting one needs `recipients.unsuppress_reported` (operator and above). */
const reportedReasons: readonly string[] = ['complaint', 'hard_bounce'];

/**
 * Adds the address as `manual` (stops every notice, required ones too) or removes whatever entry
 * it has; a complaint or hard bounce only for a role that may (403 otherwise, nothing changed).
 */
export async function changeRecipientSuppression(
  db: Db,
  { email, action, reason, actor, role }: { email: string; action: 'add' | 'remove'; reason: string; actor: string; role: Role },
): Promise<Result<{ changed: boolean; view: RecipientView }>> {
  const changed = await db.transaction(async (tx): Promise<Result<boolean>> => {
    const before = await lockRecipientSuppression(tx, { email });
    if (action === 'add' && before) return ok(false);
    if (action === 'remove' && !before) return ok(false);
    if (action === 'remove' && before && reportedReasons.includes(before.reason) && !can(role, 'recipients.unsuppress_reported'))
      return refuse(
        'forbidden',
        `The provider reported this address (${before.reason.replace('_', ' ')}): only an operator, manager or admin may lift it, with a reason. Ask one; nothing was changed.`,
      );
    if (action === 'add') await addRecipientSuppression(tx, { email, reason: 'manual', sourceEventId: null, note: `support: ${reason}` });
    else await removeRecipientSuppression(tx, { email });
    const after = await lockRecipientSuppression(tx, { email });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: `recipient.suppression_${action}`,
          targetType: RECIPIENT_TARGET,
          targetId: email,
          reason,
          before: suppressionState(before),
          after: suppressionState(after),
        },
      ],
    });
    return ok(true);
  });
  if (!changed.ok) return changed;
  return ok({ changed: changed.data, view: await loadRecipientView(db, { email }) });
}

export async function changeRecipientPreference(
  db: Db,
  { email, state, reason, actor }: { email: string; state: 'opted_in' | 'opted_out'; reason: string; actor: string },
): Promise<{ changed: boolean; view: RecipientView }> {
  const changed = await db.transaction(async (tx) => {
    const written = await setPreferenceReported(tx, { recipient: email, category: 'courtesy', channel: 'email', state, source: 'support', actor, reason });
    if (!written.changed) return false;
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: 'recipient.preference_set',
          targetType: RECIPIENT_TARGET,
          targetId: email,
          reason,
          before: { category: 'courtesy', channel: 'email', state: written.from ?? 'opted_in' },
          after: { category: 'courtesy', channel: 'email', state: written.to },
        },
      ],
    });
    return true;
  });
  return { changed, view: await loadRecipientView(db, { email }) };
}

/** Support cancels a pending notice: the producer's cancel, audited as the person (reminder.cancel on the job). */
export async function cancelNoticeForSupport(
  db: Db,
  { jobId, reason, actor, now }: { jobId: string; reason: string; actor: string; now: Date },
): Promise<Result<{ jobId: string; state: RecipientView['openNotices'][number]['state'] }>> {
  const result = await cancelReminder({ db, id: jobId, actor, reason, now });
  if (result.kind === 'not_found') return refuse('not_found', 'No such notice.');
  if (result.kind === 'conflict') {
    const message =
      result.job.state === 'claimed'
        ? 'A worker has claimed this notice: the notice may already be on its way, so it can no longer be cancelled.'
        : `The notice is ${result.job.state}; only a pending notice can be cancelled.`;
    return refuse('conflict', message);
  }
  return ok({ jobId: result.job.id, state: result.job.state });
}
