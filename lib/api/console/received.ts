import { z } from 'zod';
import { consoleContract } from '@/lib/http/contract';
import { instant } from '@/lib/api/fields';

/**
 * The lookup's "What the customer received" (issue 30 item 5): a sent notice rendered again from
 * the job's stored payload with the template version recorded at its send (template_versions),
 * never the files deployed now. A re-render: the one-time code and the signed links are not
 * shown, and the evidence pack holds the exact bytes. Audited `notice.rerender`.
 */
export const receivedMessageQuery = z.object({
  notice: z.union([z.uuid(), z.string().regex(/^[0-9a-f]{64}$/)], 'must be a reminder job id or a 64-hex notice key'),
});

export const receivedTemplateVersion = z.object({
  id: z.string(),
  shortId: z.string(),
  templateId: z.string(),
  channel: z.enum(['email', 'sms']),
  locale: z.string(),
  firstSeenAt: instant,
});

export const receivedMessage = z.object({
  noticeKey: z.string(),
  /** `rendered`; `unknown_version`: sent before versions were recorded (or from a backfill), nothing rendered; `render_failed`: the stored version did not render this payload. */
  status: z.enum(['rendered', 'unknown_version', 'render_failed']),
  /** One sentence for support: what this is, or why there is nothing to show. */
  message: z.string(),
  version: receivedTemplateVersion.nullable(),
  email: z.object({ subject: z.string(), html: z.string(), text: z.string(), locale: z.string() }).nullable(),
  sms: z.object({ body: z.string(), locale: z.string() }).nullable(),
});
export type ReceivedMessage = z.infer<typeof receivedMessage>;

export const receivedMessageContract = consoleContract({
  method: 'GET',
  path: '/api/console/lookup/received',
  permission: 'lookup.read',
  input: receivedMessageQuery,
  output: receivedMessage,
});
