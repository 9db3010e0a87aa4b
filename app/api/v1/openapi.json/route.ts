import { getOpenApiDocument } from '@/lib/api/openapi';
import { publicRoute } from '@/lib/http/public-route';
import { ok } from '@/lib/http/refusal';
import { openApiDocument } from '@/lib/openapi/document';

export const dynamic = 'force-dynamic';

export const GET = publicRoute(getOpenApiDocument, async () => ok(openApiDocument() as never));
