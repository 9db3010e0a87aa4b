import { z } from 'zod';
import { parseJsonBody, parseValue, producerRoute, resolveEvidenceResponse } from '@/lib/api/producer';
import { evidenceRef, resolveEvidence, resolveEvidenceRequest } from '@/lib/jobs/evidence';

export const dynamic = 'force-dynamic';

const evidencePath = z.strictObject({ ref: evidenceRef });

export const POST = producerRoute(async ({ db, request, actor, params }) => {
  const ref = parseValue(params, evidencePath);
  if (!ref.ok) return ref.response;
  const body = await parseJsonBody(request, resolveEvidenceRequest, { optional: true });
  if (!body.ok) return body.response;
  return resolveEvidenceResponse(await resolveEvidence({ db, ref: ref.data.ref, request: body.data, actor, now: new Date() }));
});
