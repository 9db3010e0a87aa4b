import { z } from 'zod';
import { openEvidenceResponse, parseJsonBody, parseValue, producerRoute } from '@/lib/api/producer';
import { evidenceRef, openEvidence, openEvidenceRequest } from '@/lib/jobs/evidence';

export const dynamic = 'force-dynamic';

const evidencePath = z.strictObject({ ref: evidenceRef });

export const PUT = producerRoute(async ({ db, request, actor, params }) => {
  const ref = parseValue(params, evidencePath);
  if (!ref.ok) return ref.response;
  const body = await parseJsonBody(request, openEvidenceRequest);
  if (!body.ok) return body.response;
  return openEvidenceResponse(await openEvidence({ db, ref: ref.data.ref, request: body.data, actor, now: new Date() }));
});
