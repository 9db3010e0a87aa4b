import type { Config } from '@/lib/config';
import type { EmailProvider } from '@/lib/channels/provider';
import { postmarkRows } from './phases';
import { createPostmarkTransport } from './transport';
import { createPostmarkLookup } from './lookup';

/** Postmark's Email API (EMAIL_PROVIDER=postmark). */
export const postmarkProvider: EmailProvider = {
  medium: 'email',
  rows: postmarkRows,
  create: (config: Config) =>
    createPostmarkTransport({
      serverToken: config.POSTMARK_SERVER_TOKEN ?? '',
      apiBaseUrl: config.POSTMARK_API_BASE_URL,
      messageStream: config.POSTMARK_MESSAGE_STREAM,
      from: config.MAIL_FROM,
      timeoutMs: config.EMAIL_API_TIMEOUT,
    }),
  lookup: (config: Config) =>
    createPostmarkLookup({
      serverToken: config.POSTMARK_SERVER_TOKEN ?? '',
      apiBaseUrl: config.POSTMARK_API_BASE_URL,
      messageStream: config.POSTMARK_MESSAGE_STREAM,
      timeoutMs: config.EMAIL_API_TIMEOUT,
    }),
};
