import { getRecipientPreferences, putRecipientPreferences as putContract } from '@/lib/api/recipient-preferences';
import { producerRoute } from '@/lib/http/producer-route';
import { ok } from '@/lib/http/refusal';
import { putRecipientPreferences, readRecipientPreferences } from '@/lib/recipient/preferences-api';

export const dynamic = 'force-dynamic';

export const PUT = producerRoute(putContract, async ({ db, params, body, actor }) => {
  const result = await putRecipientPreferences(db, { email: params.email, body, actor });
  return result.ok ? ok({ status: 200, body: result.data }) : result;
});

export const GET = producerRoute(getRecipientPreferences, async ({ db, params }) =>
  ok({ status: 200, body: await readRecipientPreferences(db, { email: params.email }) }),
);
