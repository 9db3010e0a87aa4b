import { parseJsonBody, parseValue, producerRoute, resolveEvidenceResponse } from '@/lib/api/producer';
import { evidenceParams, resolveEvidence, resolveEvidenceRequest } from '@/lib/jobs/evidence';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(async ({ db, request, actor, params }) => {
  const path = parseValue(params, evidenceParams);
  if (!path.ok) return path.response;
  const body = await parseJsonBody(request, resolveEvidenceRequest, { optional: true });
  if (!body.ok) return body.response;
  return resolveEvidenceResponse(await resolveEvidence({ db, ref: path.data.ref, request: body.data, actor, now: new Date() }));
});
