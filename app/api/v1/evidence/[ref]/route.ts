import { openEvidenceResponse, parseJsonBody, parseValue, producerRoute } from '@/lib/api/producer';
import { evidenceParams, openEvidence, openEvidenceRequest } from '@/lib/jobs/evidence';

export const dynamic = 'force-dynamic';

export const PUT = producerRoute(async ({ db, request, actor, params }) => {
  const path = parseValue(params, evidenceParams);
  if (!path.ok) return path.response;
  const body = await parseJsonBody(request, openEvidenceRequest);
  if (!body.ok) return body.response;
  return openEvidenceResponse(await openEvidence({ db, ref: path.data.ref, request: body.data, actor, now: new Date() }));
});
