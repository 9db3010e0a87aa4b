import { createProducerClient } from '@/lib/api-client';

/**
 * README "For producers": the typed client (lib/api-client) schedules a reminder, asks what
 * happened to it, and cancels it by business identity. Run with BASE_URL, TOKEN and EXC set;
 * test/readme-producers.test.ts runs it against `npm run demo`.
 */
const client = createProducerClient({ baseUrl: process.env.BASE_URL ?? 'http://localhost:3000', token: process.env.TOKEN ?? '' });
const identity = { account_id: 'acct_42', reconciliation_id: 'recon_2026_03', exception_id: `${process.env.EXC ?? 'exc-1'}-client` };
const hours = (count: number) => new Date(Date.now() + count * 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

const scheduled = await client.POST('/api/v1/reminders', {
  body: {
    type: 'payment_recovery',
    identity,
    recipient: { email: 'ada@example.com', timeZone: 'Europe/Berlin' },
    dueAt: hours(2),
    deadlineAt: hours(48),
    payload: { customer_name: 'Ada Lovelace', amount: '49.00', currency: 'EUR', reference: 'RC-2026-0042' },
    source: 'billing-reconciliation',
  },
});
if (!scheduled.data) throw new Error(`scheduling answered ${scheduled.response.status}: ${JSON.stringify(scheduled.error)}`);
console.log(JSON.stringify({ created: scheduled.data.created, state: scheduled.data.state }));
console.log(`HTTP ${scheduled.response.status}`);

const status = await client.GET('/api/v1/notices/{id}', { params: { path: { id: scheduled.data.id } } });
console.log(JSON.stringify({ outcome: status.data?.outcome, attempts: status.data?.attempts.length }));
console.log(`HTTP ${status.response.status}`);

const cancelled = await client.POST('/api/v1/notices/cancel', { body: { type: 'payment_recovery', identity, reason: 'customer paid by wire' } });
console.log(JSON.stringify({ state: cancelled.data?.state }));
console.log(`HTTP ${cancelled.response.status}`);

const again = await client.POST('/api/v1/notices/cancel', { body: { type: 'payment_recovery', identity } });
console.log(JSON.stringify({ error: again.error?.error }));
console.log(`HTTP ${again.response.status}`);
