import type { Config } from '@/lib/config';
import type { EmailTransport } from '@/lib/mail/transport';
import type { PhaseRow, TransportName } from '@/lib/transport/phases';
import { postmarkProvider } from './postmark';
import type { EmailProvider, SmsProvider } from './provider';
import type { AcceptedLookup } from './types';
import { sendgridProvider } from './sendgrid';
import { sesProvider } from './ses';
import { smtpProvider } from './smtp';
import { twilioProvider } from './twilio';

/**
 * Every transport, one line each (ARCHITECTURE.md "Adding a provider"): its folder holds its
 * send, its classification rows and its correlation. Keyed by TransportName, so a name without
 * a line (or a line without a name) does not compile.
 */
export const transports = {
  smtp: smtpProvider,
  postmark: postmarkProvider,
  ses: sesProvider,
  sendgrid: sendgridProvider,
  twilio: twilioProvider,
} satisfies Record<TransportName, EmailProvider | SmsProvider>;

/** The email transport EMAIL_PROVIDER names. */
export function createEmailTransport(config: Config, options: { maxConnections: number }): EmailTransport {
  return transports[config.EMAIL_PROVIDER].create(config, options);
}

/** How the provider reconciler asks EMAIL_PROVIDER what it accepted; null where it cannot be asked (SMTP, SES). */
export function createAcceptedLookup(config: Config): AcceptedLookup | null {
  return transports[config.EMAIL_PROVIDER].lookup?.(config) ?? null;
}

/** The phase rows of the HTTP email providers, in registry order (ARCHITECTURE.md shows them). */
export function httpProviderRows(): PhaseRow[] {
  return [transports.postmark, transports.ses, transports.sendgrid].flatMap((provider) => provider.rows);
}
