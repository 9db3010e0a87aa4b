import { SegmentedMessage } from 'sms-segments-calculator';
import type { JobRow } from '@/db/schema/jobs';

/**
 * THE SEAM FOR THE TEMPLATE ENGINE (issue 16). The whole SMS body comes from this one function;
 * at merge the lead replaces its inside with lib/templates' `sms` channel render of the type's
 * template. Until then: one plain line per type from the job's compact payload, no HTML, no
 * secrets beyond the one-time code's link the email carries too.
 */
export function renderSmsBody(job: Pick<JobRow, 'noticeType' | 'payload'>, links: { cancelUrl: string }): string {
  const payload = job.payload;
  const text = (name: string, fallback: string) => {
    const value = payload[name];
    return typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, 60) : typeof value === 'number' ? String(value) : fallback;
  };
  switch (job.noticeType) {
    case 'payment_recovery':
      return (
        `We could not match your payment of ${text('amount', 'an amount')} ${text('currency', '')}`.trimEnd() +
        `. Details: ${links.cancelUrl} Reply STOP to opt out.`
      );
    default:
      return `Your ${text('plan_name', 'subscription')} renews on ${text('charge_date', 'its renewal date')}. Manage: ${links.cancelUrl} Reply STOP to opt out.`;
  }
}

export type Segments = { encoding: 'GSM-7' | 'UCS-2'; segments: number; characters: number };

/** How many SMS segments the text takes (GSM-7: 160, or 153 per part; UCS-2: 70, or 67), as Twilio counts them. */
export function segmentsOf(text: string): Segments {
  const message = new SegmentedMessage(text);
  return { encoding: message.encodingName === 'GSM-7' ? 'GSM-7' : 'UCS-2', segments: message.segmentsCount, characters: message.numberOfCharacters };
}
