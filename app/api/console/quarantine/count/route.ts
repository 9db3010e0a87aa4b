import { countQuarantined } from '@/db/queries/ledger/read';
import { guarded, jsonOk, parseBody } from '@/lib/auth/guard';
import { config } from '@/lib/config';
import { quarantineCountRequest } from '@/lib/console/requests';

export const dynamic = 'force-dynamic';

/** The count shown before a bulk action is confirmed; reading it needs the right to act. */
export const POST = guarded('quarantine.resolve', async ({ db, request }) => {
  const body = await parseBody(request, quarantineCountRequest);
  if (!body.ok) return body.response;
  return jsonOk({ count: await countQuarantined(db, { quarantineAfterMs: config().QUARANTINE_AFTER, selection: body.data.selection }) });
});
