import { twilioInboundWebhook } from '@/lib/api/webhooks';
import { config } from '@/lib/config';
import { webhookSettingsFrom } from '@/lib/events/webhook';
import { providerRoute } from '@/lib/http/provider-route';

export const POST = providerRoute(twilioInboundWebhook, { settings: () => webhookSettingsFrom(config()) });
