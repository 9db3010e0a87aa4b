import { cancelNoticeRoute } from '@/lib/api/notices';
import { producerRoute } from '@/lib/http/producer-route';
import { cancelNoticeByIdentity } from '@/lib/notices/answers';

export const dynamic = 'force-dynamic';

/** Cancel by business identity: the job-id cancel's answers, the in-flight refusal included. */
export const POST = producerRoute(cancelNoticeRoute, ({ db, body, actor }) => cancelNoticeByIdentity(db, { ...body, actor }));
