import type { Config } from '@/lib/config';
import type { EmailProvider } from '@/lib/channels/provider';
import { sendgridRows } from './phases';
import { createSendgridTransport } from './transport';
import { createSendgridLookup } from './lookup';

/** SendGrid's v3 Mail Send (EMAIL_PROVIDER=sendgrid). */
export const sendgridProvider: EmailProvider = {
  medium: 'email',
  rows: sendgridRows,
  create: (config: Config) =>
    createSendgridTransport({
      apiKey: config.SENDGRID_API_KEY ?? '',
      apiBaseUrl: config.SENDGRID_API_BASE_URL,
      from: config.MAIL_FROM,
      timeoutMs: config.EMAIL_API_TIMEOUT,
    }),
  lookup: (config: Config) =>
    createSendgridLookup({ apiKey: config.SENDGRID_API_KEY ?? '', apiBaseUrl: config.SENDGRID_API_BASE_URL, timeoutMs: config.EMAIL_API_TIMEOUT }),
};
