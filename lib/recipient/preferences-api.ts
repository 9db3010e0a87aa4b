import type { z } from 'zod';
import type { Db, DbOrTx } from '@/db/client';
import { listPreferences } from '@/db/queries/preferences';
import { setPreferenceReported } from '@/lib/webhooks/outbox';
import { findRecipientSuppression } from '@/db/queries/suppressions';
import type { preferencesAnswer, putPreferencesBody } from '@/lib/api/recipient-preferences';
import { ok, refuse, type Result } from '@/lib/http/refusal';

type Answer = z.input<typeof preferencesAnswer>;

/** Every category by email, stored or default, and the address's suppression. */
export async function readRecipientPreferences(db: DbOrTx, { email }: { email: string }): Promise<Answer> {
  const [stored, suppression] = await Promise.all([listPreferences(db, { recipient: email, channel: 'email' }), findRecipientSuppression(db, { email })]);
  const courtesy = stored.find((row) => row.category === 'courtesy');
  return {
    recipient: email,
    preferences: [
      {
        category: 'courtesy',
        channel: 'email',
        state: courtesy?.state ?? 'opted_in',
        source: courtesy?.source ?? null,
        changedAt: courtesy?.changedAt.toISOString() ?? null,
      },
      { category: 'required', channel: 'email', state: 'required', source: null, changedAt: null },
    ],
    suppression: suppression ? { reason: suppression.reason, since: suppression.createdAt.toISOString() } : null,
  };
}

/**
 * Sets the producer's preferences in one transaction. Refused whole (422, nothing written) when
 * any entry asks for the required category (a notice the law calls for cannot be opted out of or
 * into) or a channel the path's address cannot have (an email address has no SMS preference).
 */
export async function putRecipientPreferences(
  db: Db,
  { email, body, actor }: { email: string; body: z.output<typeof putPreferencesBody>; actor: string },
): Promise<Result<Answer & { changed: number }>> {
  const required = body.preferences.findIndex((entry) => entry.category === 'required');
  if (required >= 0) {
    return refuse('unprocessable', `preferences.${required}.category: a required notice cannot be opted out of or into; only "courtesy" can be set`, {
      code: 'required_category',
      details: [{ path: `preferences.${required}.category`, message: 'a required notice cannot be opted out of or into' }],
    });
  }
  const wrongChannel = body.preferences.findIndex((entry) => entry.channel !== 'email');
  if (wrongChannel >= 0) {
    return refuse('unprocessable', `preferences.${wrongChannel}.channel: an email address has email preferences only`, {
      code: 'channel_mismatch',
      details: [{ path: `preferences.${wrongChannel}.channel`, message: 'an email address has email preferences only' }],
    });
  }
  const seen = new Map<string, string>();
  for (const entry of body.preferences) {
    const key = `${entry.category}:${entry.channel}`;
    if (seen.has(key) && seen.get(key) !== entry.state) {
      return refuse('unprocessable', `preferences: ${entry.category} by ${entry.channel} is given two different states`, { code: 'conflicting_preferences' });
    }
    seen.set(key, entry.state);
  }
  return db.transaction(async (tx) => {
    let changed = 0;
    for (const entry of body.preferences) {
      const written = await setPreferenceReported(tx, {
        recipient: email,
        category: 'courtesy',
        channel: 'email',
        state: entry.state,
        source: 'producer_api',
        actor,
        reason: body.reason ?? null,
      });
      if (written.changed) changed += 1;
    }
    return ok({ ...(await readRecipientPreferences(tx, { email })), changed });
  });
}
