import { exportEvidencePackContract } from '@/lib/api/console/evidence';
import { config, publicBaseUrl } from '@/lib/config';
import { exportEvidenceForSupport } from '@/lib/console/evidence';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(exportEvidencePackContract, ({ db, input, actor }) =>
  exportEvidenceForSupport(db, { id: input.notice, actor, baseUrl: publicBaseUrl(config()) }),
);
