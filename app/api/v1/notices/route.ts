import { listNoticesRoute } from '@/lib/api/notices';
import { producerRoute } from '@/lib/http/producer-route';
import { listNotices } from '@/lib/notices/answers';

export const dynamic = 'force-dynamic';

/** Notices by business identity, recipient, state or since, oldest first, a page at a time (README "For producers"). */
export const GET = producerRoute(listNoticesRoute, ({ db, body }) => listNotices(db, body));
