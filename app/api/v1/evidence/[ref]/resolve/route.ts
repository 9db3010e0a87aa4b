import { resolveEvidenceRoute } from '@/lib/api/producer';
import { resolveEvidenceAnswer } from '@/lib/planning/answers';
import { producerRoute } from '@/lib/http/producer-route';
import { resolveEvidence } from '@/lib/planning/evidence';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(resolveEvidenceRoute, async ({ db, params, body, actor }) =>
  resolveEvidenceAnswer(await resolveEvidence({ db, ref: params.ref, request: body, actor, now: new Date() })),
);
