import { z } from 'zod';
import { consoleContract } from '@/lib/http/contract';

/** The Templates page: "send a test" of one template × locale's sample rendering to an address. */

export const sendTestRequest = z.strictObject({
  template: z.string().min(1).max(100),
  locale: z.string().min(2).max(35),
  /** Checked by the service (422 for one that is not an address), so the refusal names it in words. */
  to: z.string().max(320),
});

export const sendTestOutcome = z.object({ template: z.string(), locale: z.string(), domain: z.string(), subject: z.string() });
export type SendTestOutcome = z.infer<typeof sendTestOutcome>;

export const sendTestContract = consoleContract({
  method: 'POST',
  path: '/api/console/templates/test',
  permission: 'templates.test',
  input: sendTestRequest,
  output: sendTestOutcome,
});
