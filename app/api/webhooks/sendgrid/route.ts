import { getDb } from '@/db/client';
import { config } from '@/lib/config';
import { receiveWebhook, webhookSettingsFrom } from '@/lib/events/webhook';

export async function POST(request: Request): Promise<Response> {
  return receiveWebhook({ provider: 'sendgrid', request, db: getDb(), settings: webhookSettingsFrom(config()) });
}
