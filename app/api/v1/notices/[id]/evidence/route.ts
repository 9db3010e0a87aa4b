import { getNoticeEvidenceRoute } from '@/lib/api/evidence';
import { config, publicBaseUrl } from '@/lib/config';
import { exportNoticeEvidence } from '@/lib/evidence/export';
import { producerRoute } from '@/lib/http/producer-route';

export const dynamic = 'force-dynamic';

export const GET = producerRoute(getNoticeEvidenceRoute, async ({ db, params }) => {
  const pack = await exportNoticeEvidence(db, { id: params.id, baseUrl: publicBaseUrl(config()) });
  return pack.ok ? { ok: true, data: { status: 200, body: pack.data } } : pack;
});
