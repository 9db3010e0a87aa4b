import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureProductionBuild } from '@/scripts/production-build';
import { runChaos, type ChaosOptions, type ChaosReport } from './chaos/harness';
import { createTestDatabase } from '@/testing/db';

/**
 * The chaos suite at a fixed seed and a small N (the full run is `npm run chaos`): the producer
 * API and the provider webhook of the built console under `next start`, three real worker
 * processes SIGKILLed and restarted, a sink that rejects, stalls past the visibility timeout
 * and drops after DATA, a relay that refuses connects for a while, every request posted twice,
 * the window replayed, provider events reconciled. Zero duplicates, zero lost, zero unresolved claims with evidence — and the chaos
 * must really have happened.
 */
const SEED = 20_261_129;

// vitest runs before Playwright in `npm test`, so this is usually the first to need a build
// of the current sources (a minute or two here, more on a busy machine, plus any wait for
// another process building the same tree); e2e then finds it fresh.
const BUILD_TIMEOUT_MS = 15 * 60_000;

beforeAll(async () => {
  await ensureProductionBuild({ root: path.resolve(import.meta.dirname, '..'), log: (line) => console.log(`chaos: ${line}`) });
}, BUILD_TIMEOUT_MS);

async function runFixedSeed(
  notices: number,
  extra: Partial<ChaosOptions> = {},
  { earlyWakeups = true }: { earlyWakeups?: boolean } = {},
): Promise<ChaosReport> {
  const t = await createTestDatabase();
  try {
    const report = await runChaos({
      seed: SEED,
      notices,
      databaseUrl: t.url,
      workers: 3,
      killEveryMs: [2_500, 6_000],
      settleTimeoutMs: 60_000,
      // Gives up (and stops every process it started) before vitest's own timeout would leave them running.
      signal: AbortSignal.timeout(160_000),
      ...extra,
    });
    console.log(report.table);
    expect(report.failures).toEqual([]);
    expect(report.counts).toMatchObject({ notices, lost: 0, duplicatesByCorrelation: 0, duplicatesByBusinessKey: 0, quarantinedWithEvidence: 0 });
    expect(report.counts.sent).toBeGreaterThan(notices / 2);
    expect(report.kills.kills).toBeGreaterThan(0);
    expect(report.producer.created).toBe(notices);
    expect(report.replay.state).toBe('completed');
    // Windows really constrained the run: wake-ups came before windows opened (or, where the run's
    // lag behind due wake-ups is the point, after they closed), and none was sent outside one.
    expect(report.counts.sentOutsideWindow).toBe(0);
    expect(report.windows.set).toBeGreaterThan(0);
    if (earlyWakeups) expect(report.windows.deferredEarly).toBeGreaterThan(0);
    else expect(report.windows.deferredEarly + report.windows.windowMissed).toBeGreaterThan(0);
    return report;
  } finally {
    await t.drop();
  }
}

const amqpUrl = process.env.AMQP_URL;

describe('chaos, fixed seed', () => {
  it(`seed ${SEED}, 500 notices: no duplicate, nothing lost, no claim left that the sink reported`, async () => {
    // The load case: 500 notices due within ~8 s, three workers killed every few seconds and a
    // relay outage, so the workers run tens of seconds behind the due wake-ups on a slow host
    // (2026-12-07: 1 of 112 windows woken before it opened, 37 missed). Its windows bind by being
    // missed as much as by deferring; the two cases below, at 300, must wake early.
    const report = await runFixedSeed(500, {}, { earlyWakeups: false });
    expect(Object.keys(report.faults).sort()).toEqual([
      'drop_after_data',
      'reject_451',
      'reject_550',
      'relay_outage',
      'sms_429',
      'sms_5xx',
      'sms_callbacks_dropped',
      'sms_callbacks_duplicated',
      'sms_callbacks_reordered',
      'sms_timeout',
      'sms_undelivered',
      'stall_past_timeout',
      'stall_past_visibility',
    ]);
    // The relay really went down (its port refusing connects) and came back mid-run.
    expect(report.relayOutage?.forMs).toBeGreaterThan(0);
    // Both channels really ran: SMS through the Twilio peer, its signed callbacks all accepted by the console.
    expect(report.sms.messages).toBeGreaterThan(20);
    expect(report.sms.callbacks).toBeGreaterThan(report.sms.messages);
    expect(report.sms.callbackFailures).toBe(0);
    expect(report.reconciliation.confirmedByEvents + report.reconciliation.confirmedByReconcile).toBeGreaterThan(0);
    // The claim really refused redeliveries (after kills, or while a stalled send was in flight).
    expect(report.attempts.suppressed_duplicate ?? 0).toBeGreaterThan(0);
  }, 180_000);

  // Through Postmark's batch API on its peer, whose faults leave whole batches unknown and which
  // posts no webhooks: every claim the peer holds must be settled by the workers' provider reconciler.
  it(`seed ${SEED}, 300 notices through the Postmark peer: no duplicate, nothing lost, every claim the peer holds settled by the provider reconciler`, async () => {
    // Early wake-ups are required: the windows that are not tight open 1–15 s after due
    // (test/chaos/plan.ts), past this run's lag (2026-12-07: 66 of 69 woken before; when they
    // opened 0.2–3 s after due, CI at 16:57 saw 0 before, 21 after).
    const report = await runFixedSeed(300, { provider: 'postmark' });
    const faults = Object.keys(report.faults).filter((name) => name.startsWith('postmark_'));
    expect(faults).toEqual(expect.arrayContaining(['postmark_429', 'postmark_406_inactive']));
    // Faults are drawn per request, and how many requests 300 notices make depends on how they
    // batch: a run draws a 5xx or a dropped connection after acceptance (or both), and either
    // leaves the claims only the reconciler can settle.
    expect(faults.filter((name) => name === 'postmark_5xx_after_accept' || name === 'postmark_drop_after_accept')).not.toEqual([]);
    expect(report.reconciliation.byProviderLookup?.found ?? 0).toBeGreaterThan(0);
    expect(report.reconciliation.eventsPosted).toBe(0);
  }, 180_000);

  // The same run with RabbitMQ as the queue (.ci/run sets AMQP_URL when a broker answers): the
  // dispatcher publishes due jobs, the broker redelivers what a killed worker held, the ledger still decides.
  it.skipIf(!amqpUrl)(
    `seed ${SEED}, 300 notices on RabbitMQ (not run without AMQP_URL): no duplicate, nothing lost, no claim left that the sink reported`,
    async () => {
      // Early wake-ups are required: a due job is published by the dispatcher's next pass (up to a
      // second after it is due), and the windows that are not tight open 1–15 s after due
      // (2026-12-07: 41 of 69 woken before; when they opened 0.2–3 s after due, 0–8 were).
      const report = await runFixedSeed(300, { rabbitmq: { url: amqpUrl ?? '' } });
      expect(report.replay.published).toBeGreaterThan(0);
    },
    180_000,
  );
});
