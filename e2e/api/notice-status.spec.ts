import { randomUUID } from 'node:crypto';
import type { APIRequestContext } from '@playwright/test';
import { expect, test } from '@/e2e/fixtures/test';
import { genericHeaders, sendgridHeaders } from '@/e2e/fixtures/webhook-keys';
import { mintApiToken } from '@/lib/auth/api-tokens';

/**
 * The notice status API through `next start`, against support's lookup of the same notice: a
 * notice sent, one bounced (a signed provider event), one whose window was missed and one left
 * claimed (quarantine) and resolved by the provider's signed evidence. Each GET must tell what
 * lookup's timeline tells: the states, the send time, the provider id, one attempt per attempt
 * entry and one delivery event per provider entry. A token without notices:read is refused.
 */

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A payment-recovery reminder through the producer API, due in 2 h: its id and notice key. */
async function scheduleRecovery(
  request: APIRequestContext,
  auth: Record<string, string>,
  { run, name, domain }: { run: string; name: string; domain: string },
): Promise<{ id: string; noticeKey: string }> {
  const answer = await request.post('/api/v1/reminders', {
    headers: auth,
    data: {
      type: 'payment_recovery',
      identity: { account_id: `acct_${run}`, reconciliation_id: `rec_${domain.split('.')[0] ?? 'status'}`, exception_id: `exc_${name}` },
      recipient: { email: `${name}-${run}@${domain}`, timeZone: 'Europe/Berlin' },
      dueAt: iso(Date.now() + 2 * HOUR),
      deadlineAt: iso(Date.now() + 26 * HOUR),
      payload: { customer_name: 'Ada', amount: '49.00', currency: 'EUR', reference: `RC-${name}` },
      source: 'status-e2e',
    },
  });
  expect(answer.status()).toBe(201);
  return (await answer.json()) as { id: string; noticeKey: string };
}

type Status = {
  id: string;
  noticeKey: string;
  state: string;
  ledgerState: string | null;
  outcome: string;
  sentAt: string | null;
  resolution: { text: string } | null;
  window: { missed: { rule: string } | null };
  attempts: { at: string }[];
  providerMessageIds: string[];
  deliveryEvents: { type: string }[];
};
type Lookup = {
  ok: true;
  data: {
    notices: {
      noticeKey: string;
      jobState: string | null;
      ledgerState: string | null;
      sentAt: string | null;
      providerMessageId: string | null;
      timeline: { at: string; kind: string }[];
    }[];
  };
};

test('sent, bounced, window-missed and quarantine-resolved notices: the GET matches lookup; a token without notices:read is 403', async ({
  request,
  seed,
  sql,
  apiAs,
}) => {
  const auth = { authorization: `Bearer ${seed.producer.token}` };
  const run = randomUUID().slice(0, 8);
  const schedule = (name: string) => scheduleRecovery(request, auth, { run, name, domain: 'status.e2e.example.com' });
  const ledger = (job: { id: string; noticeKey: string }, state: 'sent' | 'claimed', providerMessageId: string | null) =>
    sql(
      `insert into notice_ledger (notice_key, notice_type, identity, revision, job_id, state, claimed_by, claimed_at, sent_at, provider_message_id, recipient_domain, one_time_code)
       select notice_key, notice_type, identity, revision, id, $2, 'e2e-worker', now() - interval '2 hours', case when $2 = 'sent' then now() end, $3, 'status.e2e.example.com', 'SECRETCODE9'
       from reminder_jobs where id = $1`,
      [job.id, state, providerMessageId],
    );
  const attempt = (job: { id: string; noticeKey: string }, outcome: string, detail: string | null) =>
    sql(
      `insert into delivery_attempts (job_id, notice_key, worker_id, started_at, finished_at, outcome, detail) values ($1, $2, 'e2e-worker', now(), now(), $3, $4)`,
      [job.id, job.noticeKey, outcome, detail],
    );
  const postEvents = async (events: unknown[]) => {
    const body = JSON.stringify({ events });
    const answer = await request.post('/api/webhooks/generic', { headers: genericHeaders(seed.webhooks.keys, body), data: Buffer.from(body) });
    expect(answer.status()).toBe(200);
  };

  const sent = await schedule('sent');
  await sql(`update reminder_jobs set state = 'sent' where id = $1`, [sent.id]);
  await ledger(sent, 'sent', `pm-sent-${run}`);
  await attempt(sent, 'sent', null);

  const bounced = await schedule('bounced');
  await sql(`update reminder_jobs set state = 'sent' where id = $1`, [bounced.id]);
  await ledger(bounced, 'sent', `pm-bounce-${run}`);
  await attempt(bounced, 'sent', null);
  await postEvents([
    {
      id: `pm-bounce-${run}.bounce`,
      type: 'bounce',
      bounceType: 'hard',
      correlation: bounced.noticeKey.slice(0, 32),
      messageId: null,
      providerMessageId: `pm-bounce-${run}`,
      recipient: `bounced-${run}@status.e2e.example.com`,
      occurredAt: iso(Date.now()),
    },
  ]);

  const missed = await schedule('missed');
  await sql(`update reminder_jobs set state = 'suppressed', suppression_reason = 'window_missed' where id = $1`, [missed.id]);
  await attempt(missed, 'suppressed_policy', 'deadline_passed');

  const quarantined = await schedule('quarantined');
  await sql(`update reminder_jobs set state = 'claimed' where id = $1`, [quarantined.id]);
  await ledger(quarantined, 'claimed', null);
  const unknown = (await (await request.get(`/api/v1/notices/${quarantined.id}`, { headers: auth })).json()) as Status;
  expect(unknown.outcome).toBe('outcome_unknown');
  await postEvents([
    {
      id: `pm-q-${run}.delivered`,
      type: 'delivered',
      correlation: quarantined.noticeKey.slice(0, 32),
      messageId: null,
      providerMessageId: `pm-q-${run}`,
      recipient: `quarantined-${run}@status.e2e.example.com`,
      occurredAt: iso(Date.now() - 60_000),
    },
  ]);

  const support = await apiAs('support');
  const expected = { sent: 'sent', bounced: 'sent', missed: 'window_missed', quarantined: 'sent' } as const;
  for (const [name, job] of Object.entries({ sent, bounced, missed, quarantined }) as [keyof typeof expected, { id: string; noticeKey: string }][]) {
    const answer = await request.get(`/api/v1/notices/${job.id}`, { headers: auth });
    expect(answer.status(), name).toBe(200);
    const text = await answer.text();
    expect(text, name).not.toContain('SECRETCODE9');
    expect(text, name).not.toContain('e2e-worker');
    const status = JSON.parse(text) as Status;
    const lookup = (await (await support.get(`/api/console/lookup?q=${job.noticeKey}`)).json()) as Lookup;
    const view = lookup.data.notices.find((notice) => notice.noticeKey === job.noticeKey);
    expect(view, name).toBeDefined();
    expect(status.outcome, name).toBe(expected[name]);
    expect({ state: status.state, ledgerState: status.ledgerState, sentAt: status.sentAt }, name).toEqual({
      state: view?.jobState,
      ledgerState: view?.ledgerState,
      sentAt: view?.sentAt,
    });
    if (view?.providerMessageId) expect(status.providerMessageIds, name).toContain(view.providerMessageId);
    const timeline = view?.timeline ?? [];
    expect(
      status.attempts.map((entry) => entry.at),
      name,
    ).toEqual(timeline.filter((entry) => entry.kind === 'attempt').map((entry) => entry.at));
    expect(status.deliveryEvents.length, name).toBe(timeline.filter((entry) => entry.kind === 'provider').length);
    if (name === 'bounced') expect(status.deliveryEvents.map((event) => event.type)).toContain('bounce');
    if (name === 'missed') expect(status.window.missed?.rule).toBe('deadline_passed');
    if (name === 'quarantined') expect(status.resolution?.text).toBe('resolved by provider evidence');
  }

  const minted = mintApiToken();
  await sql('insert into api_tokens (name, prefix, token_hash, scopes) values ($1, $2, $3, $4)', [
    `writer ${run}`,
    minted.prefix,
    minted.tokenHash,
    ['reminders:write'],
  ]);
  const refused = await request.get(`/api/v1/notices/${sent.id}`, { headers: { authorization: `Bearer ${minted.token}` } });
  expect(refused.status()).toBe(403);
  expect(((await refused.json()) as { error: string }).error).toBe('missing_scope');
});

// SendGrid answers 202 before it looks at a message (issue 27): the row is sent, its provider
// status `accepted`, until the message's own signed event settles it.
test('a SendGrid hand-over reads accepted until its event: processed reads sent, dropped reads dropped, in the GET and in lookup', async ({
  request,
  seed,
  sql,
  apiAs,
}) => {
  const auth = { authorization: `Bearer ${seed.producer.token}` };
  const run = randomUUID().slice(0, 8);
  const sentProvisionally = async (name: string) => {
    const job = await scheduleRecovery(request, auth, { run, name, domain: 'sg.e2e.example.com' });
    await sql(`update reminder_jobs set state = 'sent' where id = $1`, [job.id]);
    await sql(
      `insert into notice_ledger (notice_key, notice_type, identity, revision, job_id, state, claimed_by, claimed_at, sent_at, provider_message_id, recipient_domain, provider_status)
       select notice_key, notice_type, identity, revision, id, 'sent', 'e2e-worker', now() - interval '1 minute', now(), $2, 'sg.e2e.example.com', 'accepted'
       from reminder_jobs where id = $1`,
      [job.id, `sg-${name}-${run}`],
    );
    return job;
  };
  const processed = await sentProvisionally('processed');
  const dropped = await sentProvisionally('dropped');
  const outcome = async (job: { id: string }) => ((await (await request.get(`/api/v1/notices/${job.id}`, { headers: auth })).json()) as Status).outcome;
  expect([await outcome(processed), await outcome(dropped)]).toEqual(['accepted', 'accepted']);

  const event = (job: { noticeKey: string }, name: string, type: string) => ({
    email: `${name}-${run}@sg.e2e.example.com`,
    timestamp: Math.floor(Date.now() / 1000),
    event: type,
    sg_event_id: `sg-ev-${name}-${run}`,
    sg_message_id: `sg-${name}-${run}.filterdrecv-1`,
    notice_correlation: job.noticeKey.slice(0, 32),
    ...(type === 'dropped' ? { reason: 'Bounced Address' } : {}),
  });
  const body = JSON.stringify([event(processed, 'processed', 'processed'), event(dropped, 'dropped', 'dropped')]);
  const posted = await request.post('/api/webhooks/sendgrid', { headers: sendgridHeaders(seed.webhooks.keys, body), data: Buffer.from(body) });
  expect(posted.status()).toBe(200);
  expect([await outcome(processed), await outcome(dropped)]).toEqual(['sent', 'dropped']);

  const support = await apiAs('support');
  for (const [job, words] of [
    [processed, /^processed/],
    [dropped, /will not deliver/],
  ] as const) {
    const lookup = (await (await support.get(`/api/console/lookup?q=${job.noticeKey}`)).json()) as {
      data: { notices: { noticeKey: string; timeline: { title: string; facts: { label: string; value: string }[] }[] }[] };
    };
    const sentEntry = lookup.data.notices
      .find((notice) => notice.noticeKey === job.noticeKey)
      ?.timeline.find((entry) => entry.title === 'Ledger recorded the notice as sent');
    expect(sentEntry?.facts.find((fact) => fact.label === 'provider answer')?.value).toMatch(words);
  }
});
