import type { Config } from '@/lib/config';
import { createMailTransport } from '@/lib/mail/transport';
import { phaseTable } from '@/lib/transport/phases';
import type { EmailProvider } from '@/lib/channels/provider';

/** SMTP (lib/mail): nodemailer's MIME build over the pooled relay connection, classified by phase. */
export const smtpProvider: EmailProvider = {
  medium: 'email',
  rows: phaseTable.filter((row) => row.transport === 'smtp'),
  create: (config: Config, { maxConnections }) =>
    createMailTransport({
      smtpUrl: config.SMTP_URL,
      timeoutMs: config.SMTP_TIMEOUT,
      sendDeadlineMs: config.SMTP_SEND_DEADLINE,
      from: config.MAIL_FROM,
      messageIdDomain: config.MESSAGE_ID_DOMAIN,
      maxConnections,
    }),
  // A relay keeps no log we can search: an unknown SMTP send is a person's decision, helped by its events.
  lookup: null,
};
