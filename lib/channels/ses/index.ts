import type { Config } from '@/lib/config';
import type { EmailProvider } from '@/lib/channels/provider';
import { sesRows } from './phases';
import { createSesTransport } from './transport';

/** Amazon SES v2 (EMAIL_PROVIDER=ses). */
export const sesProvider: EmailProvider = {
  medium: 'email',
  rows: sesRows,
  create: (config: Config) =>
    createSesTransport({
      region: config.SES_REGION ?? '',
      credentials:
        config.SES_ACCESS_KEY_ID && config.SES_SECRET_ACCESS_KEY
          ? { accessKeyId: config.SES_ACCESS_KEY_ID, secretAccessKey: config.SES_SECRET_ACCESS_KEY }
          : null,
      endpoint: config.SES_ENDPOINT ?? null,
      configurationSet: config.SES_CONFIGURATION_SET ?? null,
      from: config.MAIL_FROM,
      timeoutMs: config.EMAIL_API_TIMEOUT,
    }),
  // SES resolves from its events (SNS / EventBridge), as before: no lookup.
  lookup: null,
};
