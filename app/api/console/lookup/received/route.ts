import { receivedMessageContract } from '@/lib/api/console/received';
import { config, publicBaseUrl } from '@/lib/config';
import { rerenderSentNotice } from '@/lib/console/rerender';
import { consoleRoute } from '@/lib/http/console-route';
import { activeNoticeConfig } from '@/lib/windows/active';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(receivedMessageContract, ({ db, input, actor }) =>
  rerenderSentNotice(db, { id: input.notice, actor, baseUrl: publicBaseUrl(config()), noticeConfig: activeNoticeConfig().config }),
);
