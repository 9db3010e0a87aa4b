import { config } from '@/lib/config';
import { sendTestContract } from '@/lib/api/console/templates';
import { sendTestNotice } from '@/lib/console/templates';
import { consoleRoute } from '@/lib/http/console-route';
import { createMailTransport } from '@/lib/mail/transport';
import { activeNoticeConfig } from '@/lib/windows/active';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(sendTestContract, async ({ db, input, actor }) => {
  const settings = config();
  return sendTestNotice(db, {
    ...input,
    actor,
    config: activeNoticeConfig().config,
    mail: () =>
      createMailTransport({
        smtpUrl: settings.SMTP_URL,
        timeoutMs: settings.SMTP_TIMEOUT,
        from: settings.MAIL_FROM,
        messageIdDomain: settings.MESSAGE_ID_DOMAIN,
        maxConnections: 1,
      }),
  });
});
