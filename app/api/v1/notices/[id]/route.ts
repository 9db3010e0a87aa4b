import { getNoticeRoute } from '@/lib/api/notices';
import { producerRoute } from '@/lib/http/producer-route';
import { getNotice } from '@/lib/notices/answers';

export const dynamic = 'force-dynamic';

export const GET = producerRoute(getNoticeRoute, ({ db, params }) => getNotice(db, params));
