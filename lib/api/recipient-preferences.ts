import { z } from 'zod';
import { channels, noticeCategories, recipientSuppressionReasons } from '@/db/schema/states';
import { producerContract } from '@/lib/http/contract';
import { instant, text } from './fields';

/**
 * The producer API for a recipient's consent: `PUT /api/v1/recipients/{email}/preferences` sets
 * courtesy preferences (source `producer_api`, actor the API token), `GET` reads them with the
 * address's suppression. Idempotent: a PUT of what is stored changes nothing and says so.
 * README "For producers" documents both.
 */

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The address as the path carries it (`%40` or `@`), lower-cased. */
export const recipientEmailParam = z
  .string()
  .max(400)
  .transform((text) => decoded(text).trim().toLowerCase())
  .pipe(z.email('must be an email address').max(320));

export const preferencesParams = z.strictObject({ email: recipientEmailParam });

export const preferenceChange = z.strictObject({
  category: z.enum(noticeCategories),
  channel: z.enum(channels),
  state: z.enum(['opted_in', 'opted_out']),
});

export const putPreferencesBody = z.strictObject({
  preferences: z.array(preferenceChange).min(1, 'give at least one preference').max(10),
  /** Why, in the producer's words; kept in the preference history. */
  reason: text().trim().min(1).max(500).optional(),
});

export const preferenceView = z.object({
  category: z.enum(noticeCategories),
  channel: z.enum(channels),
  state: z.enum(['opted_in', 'opted_out', 'required']),
  /** Who set it; null for a default (nothing stored: opted in; the required category: always required). */
  source: z.string().nullable(),
  changedAt: instant.nullable(),
});

export const preferencesAnswer = z.object({
  recipient: z.string(),
  preferences: z.array(preferenceView),
  /** The address is on the suppression list: hard bounce and complaint stop every notice, required ones too. */
  suppression: z.object({ reason: z.enum(recipientSuppressionReasons), since: instant }).nullable(),
});

export const putRecipientPreferences = producerContract({
  method: 'PUT',
  path: '/api/v1/recipients/{email}/preferences',
  scope: 'preferences:write',
  params: preferencesParams,
  body: putPreferencesBody,
  output: preferencesAnswer.extend({ changed: z.number().int().nonnegative() }),
});

export const getRecipientPreferences = producerContract({
  method: 'GET',
  path: '/api/v1/recipients/{email}/preferences',
  scope: 'notices:read',
  params: preferencesParams,
  body: z.strictObject({}),
  bodyOptional: true,
  output: preferencesAnswer,
});

export const recipientPreferenceRoutes = [putRecipientPreferences, getRecipientPreferences] as const;
