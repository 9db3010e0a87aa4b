import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '@/db/embedded';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { listTransportsDown } from '@/db/queries/transport-status';
import { createLogger } from '@/lib/log';
import { createMailTransport, type MailTransport } from '@/lib/mail/transport';
import { transportUp } from '@/lib/metrics/registry';
import { createTransportBreakers } from '@/lib/transport/breaker';
import { classifySmtpPhase, type FailureClass } from '@/lib/transport/phases';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startSilentPeer, startSmtpSink, type SinkFault, type SmtpSink } from '@/testing/smtp-sink';
import { createWakeupHandler } from './handle-wakeup';
import { createDomainRateLimiter, type DomainRateLimiter } from './rate-limit';

/**
 * The phase table (lib/transport/phases.ts) with a real SMTP peer and the real send path: a
 * failure injected at each phase ends as its row says. The expected class of each case is
 * written here, so moving a row (535 back to permanent, a greeting timeout to unknown) fails.
 */

let t: TestDatabase;
let limiter: DomainRateLimiter;
/** The relays, with PIPELINING (one write for MAIL, RCPT and DATA, lib/mail/smtp-pool.ts) and without (nodemailer's one command per reply). */
type Relays = { sink: SmtpSink; authSink: SmtpSink };
const relays = new Map<boolean, Relays>();

beforeAll(async () => {
  t = await createTestDatabase();
  for (const pipelining of [true, false])
    relays.set(pipelining, {
      sink: await startSmtpSink({ pipelining }),
      authSink: await startSmtpSink({ pipelining, auth: { user: 'relay-user', pass: 'relay-pass' } }),
    });
  limiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 });
});

afterAll(async () => {
  for (const { sink, authSink } of relays.values()) {
    await sink.stop();
    await authSink.stop();
  }
  await t?.drop();
});

/** How a notice ends for each class: the job, its claim, the attempts it counted. */
const endsAs: Record<FailureClass, { job: string; ledger: string; attempts: number; attempt: string }> = {
  nothing_left: { job: 'pending', ledger: 'released', attempts: 1, attempt: 'retryable_failure' },
  recipient_refused: { job: 'failed', ledger: 'released', attempts: 1, attempt: 'permanent_failure' },
  config_broken: { job: 'pending', ledger: 'released', attempts: 0, attempt: 'retryable_failure' },
  outcome_unknown: { job: 'claimed', ledger: 'claimed', attempts: 1, attempt: 'unknown' },
};

type Case = {
  name: string;
  failure: FailureClass;
  phase: string;
  errorClass: string;
  code?: number;
  peer: (relays: Relays) => Promise<{ url: string; fault?: SinkFault; sink?: SmtpSink; stop?: () => Promise<void> }>;
};

const cases: Case[] = [
  {
    name: 'connect refused',
    failure: 'nothing_left',
    phase: 'connect',
    errorClass: 'connect_failed',
    peer: async () => ({ url: `smtp://127.0.0.1:${String(await freePort())}` }),
  },
  {
    name: 'TLS failure (smtps to a relay that speaks plain SMTP)',
    failure: 'nothing_left',
    phase: 'tls',
    errorClass: 'tls_failed',
    peer: async ({ sink }) => ({ url: `smtps://127.0.0.1:${String(sink.port)}` }),
  },
  {
    name: 'greeting timeout',
    failure: 'nothing_left',
    phase: 'greeting',
    errorClass: 'greeting_timeout',
    peer: async () => {
      const silent = await startSilentPeer();
      return { url: `smtp://127.0.0.1:${String(silent.port)}`, stop: silent.stop };
    },
  },
  {
    name: '535 at AUTH',
    failure: 'config_broken',
    phase: 'auth',
    errorClass: 'smtp_535',
    code: 535,
    peer: async ({ authSink }) => ({ url: `smtp://relay-user:wrong@127.0.0.1:${String(authSink.port)}`, sink: authSink }),
  },
  {
    name: '530 at MAIL FROM (no credentials where the relay requires them)',
    failure: 'config_broken',
    phase: 'mail_from',
    errorClass: 'smtp_530',
    code: 530,
    peer: async ({ authSink }) => ({ url: authSink.url, sink: authSink }),
  },
  {
    name: '451 at RCPT',
    failure: 'nothing_left',
    phase: 'rcpt_to',
    errorClass: 'smtp_451',
    code: 451,
    peer: async ({ sink }) => ({ url: sink.url, sink, fault: { kind: 'reject', code: 451, at: 'rcpt', times: 1 } }),
  },
  {
    name: '550 at RCPT',
    failure: 'recipient_refused',
    phase: 'rcpt_to',
    errorClass: 'smtp_550',
    code: 550,
    peer: async ({ sink }) => ({ url: sink.url, sink, fault: { kind: 'reject', code: 550, at: 'rcpt', times: 1 } }),
  },
  {
    name: 'drop after DATA',
    failure: 'outcome_unknown',
    phase: 'body',
    errorClass: 'connection_lost',
    peer: async ({ sink }) => ({ url: sink.url, sink, fault: { kind: 'drop-after-data', times: 1 } }),
  },
];

describe('each phase ends as the table says, through the send path and a real SMTP peer', () => {
  it.each(cases.flatMap((c) => [true, false].map((pipelining) => ({ ...c, pipelining }))))(
    '$name → $failure (PIPELINING $pipelining)',
    async ({ failure, phase, errorClass, code, peer, pipelining }) => {
      expect(classifySmtpPhase(phase as Parameters<typeof classifySmtpPhase>[0], code ?? null)).toBe(failure);
      const target = await peer(relays.get(pipelining) as Relays);
      if (target.fault) target.sink?.setFault(target.fault);
      const mail: MailTransport = createMailTransport({
        smtpUrl: target.url,
        timeoutMs: 500,
        from: 'n@notices.test',
        messageIdDomain: 'notices.test',
        maxConnections: 2,
      });
      const logger = createLogger('test', 'silent');
      // A high threshold: only a config_broken failure opens the breaker on its first occurrence.
      const breakers = createTransportBreakers({
        db: t.db,
        probes: { smtp: mail.probe },
        settings: { threshold: 100, probeBaseMs: 60_000, probeCapMs: 60_000 },
        workerId: 'phase-test',
        logger,
      });
      const handle = createWakeupHandler({
        db: t.db,
        mail,
        rateLimiter: limiter,
        breakers,
        workerId: 'phase-test',
        logger,
        settings: {
          mode: 'enforce',
          noticeConfig: activeNoticeConfig().config,
          retryBaseMs: 1_000,
          retryCapMs: 10_000,
          maxAttempts: 8,
          secret: process.env.NOTICE_KEY_SECRET ?? '',
          cancelBaseUrl: 'https://notices.test',
          maxTokenWaitMs: 1_000,
        },
      });
      const job = await insertTestJob(t.db);
      const received = target.sink?.messages().length ?? 0;
      try {
        await handle({ wakeup: { jobId: job.id }, messageId: `phase-${job.id}`, signal: new AbortController().signal });
        const end = endsAs[failure];
        const after = await readJob(t.db, job.id);
        expect({ job: after.state, attempts: after.attempts, lastErrorClass: after.lastErrorClass }).toEqual({
          job: end.job,
          attempts: end.attempts,
          lastErrorClass: errorClass,
        });
        expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe(end.ledger);
        const attempts = await listAttemptsForJob(t.db, { jobId: job.id });
        expect(attempts.map((row) => [row.outcome, row.errorClass])).toEqual([[end.attempt, errorClass]]);
        // Only an unknown outcome may have left: the peer holds the body then, and nothing else.
        expect((target.sink?.messages().length ?? 0) - received).toBe(failure === 'outcome_unknown' ? 1 : 0);
        // Our configuration broken pauses the transport at once, for every worker's console to see.
        expect(breakers.isOpen('smtp')).toBe(failure === 'config_broken');
        if (failure === 'config_broken') {
          expect((await transportUp.get()).values.find((value) => value.labels.transport === 'smtp')?.value).toBe(0);
          await vi.waitFor(async () =>
            expect(await listTransportsDown(t.db)).toEqual([expect.objectContaining({ transport: 'smtp', reason: 'config_broken', errorClass, code })]),
          );
        }
      } finally {
        breakers.stop();
        mail.close();
        await target.stop?.();
      }
    },
  );
});
