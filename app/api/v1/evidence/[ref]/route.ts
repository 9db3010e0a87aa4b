import { openEvidenceRoute } from '@/lib/api/producer';
import { openEvidenceAnswer } from '@/lib/planning/answers';
import { producerRoute } from '@/lib/http/producer-route';
import { openEvidence } from '@/lib/planning/evidence';

export const dynamic = 'force-dynamic';

export const PUT = producerRoute(openEvidenceRoute, async ({ db, params, body, actor }) =>
  openEvidenceAnswer(await openEvidence({ db, ref: params.ref, request: body, actor, now: new Date() })),
);
