import { getDb } from '@/lib/process-db';
import { config } from '@/lib/config';
import { sendTestContract } from '@/lib/api/console/templates';
import { sendTestNotice } from '@/lib/console/templates';
import { createTestSendThrottle, type TestSendThrottle } from '@/lib/console/test-send-throttle';
import { consoleRoute } from '@/lib/http/console-route';
import { createMailTransport } from '@/lib/mail/transport';
import { activeNoticeConfig } from '@/lib/windows/active';

export const dynamic = 'force-dynamic';

let throttle: TestSendThrottle | undefined;

export const POST = consoleRoute(sendTestContract, async ({ input, actor }) => {
  const settings = config();
  const db = getDb();
  throttle ??= createTestSendThrottle({ pool: db.$client, limit: settings.TEMPLATE_TEST_LIMIT, windowMs: settings.TEMPLATE_TEST_WINDOW });
  return sendTestNotice(db, {
    ...input,
    actor,
    throttle,
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
