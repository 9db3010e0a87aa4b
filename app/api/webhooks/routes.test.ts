import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { createTestSendgridSigner, readFixture } from '@/testing/provider-events';

/** The route handlers as Next calls them: a real Request in, a Response out, config from env. */

const sendgrid = createTestSendgridSigner();
let t: TestDatabase;
const envNames = ['DATABASE_URL', 'POSTMARK_WEBHOOK_USER', 'POSTMARK_WEBHOOK_PASSWORD', 'SENDGRID_WEBHOOK_PUBLIC_KEY', 'SNS_TOPIC_ARNS'] as const;
const savedEnv = Object.fromEntries(envNames.map((name) => [name, process.env[name]]));

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  process.env.POSTMARK_WEBHOOK_USER = 'hook';
  process.env.POSTMARK_WEBHOOK_PASSWORD = 'route-test-password';
  process.env.SENDGRID_WEBHOOK_PUBLIC_KEY = sendgrid.publicKeyBase64;
  process.env.SNS_TOPIC_ARNS = 'arn:aws:sns:us-east-1:123456789012:ses-events';
});

afterAll(async () => {
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
  for (const name of envNames) {
    if (savedEnv[name] === undefined) delete process.env[name];
    else process.env[name] = savedEnv[name];
  }
});

async function storedEvents(provider: string): Promise<number> {
  const result = await t.pool.query<{ n: number }>('select count(*)::int as n from provider_events where provider = $1', [provider]);
  return result.rows[0]?.n ?? 0;
}

describe('webhook routes', () => {
  it('postmark: Basic credentials from the environment', async () => {
    const { POST } = await import('./postmark/route');
    const body = readFixture('postmark-delivery.json');
    const denied = await POST(new Request('http://console.test/api/webhooks/postmark', { method: 'POST', body }));
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect(await storedEvents('postmark')).toBe(0);
    const authorization = `Basic ${Buffer.from('hook:route-test-password').toString('base64')}`;
    const accepted = await POST(new Request('http://console.test/api/webhooks/postmark', { method: 'POST', body, headers: { authorization } }));
    expect(accepted.status).toBe(200);
    expect(await storedEvents('postmark')).toBe(1);
  });

  it('sendgrid: the public key from the environment', async () => {
    const { POST } = await import('./sendgrid/route');
    const body = readFixture('sendgrid-events.json');
    const forged = await POST(
      new Request('http://console.test/api/webhooks/sendgrid', {
        method: 'POST',
        body,
        headers: createTestSendgridSigner().sign(body, Math.floor(Date.now() / 1000)),
      }),
    );
    expect(forged.status).toBe(401);
    expect(await storedEvents('sendgrid')).toBe(0);
    const signed = await POST(
      new Request('http://console.test/api/webhooks/sendgrid', { method: 'POST', body, headers: sendgrid.sign(body, Math.floor(Date.now() / 1000)) }),
    );
    expect(signed.status).toBe(200);
    expect(await storedEvents('sendgrid')).toBe(6);
  });

  it('ses: refuses a certificate URL that is not https on an SNS host, without fetching it', async () => {
    const { POST } = await import('./ses/route');
    const body = JSON.stringify({
      Type: 'Notification',
      MessageId: 'm-1',
      TopicArn: 'arn:aws:sns:us-east-1:123456789012:ses-events',
      Message: readFixture('ses-delivery.json'),
      Timestamp: new Date().toISOString(),
      SignatureVersion: '2',
      Signature: Buffer.from('forged').toString('base64'),
      SigningCertURL: 'http://127.0.0.1:1/cert.pem',
    });
    const response = await POST(new Request('http://console.test/api/webhooks/ses', { method: 'POST', body }));
    expect(response.status).toBe(401);
    expect(await storedEvents('ses')).toBe(0);
  });
});
