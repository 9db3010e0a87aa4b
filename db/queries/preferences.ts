import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { recipientPreferenceChanges, recipientPreferences, type RecipientPreferenceChangeRow, type RecipientPreferenceRow } from '@/db/schema/recipients';
import type { Channel, NoticeCategory, PreferenceSource, PreferenceState } from '@/db/schema/states';

/**
 * The preferences store: one current row per recipient × category × channel, and an append-only
 * history of every change with its source. Writers: one-click unsubscribe, the recipient page,
 * provider unsubscribe events, SMS keywords, the producer API and support (each passes its source).
 */

/** A lower-cased email address, or a phone number as given (the caller normalises it to E.164). */
export function normaliseRecipient(channel: Channel, recipient: string): string {
  const trimmed = recipient.trim();
  return channel === 'email' ? trimmed.toLowerCase() : trimmed;
}

export type PreferenceChange = {
  recipient: string;
  category: NoticeCategory;
  channel: Channel;
  state: Exclude<PreferenceState, 'required'>;
  source: PreferenceSource;
  actor?: string | null;
  reason?: string | null;
};

export type PreferenceWrite = { changed: boolean; from: PreferenceState | null; to: PreferenceState };

/**
 * Sets a courtesy preference. Idempotent: writing the state a recipient already has changes
 * nothing and records no history (a replayed unsubscribe is a no-op). A `required` category
 * cannot be opted out of: refused here, before any write.
 */
export async function setPreference(db: DbOrTx, change: PreferenceChange): Promise<PreferenceWrite> {
  if (change.category === 'required') throw new RangeError('a required notice cannot be opted out of or into');
  const recipient = normaliseRecipient(change.channel, change.recipient);
  // Lock the current row (or the absence of one, by the upsert's conflict) so two writers record one change each, in order.
  const current = await db
    .select({ state: recipientPreferences.state })
    .from(recipientPreferences)
    .where(
      and(eq(recipientPreferences.recipient, recipient), eq(recipientPreferences.category, change.category), eq(recipientPreferences.channel, change.channel)),
    )
    .for('update');
  const from = current[0]?.state ?? null;
  const effectiveFrom = from ?? 'opted_in';
  if (effectiveFrom === change.state) return { changed: false, from, to: change.state };
  const written = await db
    .insert(recipientPreferences)
    .values({ recipient, category: change.category, channel: change.channel, state: change.state, source: change.source })
    .onConflictDoUpdate({
      target: [recipientPreferences.recipient, recipientPreferences.category, recipientPreferences.channel],
      set: { state: change.state, source: change.source, changedAt: sql`now()` },
      setWhere: sql`${recipientPreferences.state} <> excluded.state`,
    })
    .returning({ state: recipientPreferences.state });
  // A concurrent writer set the same state between our read and our write: nothing changed twice.
  if (written.length === 0) return { changed: false, from, to: change.state };
  await db.insert(recipientPreferenceChanges).values({
    recipient,
    category: change.category,
    channel: change.channel,
    fromState: from,
    toState: change.state,
    source: change.source,
    actor: change.actor ?? null,
    reason: change.reason ?? null,
  });
  return { changed: true, from, to: change.state };
}

/** The state the send path applies: `required` for the required category whatever is stored, opted in when nothing is. */
export async function preferenceFor(
  db: DbOrTx,
  { recipient, category, channel }: { recipient: string; category: NoticeCategory; channel: Channel },
): Promise<PreferenceState> {
  if (category === 'required') return 'required';
  const rows = await db
    .select({ state: recipientPreferences.state })
    .from(recipientPreferences)
    .where(
      and(
        eq(recipientPreferences.recipient, normaliseRecipient(channel, recipient)),
        eq(recipientPreferences.category, category),
        eq(recipientPreferences.channel, channel),
      ),
    )
    .limit(1);
  return rows[0]?.state ?? 'opted_in';
}

export async function listPreferences(db: DbOrTx, { recipient, channel }: { recipient: string; channel: Channel }): Promise<RecipientPreferenceRow[]> {
  return db
    .select()
    .from(recipientPreferences)
    .where(and(eq(recipientPreferences.recipient, normaliseRecipient(channel, recipient)), eq(recipientPreferences.channel, channel)))
    .orderBy(asc(recipientPreferences.category));
}

/** Newest first, bounded: support reads the latest changes. */
export async function listPreferenceChanges(
  db: DbOrTx,
  { recipient, channel, limit = 100 }: { recipient: string; channel: Channel; limit?: number },
): Promise<RecipientPreferenceChangeRow[]> {
  return db
    .select()
    .from(recipientPreferenceChanges)
    .where(and(eq(recipientPreferenceChanges.recipient, normaliseRecipient(channel, recipient)), eq(recipientPreferenceChanges.channel, channel)))
    .orderBy(desc(recipientPreferenceChanges.changedAt), desc(recipientPreferenceChanges.id))
    .limit(limit);
}
