import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimNotice } from '@/db/queries/ledger/claim';
import { getLedgerRow, listQuarantined } from '@/db/queries/ledger/read';
import { createPostmarkLookup, easternWallClock } from '@/lib/channels/postmark/lookup';
import { createPostmarkTransport } from '@/lib/channels/postmark/transport';
import { createSendgridLookup, emailLogsQuery } from '@/lib/channels/sendgrid/lookup';
import { createSendgridTransport } from '@/lib/channels/sendgrid/transport';
import type { AcceptedLookup } from '@/lib/channels/types';
import { loadQuarantinePage } from '@/lib/console/quarantine-view';
import type { EmailTransport } from '@/lib/mail/transport';
import { correlationOf } from '@/lib/ledger/notice-key';
import { providerReconciles } from '@/lib/metrics/registry';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import type { PeerControls } from '@/testing/http-peer';
import { claimParamsFor, insertTestJob, readJob } from '@/testing/jobs';
import { startPostmarkPeer } from '@/testing/postmark-peer';
import { startSendgridPeer } from '@/testing/sendgrid-peer';
import { gaveUpFailingReason, gaveUpReason, PROVIDER_RECONCILER_LOCK, reconcileWithProvider } from './provider-lookups';

/**
 * The provider reconciler on real PostgreSQL against each provider's local peer, through the
 * official SDKs: the product's own transport sends (with a fault that leaves the outcome unknown),
 * the product's lookup asks, and the ledger is read back.
 */
type Rig = {
  name: 'postmark' | 'sendgrid';
  peer: Pick<PeerControls<unknown, unknown>, 'setFault' | 'setLookupFault' | 'lookups' | 'stop'>;
  transport: EmailTransport;
  lookup: AcceptedLookup;
  providerIds: () => string[];
};

const rigs: { name: 'postmark' | 'sendgrid'; start: () => Promise<Rig> }[] = [
  {
    name: 'postmark',
    start: async () => {
      const peer = await startPostmarkPeer();
      const settings = { serverToken: peer.serverToken, apiBaseUrl: peer.baseUrl, timeoutMs: 2_000 };
      return {
        name: 'postmark',
        peer,
        transport: createPostmarkTransport({ ...settings, messageStream: 'outbound', from: 'notices@example.test' }),
        lookup: createPostmarkLookup({ ...settings, messageStream: 'outbound' }),
        providerIds: () => peer.messages().map((message) => message.messageId),
      };
    },
  },
  {
    name: 'sendgrid',
    start: async () => {
      const peer = await startSendgridPeer();
      const settings = { apiKey: peer.apiKey, apiBaseUrl: peer.baseUrl, timeoutMs: 2_000 };
      return {
        name: 'sendgrid',
        peer,
        transport: createSendgridTransport({ ...settings, from: 'notices@example.test' }),
        lookup: createSendgridLookup(settings),
        providerIds: () => peer.messages().map((message) => message.xMessageId),
      };
    },
  },
];

const settings = { afterMs: 60_000, giveUpMs: 30 * 60_000 };

describe.each(rigs)('the provider reconciler on $name', ({ start }) => {
  let t: TestDatabase;
  let rig: Rig;

  beforeAll(async () => {
    t = await createTestDatabase();
    rig = await start();
  });
  afterAll(async () => {
    await rig.peer.stop();
    await t.drop();
  });
  beforeEach(() => {
    rig.peer.setFault({ kind: 'none' });
    rig.peer.setLookupFault({ kind: 'none' });
  });

  /** A claimed notice made `ageMs` ago, sent through the product's transport with `fault` (or not sent at all). */
  async function claimAndSend({ ageMs, fault }: { ageMs: number; fault: 'drop-after-accept' | 'error-after-accept' | 'not-sent' }) {
    const job = await insertTestJob(t.db, { recipientEmail: `Reconcile-${randomUUID().slice(0, 8)}@Example.test` });
    const claim = await claimNotice(t.db, claimParamsFor(job));
    expect(claim).not.toBeNull();
    if (fault !== 'not-sent') {
      rig.peer.setFault({ kind: fault });
      const outcome = await rig.transport.send({
        noticeKey: job.noticeKey,
        to: job.recipientEmail ?? '',
        subject: 'Renewal',
        text: 'text',
        html: '<p>html</p>',
      });
      rig.peer.setFault({ kind: 'none' });
      expect(outcome.kind).toBe('unknown');
    }
    await t.db.execute(sql`update notice_ledger set claimed_at = now() - make_interval(secs => ${ageMs / 1000}) where notice_key = ${job.noticeKey}`);
    return job;
  }

  async function lookupRow(noticeKey: string) {
    const result = await t.db.execute<{ outcome: string; checks: number; detail: string | null }>(
      sql`select outcome, checks, detail from provider_lookups where notice_key = ${noticeKey}`,
    );
    return result.rows[0] ?? null;
  }

  it('found accepted: the claim is sent with the provider message id, audited as the system, the answer stored as evidence', async () => {
    const job = await claimAndSend({ ageMs: 5 * 60_000, fault: 'drop-after-accept' });
    const before = (await providerReconciles.get()).values.find((value) => value.labels.provider === rig.name && value.labels.outcome === 'found')?.value ?? 0;
    const result = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
    expect(result.found).toContain(job.noticeKey);

    const row = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
    expect(row?.state).toBe('sent');
    expect(row?.resolution).toBe('provider_evidence');
    expect(rig.providerIds()).toContain(row?.providerMessageId);
    expect((await readJob(t.db, job.id)).state).toBe('sent');
    const audit = await t.db.execute<{ actor: string; action: string }>(sql`select actor, action from audit_log where target_id = ${job.noticeKey}`);
    expect(audit.rows).toEqual([{ actor: 'system:reconciler', action: 'ledger.confirm_sent' }]);
    const events = await t.db.execute<{ event_type: string; correlation_id: string; notice_key: string }>(
      sql`select event_type, correlation_id, notice_key from provider_events where notice_key = ${job.noticeKey}`,
    );
    expect(events.rows).toEqual([{ event_type: 'accepted', correlation_id: correlationOf(job.noticeKey), notice_key: job.noticeKey }]);
    const after = (await providerReconciles.get()).values.find((value) => value.labels.provider === rig.name && value.labels.outcome === 'found')?.value ?? 0;
    expect(after - before).toBe(1);
    // Settled: the next pass forgets it and asks nothing more about it.
    const asked = rig.peer.lookups();
    await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
    expect(rig.peer.lookups()).toBe(asked);
    expect(await lookupRow(job.noticeKey)).toBeNull();
  });

  it('a 5xx after the provider took it is found too (the peer stored it before answering)', async () => {
    const job = await claimAndSend({ ageMs: 5 * 60_000, fault: 'error-after-accept' });
    const result = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
    expect(result.found).toContain(job.noticeKey);
    expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('sent');
  });

  it('not found: the claim stays claimed, asked again; past the give-up age it is left to a person with the reason in quarantine, never released', async () => {
    const young = await claimAndSend({ ageMs: 5 * 60_000, fault: 'not-sent' });
    const old = await claimAndSend({ ageMs: 31 * 60_000, fault: 'not-sent' });
    const first = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
    expect(first.notFound).toContain(young.noticeKey);
    expect(first.gaveUp).toContain(old.noticeKey);
    for (const job of [young, old]) {
      expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
      expect((await readJob(t.db, job.id)).state).toBe('claimed');
    }
    expect(await lookupRow(young.noticeKey)).toEqual({ outcome: 'not_found', checks: 1, detail: null });
    expect(await lookupRow(old.noticeKey)).toEqual({ outcome: 'gave_up', checks: 1, detail: gaveUpReason(rig.name, settings.giveUpMs) });

    const second = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
    expect(second.notFound).toContain(young.noticeKey);
    expect([...second.notFound, ...second.gaveUp, ...second.found]).not.toContain(old.noticeKey);
    expect((await lookupRow(young.noticeKey))?.checks).toBe(2);

    const quarantined = await listQuarantined(t.db, { quarantineAfterMs: 15 * 60_000, limit: 500 });
    expect(quarantined.find((row) => row.noticeKey === old.noticeKey)?.providerLookup).toMatchObject({
      provider: rig.name,
      outcome: 'gave_up',
      detail: expect.stringContaining('has no record of this message after 30 min: release to resend or mark sent'),
    });
    // What on-call reads on the quarantine page: the reason as the suggestion's why, the decision theirs.
    const page = await loadQuarantinePage(t.db, { query: {}, quarantineAfterMs: 15 * 60_000 });
    expect(page.rows.find((row) => row.noticeKey === old.noticeKey)).toMatchObject({
      suggestion: 'release',
      suggestionWhy: gaveUpReason(rig.name, settings.giveUpMs),
      providerLookup: { outcome: 'gave_up', checks: 1 },
    });
    expect((await getLedgerRow(t.db, { noticeKey: old.noticeKey }))?.state).toBe('claimed');
  });

  it('a claim a person released after the reconciler gave up, and that was claimed again, is asked about afresh', async () => {
    const job = await claimAndSend({ ageMs: 31 * 60_000, fault: 'not-sent' });
    expect((await reconcileWithProvider(t.db, { lookup: rig.lookup, settings })).gaveUp).toContain(job.noticeKey);
    // Twenty minutes later on-call releases it, and a worker claims it again (the release's resend).
    await t.db.execute(sql`update provider_lookups set first_checked_at = now() - interval '20 minutes' where notice_key = ${job.noticeKey}`);
    await t.db.execute(sql`update notice_ledger set state = 'released' where notice_key = ${job.noticeKey}`);
    const again = await claimNotice(t.db, claimParamsFor(job, { claimedBy: 'test-worker-2' }));
    expect(again).not.toBeNull();
    await t.db.execute(sql`update notice_ledger set claimed_at = now() - interval '5 minutes' where notice_key = ${job.noticeKey}`);
    const quarantined = await listQuarantined(t.db, { quarantineAfterMs: 60_000, limit: 500 });
    expect(quarantined.find((row) => row.noticeKey === job.noticeKey)?.providerLookup).toBeNull();
    expect((await reconcileWithProvider(t.db, { lookup: rig.lookup, settings })).notFound).toContain(job.noticeKey);
    expect(await lookupRow(job.noticeKey)).toEqual({ outcome: 'not_found', checks: 1, detail: null });
  });

  it('a claim younger than RECONCILE_AFTER is not asked about: its worker may still be sending it', async () => {
    const job = await claimAndSend({ ageMs: 10_000, fault: 'drop-after-accept' });
    const result = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
    expect([...result.found, ...result.notFound, ...result.gaveUp, ...result.failed]).not.toContain(job.noticeKey);
    expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
    // Control: once old enough, the same claim is found.
    await t.db.execute(sql`update notice_ledger set claimed_at = now() - interval '5 minutes' where notice_key = ${job.noticeKey}`);
    expect((await reconcileWithProvider(t.db, { lookup: rig.lookup, settings })).found).toContain(job.noticeKey);
  });

  it('a lookup that keeps failing past the give-up age is left to a person with its last error, never released, and asked no more', async () => {
    const job = await claimAndSend({ ageMs: 31 * 60_000, fault: 'drop-after-accept' });
    rig.peer.setLookupFault({ kind: 'error', status: 503 });
    try {
      const result = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
      expect(result.gaveUp).toContain(job.noticeKey);
      expect(result.failed).not.toContain(job.noticeKey);
      expect(await lookupRow(job.noticeKey)).toEqual({
        outcome: 'gave_up',
        checks: 1,
        detail: gaveUpFailingReason(rig.name, settings.giveUpMs, `${rig.name}_lookup_503`),
      });
      expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
      const page = await loadQuarantinePage(t.db, { query: {}, quarantineAfterMs: 15 * 60_000 });
      expect(page.rows.find((row) => row.noticeKey === job.noticeKey)?.suggestionWhy).toContain('could not be asked for 30 min');
      // Asked no more: even once the provider answers again, the decision is the person's.
      // (Other tests' claims may still be asked: this one's lookup row shows it was not — its count stays.)
      rig.peer.setLookupFault({ kind: 'none' });
      const next = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
      expect([...next.found, ...next.notFound, ...next.gaveUp, ...next.failed]).not.toContain(job.noticeKey);
      expect(await lookupRow(job.noticeKey)).toMatchObject({ outcome: 'gave_up', checks: 1 });
      expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
    } finally {
      rig.peer.setLookupFault({ kind: 'none' });
    }
  });

  it('a lookup 5xx changes nothing and is retried on the next pass; a 429 ends the pass', async () => {
    const job = await claimAndSend({ ageMs: 5 * 60_000, fault: 'drop-after-accept' });
    rig.peer.setLookupFault({ kind: 'error', status: 503 });
    const failed = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
    expect(failed.failed).toContain(job.noticeKey);
    expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
    expect(await lookupRow(job.noticeKey)).toMatchObject({ outcome: 'lookup_failed', detail: `${rig.name}_lookup_503` });

    const other = await claimAndSend({ ageMs: 5 * 60_000, fault: 'not-sent' });
    rig.peer.setLookupFault({ kind: 'throttle', retryAfterSeconds: 1 });
    const throttled = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
    expect(throttled.failed).toHaveLength(1);
    expect([...throttled.found, ...throttled.notFound, ...throttled.gaveUp]).toHaveLength(0);

    rig.peer.setLookupFault({ kind: 'none' });
    const retried = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
    expect(retried.found).toContain(job.noticeKey);
    expect(retried.notFound).toContain(other.noticeKey);
    expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('sent');
  });

  it('only one worker reconciles at a time: a pass that cannot take the lock asks nothing', async () => {
    const job = await claimAndSend({ ageMs: 5 * 60_000, fault: 'drop-after-accept' });
    const holder = new pg.Client({ connectionString: t.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock($1)', [PROVIDER_RECONCILER_LOCK]);
      const asked = rig.peer.lookups();
      const blocked = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
      expect(blocked).toEqual({ locked: false, found: [], notFound: [], gaveUp: [], failed: [] });
      expect(rig.peer.lookups()).toBe(asked);
      expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
      await holder.query('rollback');
      // Control: the lock released, the same pass resolves it.
      expect((await reconcileWithProvider(t.db, { lookup: rig.lookup, settings })).found).toContain(job.noticeKey);
    } finally {
      await holder.end();
    }
  });

  it('a claim a webhook or a person settled meanwhile is not touched', async () => {
    const job = await claimAndSend({ ageMs: 5 * 60_000, fault: 'drop-after-accept' });
    await t.db.execute(sql`update notice_ledger set state = 'released' where notice_key = ${job.noticeKey}`);
    const result = await reconcileWithProvider(t.db, { lookup: rig.lookup, settings });
    expect(result.found).not.toContain(job.noticeKey);
    expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('released');
  });
});

describe('the lookups’ query forms', () => {
  it('Postmark windows are US Eastern wall clock without an offset, in winter and in summer', () => {
    expect(easternWallClock(new Date('2026-01-15T17:00:00.900Z'))).toBe('2026-01-15T12:00:00');
    expect(easternWallClock(new Date('2026-07-15T16:00:00Z'))).toBe('2026-07-15T12:00:00');
  });

  it('SendGrid Email Logs are asked by the lower-cased recipient and the window; a quote in the address is refused, never spliced', () => {
    const since = new Date('2026-12-03T10:00:00Z');
    const until = new Date('2026-12-03T10:30:00Z');
    expect(emailLogsQuery({ recipient: 'Alice@Example.test', since, until })).toBe(
      'to_email = "alice@example.test" AND sg_message_id_created_at >= TIMESTAMP "2026-12-03T10:00:00.000Z" AND sg_message_id_created_at <= TIMESTAMP "2026-12-03T10:30:00.000Z"',
    );
    expect(() => emailLogsQuery({ recipient: 'a" OR to_email = "b@example.test', since, until })).toThrow(RangeError);
  });
});
