import type { z } from 'zod';
import type { Db } from '@/db/client';
import { findNoticeByIdentity } from '@/db/queries/notice-status';
import type { cancelNoticeRequest, getNoticeRoute, listNoticesQuery, listNoticesRoute } from '@/lib/api/notices';
import type { cancelReminderRoute } from '@/lib/api/producer';
import { cancelAnswer } from '@/lib/planning/answers';
import type { ProducerAnswer } from '@/lib/http/producer-route';
import { refuse, type Result } from '@/lib/http/refusal';
import { cancelForProducer } from '@/lib/planning/cancel-notice';
import { normalisePhone } from '@/lib/sms/phone';
import { activeNoticeConfig } from '@/lib/windows/active';
import { parseIdentity } from '@/lib/windows/identity';
import { afterIdOf, findNoticeStatus, listNoticeStatuses } from './status';

/** The notice status routes' handlers: the request as parsed by its contract in, the answer out. */

function identityOf(type: string, identity: unknown): Result<Record<string, string>> {
  const parsed = parseIdentity(activeNoticeConfig().config, type, identity);
  if (!parsed.ok)
    return refuse('unprocessable', parsed.problems.join('; '), {
      code: 'invalid_identity',
      details: { message: parsed.problems.join('; '), fields: parsed.problems },
    });
  return { ok: true, data: parsed.identity };
}

export async function getNotice(db: Db, { id }: z.output<typeof getNoticeRoute.params>): Promise<Result<ProducerAnswer<typeof getNoticeRoute.output>>> {
  const notice = await findNoticeStatus(db, { id });
  if (!notice) return refuse('not_found', 'no notice with that job id or notice key');
  return { ok: true, data: { status: 200, body: notice } };
}

export async function listNotices(db: Db, query: z.output<typeof listNoticesQuery>): Promise<Result<ProducerAnswer<typeof listNoticesRoute.output>>> {
  let identity: Record<string, string> | undefined;
  if (query.identity && query.type) {
    const parsed = identityOf(query.type, query.identity);
    if (!parsed.ok) return parsed;
    identity = parsed.data;
  }
  let recipient: { email: string } | { phone: string } | undefined;
  if (query.recipient?.startsWith('+')) {
    const phone = normalisePhone(query.recipient);
    if (!phone.ok) return refuse('invalid_input', `recipient: ${phone.problems.join('; ')}`, { code: 'invalid_request' });
    recipient = { phone: phone.value.e164 };
  } else if (query.recipient) recipient = { email: query.recipient };
  const page = await listNoticeStatuses(db, {
    type: query.type,
    identity,
    revision: query.revision,
    recipient,
    state: query.state,
    since: query.since ? new Date(query.since) : undefined,
    afterId: afterIdOf(query.cursor),
    limit: query.limit,
  });
  return { ok: true, data: { status: 200, body: page } };
}

/**
 * Without a revision, the latest revision scheduled for the identity is the one cancelled: an
 * older revision was superseded by it (a correction), and cancelling "the renewal notice" means
 * the one that would go out. A producer that means an older one names its revision.
 */
export async function cancelNoticeByIdentity(
  db: Db,
  { type, identity, revision, reason, actor }: z.output<typeof cancelNoticeRequest> & { actor: string },
): Promise<Result<ProducerAnswer<typeof cancelReminderRoute.output>>> {
  const parsed = identityOf(type, identity);
  if (!parsed.ok) return parsed;
  const found = await findNoticeByIdentity(db, { type, identity: parsed.data, revision });
  if (!found) return refuse('not_found', `no ${type} notice with that identity${revision === undefined ? '' : ` and revision ${revision}`}`);
  return cancelAnswer(await cancelForProducer(db, { id: found.id, actor, reason }));
}
