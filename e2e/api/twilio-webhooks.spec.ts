import { expect, test } from '@/e2e/fixtures/test';
import { twilioSignature } from '@/testing/twilio-peer';

/**
 * Twilio's status callback and incoming-message webhooks through `next start`, signed as Twilio
 * signs them (X-Twilio-Signature over PUBLIC_BASE_URL + path + query and the sorted form
 * parameters, with TWILIO_AUTH_TOKEN): a forged or altered request is 403 and stores nothing; a
 * validly signed callback for a message nobody sent is 200, stored unlinked; a repeat is a
 * duplicate; a STOP writes the sender's SMS opt-out.
 */
type Sql = <T extends object>(text: string, values?: unknown[]) => Promise<T[]>;

const count = async (sql: Sql, where: string, values: unknown[] = []) =>
  Number((await sql<{ n: string }>(`select count(*)::text as n from provider_events where ${where}`, values))[0]?.n ?? 0);

function form(params: Record<string, string>): Buffer {
  return Buffer.from(new URLSearchParams(params).toString());
}

test('status callback: forged and altered are 403 with nothing stored; a signed one is stored once; a STOP opts the number out', async ({
  request,
  seed,
  sql,
  baseURL,
}) => {
  const token = seed.webhooks.keys.twilioAuthToken;
  const path = '/api/webhooks/twilio?c=0123456789abcdef0123456789abcdef';
  const url = `${baseURL}${path}`;
  const sid = `SM${'e2e0'.repeat(8)}`;
  const params = { AccountSid: `AC${'0'.repeat(32)}`, MessageSid: sid, MessageStatus: 'delivered', To: '+14155550100', From: '+15005550006' };
  const headers = (signature: string) => ({ 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature });

  const forged = await request.post(path, { headers: headers(twilioSignature('not-the-token-0123456789', url, params)), data: form(params) });
  expect(forged.status()).toBe(403);
  const altered = await request.post(path, { headers: headers(twilioSignature(token, url, params)), data: form({ ...params, MessageStatus: 'failed' }) });
  expect(altered.status()).toBe(403);
  expect(await count(sql, "provider = 'twilio'")).toBe(0);

  const signed = await request.post(path, { headers: headers(twilioSignature(token, url, params)), data: form(params) });
  expect(signed.status()).toBe(200);
  expect(await signed.json()).toMatchObject({ received: 1, stored: 1, duplicates: 0 });
  const again = await request.post(path, { headers: headers(twilioSignature(token, url, params)), data: form(params) });
  expect(await again.json()).toMatchObject({ received: 1, stored: 0, duplicates: 1 });
  expect(await count(sql, "provider = 'twilio' and provider_message_id = $1 and notice_key is null", [sid])).toBe(1);

  const inboundUrl = `${baseURL}/api/webhooks/twilio/inbound`;
  const stop = { AccountSid: params.AccountSid, MessageSid: `SM${'5709'.repeat(8)}`, From: '+14155550177', To: '+15005550006', Body: 'STOP' };
  const inbound = await request.post('/api/webhooks/twilio/inbound', { headers: headers(twilioSignature(token, inboundUrl, stop)), data: form(stop) });
  expect(inbound.status()).toBe(200);
  const [preference] = await sql<{ state: string; source: string }>(
    `select state, source from recipient_preferences where recipient = $1 and channel = 'sms' and category = 'courtesy'`,
    [stop.From],
  );
  expect(preference).toEqual({ state: 'opted_out', source: 'sms_keyword' });
});
