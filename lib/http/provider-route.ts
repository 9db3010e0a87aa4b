import type { ZodType } from 'zod';
import type { DbOrTx } from '@/db/client';
import { getDb } from '@/lib/process-db';
import { receiveWebhook, WEBHOOK_BODY_LIMIT, type WebhookSettings } from '@/lib/events/webhook';
import { createLogger } from '@/lib/log';
import { readBytes } from './body';
import type { ProviderContract } from './contract';
import { providerOk, providerRefusal } from './wire';

const log = createLogger('webhooks');

function emptyTwiml(): Response {
  return new Response('<?xml version="1.0" encoding="UTF-8"?><Response></Response>', { status: 200, headers: { 'content-type': 'text/xml; charset=utf-8' } });
}

export type ProviderRouteHandler = ((request: Request) => Promise<Response>) & { contract: ProviderContract };

/**
 * A provider webhook from its contract: the body read up to WEBHOOK_BODY_LIMIT (before any
 * authentication, so an oversized request costs nothing), then the provider's own
 * authentication, payload and idempotent storage (lib/events/webhook.ts). A refused request
 * stores nothing; an error of ours is a 500, which every provider retries.
 */
export function providerRoute<I extends ZodType, O extends ZodType>(
  contract: ProviderContract<I, O>,
  { settings, db = getDb }: { settings: () => WebhookSettings; db?: () => DbOrTx },
): ProviderRouteHandler {
  const route = async (request: Request): Promise<Response> => {
    const body = await readBytes(request, { limitBytes: WEBHOOK_BODY_LIMIT });
    if (!body.ok) return providerRefusal(body.refusal);
    try {
      const url = new URL(request.url);
      const result = await receiveWebhook({
        provider: contract.provider,
        headers: request.headers,
        body: body.data,
        db: db(),
        settings: settings(),
        pathAndQuery: url.pathname + url.search,
      });
      if (!result.ok) return providerRefusal(result.refusal);
      // Twilio reads the answer to an incoming message as TwiML: an empty <Response/> sends no reply
      // (Twilio answers STOP and START itself) and keeps its debugger free of content-type warnings.
      return contract.provider === 'twilio_inbound' ? emptyTwiml() : providerOk(result.data);
    } catch (error) {
      log.error({ provider: contract.provider, err: error instanceof Error ? error.message : String(error) }, 'webhook failed; the provider will retry');
      return providerRefusal({ kind: 'internal', message: 'internal error; retry' });
    }
  };
  return Object.assign(route, { contract });
}
