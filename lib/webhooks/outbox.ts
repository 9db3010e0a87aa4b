import { createHash } from 'node:crypto';
import type { DbOrTx } from '@/db/client';
import { normaliseRecipient, setPreference, type PreferenceChange, type PreferenceWrite } from '@/db/queries/preferences';
import { insertJobEvents, insertNoticeEvents, insertSubjectEvent } from '@/db/queries/webhooks';
import type { WebhookEventType } from './events';
import { subscribedTo } from './subscriptions';

/**
 * The outbox's front door: call inside the transaction of the state change the event reports.
 * Without an enabled endpoint subscribing to the type (the cached set), it runs nothing.
 */
export async function recordJobEvent(
  tx: DbOrTx,
  { type, jobId, extra }: { type: WebhookEventType; jobId: string; extra: Record<string, unknown> },
): Promise<void> {
  if (!(await subscribedTo(tx, type))) return;
  await insertJobEvents(tx, { type, jobIds: [jobId], extra });
}

export async function recordNoticeEvent(
  tx: DbOrTx,
  { type, noticeKey, extra }: { type: WebhookEventType; noticeKey: string; extra: Record<string, unknown> },
): Promise<void> {
  if (!(await subscribedTo(tx, type))) return;
  await insertNoticeEvents(tx, { type, noticeKeys: [noticeKey], extra });
}

/** One event per notice of `noticeKeys` (an operator's bulk resolution), in the caller's transaction. */
export async function recordNoticeEvents(
  tx: DbOrTx,
  { type, noticeKeys, extra }: { type: WebhookEventType; noticeKeys: readonly string[]; extra: Record<string, unknown> },
): Promise<void> {
  if (noticeKeys.length === 0 || !(await subscribedTo(tx, type))) return;
  await insertNoticeEvents(tx, { type, noticeKeys, extra });
}

export async function recordSubjectEvent(
  tx: DbOrTx,
  event: { type: WebhookEventType; subject: string; jobId: string | null; payload: Record<string, unknown> },
): Promise<void> {
  if (!(await subscribedTo(tx, event.type))) return;
  await insertSubjectEvent(tx, event);
}

/**
 * `compliance_gap.opened`: a required notice an event called for that could not be planned. One
 * event per gap, sequenced per business event (`event:<id>`), in the event's own transaction.
 */
export async function recordComplianceGapsOpened(
  tx: DbOrTx,
  {
    event,
    gaps,
  }: {
    event: { id: string; type: string; identity: Record<string, string>; revision: number };
    gaps: readonly {
      id: number;
      noticeType: string;
      category: string;
      reason: string;
      ruleIds: string[];
      ruleSetVersion: string;
      region: string;
      resolvedAt: Date | null;
    }[];
  },
): Promise<void> {
  const open = gaps.filter((gap) => gap.category === 'required' && gap.resolvedAt === null);
  if (open.length === 0 || !(await subscribedTo(tx, 'compliance_gap.opened'))) return;
  for (const gap of open)
    await insertSubjectEvent(tx, {
      type: 'compliance_gap.opened',
      subject: `event:${event.id}`,
      jobId: null,
      payload: {
        gapId: gap.id,
        eventId: event.id,
        eventType: event.type,
        identity: event.identity,
        revision: event.revision,
        noticeType: gap.noticeType,
        reason: gap.reason,
        ruleIds: gap.ruleIds,
        ruleSetVersion: gap.ruleSetVersion,
        region: gap.region,
      },
    });
}

/**
 * `preference.changed`: a recipient's courtesy preference moved (unsubscribe, opt back in), from
 * any writer. Sequenced per recipient and channel under a digest of the address (the subject is a
 * key, not data); the payload holds the address the producer gave us and the ledger's words.
 */
export async function recordPreferenceChanged(
  tx: DbOrTx,
  change: { recipient: string; category: string; channel: string; from: string | null; to: string; source: string },
): Promise<void> {
  if (!(await subscribedTo(tx, 'preference.changed'))) return;
  const address = normaliseRecipient(change.channel === 'sms' ? 'sms' : 'email', change.recipient);
  await insertSubjectEvent(tx, {
    type: 'preference.changed',
    subject: `recipient:${createHash('sha256').update(`${change.channel}:${address}`).digest('hex').slice(0, 32)}`,
    jobId: null,
    payload: {
      recipient: { channel: change.channel, address },
      category: change.category,
      from: change.from ?? 'opted_in',
      to: change.to,
      source: change.source,
    },
  });
}

/** setPreference and, when it changed something, its `preference.changed` event, in the caller's transaction. */
export async function setPreferenceReported(tx: DbOrTx, change: PreferenceChange): Promise<PreferenceWrite> {
  const written = await setPreference(tx, change);
  if (written.changed)
    await recordPreferenceChanged(tx, {
      recipient: change.recipient,
      category: change.category,
      channel: change.channel,
      from: written.from,
      to: written.to,
      source: change.source,
    });
  return written;
}
