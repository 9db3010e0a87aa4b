import type { Channel } from '@/db/schema/states';
import type { NoticeType } from './load-config';

/** The addresses a producer gave for the recipient (the phone already normalised to E.164). */
export type RecipientAddresses = { email: string | null; phone: string | null };

/**
 * The channel a notice goes by: the first of its type's channels (`channel`, then
 * `fallbackChannel`) on which the recipient has an address. Decided once, at scheduling, and
 * stored on the job; never an input of the notice key (see ARCHITECTURE.md "Channels").
 */
export function chooseChannel(type: Pick<NoticeType, 'channels'>, recipient: RecipientAddresses): Channel | null {
  for (const channel of type.channels) {
    if (channel === 'email' && recipient.email) return 'email';
    if (channel === 'sms' && recipient.phone) return 'sms';
  }
  return null;
}

/** The recipient's address on the job's channel: what preferences and suppressions are keyed by. */
export function recipientAddress(job: { channel: Channel; recipientEmail: string | null; recipientPhone: string | null }): string {
  return job.channel === 'sms' ? (job.recipientPhone ?? '') : (job.recipientEmail ?? '');
}
