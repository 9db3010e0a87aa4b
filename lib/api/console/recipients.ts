import { z } from 'zod';
import { jobStates, noticeCategories, preferenceSources, recipientSuppressionReasons } from '@/db/schema/states';
import { consoleContract } from '@/lib/http/contract';
import { instant, reason, text } from '@/lib/api/fields';

/** Support's view of one recipient (by email): suppression, preferences with their history, open notices; and what support may change. */

export const recipientEmail = text().trim().toLowerCase().max(320).pipe(z.email('type the recipient’s email address'));

export const recipientQuery = z.strictObject({ email: recipientEmail });

const change = z.object({
  at: instant,
  category: z.enum(noticeCategories),
  from: z.string().nullable(),
  to: z.string(),
  source: z.enum(preferenceSources),
  actor: z.string().nullable(),
  reason: z.string().nullable(),
  /** The change in words: "Unsubscribed in one click from an email". */
  text: z.string(),
});

export const recipientView = z.object({
  email: z.string(),
  suppression: z
    .object({ reason: z.enum(recipientSuppressionReasons), text: z.string(), note: z.string().nullable(), source: z.string().nullable(), since: instant })
    .nullable(),
  preferences: z.array(
    z.object({
      category: z.enum(noticeCategories),
      channel: z.string(),
      state: z.string(),
      source: z.string().nullable(),
      changedAt: instant.nullable(),
      text: z.string(),
    }),
  ),
  history: z.array(change),
  audit: z.array(z.object({ at: instant, actor: z.string(), action: z.string(), reason: z.string().nullable(), summary: z.string() })),
  openNotices: z.array(
    z.object({
      jobId: z.uuid(),
      noticeKey: z.string(),
      noticeType: z.string(),
      category: z.enum(noticeCategories),
      state: z.enum(jobStates),
      dueAt: instant,
      deadlineAt: instant,
    }),
  ),
});
export type RecipientView = z.infer<typeof recipientView>;

export const getRecipient = consoleContract({
  method: 'GET',
  path: '/api/console/recipients',
  permission: 'lookup.read',
  input: recipientQuery,
  output: recipientView,
});

export const suppressionRequest = z.strictObject({ email: recipientEmail, action: z.enum(['add', 'remove']), reason: reason() });

export const changeSuppression = consoleContract({
  method: 'POST',
  path: '/api/console/recipients/suppression',
  permission: 'recipients.manage',
  input: suppressionRequest,
  output: z.object({ changed: z.boolean(), view: recipientView }),
});

export const preferenceRequest = z.strictObject({
  email: recipientEmail,
  category: z.literal('courtesy'),
  state: z.enum(['opted_in', 'opted_out']),
  reason: reason(),
});

export const changePreference = consoleContract({
  method: 'POST',
  path: '/api/console/recipients/preference',
  permission: 'recipients.manage',
  input: preferenceRequest,
  output: z.object({ changed: z.boolean(), view: recipientView }),
});

export const cancelNoticeRequest = z.strictObject({ jobId: z.uuid('must be a notice job id'), reason: reason() });

export const cancelNotice = consoleContract({
  method: 'POST',
  path: '/api/console/recipients/cancel',
  permission: 'recipients.manage',
  input: cancelNoticeRequest,
  output: z.object({ jobId: z.uuid(), state: z.enum(jobStates) }),
});
