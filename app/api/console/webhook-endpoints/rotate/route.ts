import { rotateWebhookSecretContract } from '@/lib/api/console/webhooks';
import { consoleRoute } from '@/lib/http/console-route';
import { manageSettings, rotateEndpointSecret } from '@/lib/webhooks/manage';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(rotateWebhookSecretContract, async ({ db, input, actor }) => rotateEndpointSecret(db, { ...input, actor }, manageSettings()));
