import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, createPool } from '@/db/client';
import { createLogger } from '@/lib/log';
import { renderNotice } from '@/lib/mail/render';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { storedTracePieces } from './pieces';
import { forEvidence, sendEntryBody } from './record';

/**
 * A send's HTML goes into its entry as a trace naming the template pieces (lib/templates/trace.ts),
 * which the worker stores before the entry's commit (./pieces.ts): once per process per template,
 * refreshed at most every 6 hours. When they cannot be stored, the entry holds the whole HTML,
 * joined from the trace, byte for byte what was rendered.
 */

let t: TestDatabase;
const pools: { end: () => Promise<void> }[] = [];
const { config, ruleSet } = activeNoticeConfig();
const log = createLogger('test', 'silent');

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
  await t?.drop();
});

async function rendered() {
  const job = await insertTestJob(t.db, {
    fact: { type: 'auto_renewal_notice', identity: { subscription_id: `sub_${String(Math.random())}`, period_start: '2027-01-01' }, revision: 0 },
    category: 'required',
  });
  const mail = await renderNotice({ config, job, oneTimeCode: 'ABCDEFGH23', links: { manage: 'https://notices.test/r/abc' }, traceHtml: true });
  return { job, mail };
}

const lastUsed = async () =>
  (await t.pool.query<{ digest: string; last_used_at: Date }>('select digest, last_used_at from evidence_pieces order by digest')).rows.map((row) => [
    row.digest,
    row.last_used_at.toISOString(),
  ]);

describe("a send's template pieces", () => {
  it('are stored by the first send that names them, and only said to be in use again after 6 hours', async () => {
    const { mail } = await rendered();
    if (!mail.htmlTrace) throw new Error('the shipped template renders compiled, with a trace');
    const pool = createPool(t.url, { max: 2 });
    pools.push(pool);
    const db = createDb(pool);
    const now = Date.now();
    expect(await storedTracePieces(db, mail.htmlTrace, log, now)).toBe(true);
    const first = await lastUsed();
    expect(first).toHaveLength(2);
    // Within the 6 hours: a resolved promise, no statement (last_used_at unchanged).
    expect(await storedTracePieces(db, (await rendered()).mail.htmlTrace, log, now + 3_600_000)).toBe(true);
    expect(await lastUsed()).toEqual(first);
    // After them: the rows are said to be in use again.
    expect(await storedTracePieces(db, mail.htmlTrace, log, now + 7 * 3_600_000)).toBe(true);
    const refreshed = await lastUsed();
    expect(refreshed.map(([digest]) => digest)).toEqual(first.map(([digest]) => digest));
    expect(refreshed.every(([, at], i) => (at ?? '') > (first[i]?.[1] ?? ''))).toBe(true);
  });

  it('when they cannot be stored, the entry holds the whole HTML as rendered; when they can, only the trace', async () => {
    const { job, mail } = await rendered();
    const facts = {
      job,
      rendered: forEvidence({ channel: 'email', ...mail }),
      manageUrl: 'https://notices.test/r/abc',
      claimCommittedAt: new Date(),
      sendStartedAt: new Date(),
      sendFinishedAt: new Date(),
      providerMessageId: null,
      outcome: 'accepted',
    };
    // The capture does not hold the HTML string across the send, only its trace.
    expect(facts.rendered).toMatchObject({ html: null, htmlTrace: expect.any(Object) });
    // A database the pieces cannot reach (nothing listens there): the insert fails, and is logged.
    const nowhere = createPool('postgres://nobody:wrong@127.0.0.1:1/none', { max: 1 });
    pools.push(nowhere);
    const broken = createDb(nowhere);
    const stored = await storedTracePieces(broken, mail.htmlTrace, log);
    expect(stored).toBe(false);
    const context = { config, ruleSet, messageIdDomain: 'notices.test' };
    const whole = sendEntryBody(context, { ...facts, piecesStored: stored }) as { message: Record<string, unknown> };
    expect(whole.message.html).toBe(mail.html);
    expect(whole.message.htmlTrace).toBeUndefined();
    const traced = sendEntryBody(context, { ...facts, piecesStored: true }) as { message: Record<string, unknown> };
    expect(traced.message.html).toBeUndefined();
    expect(JSON.stringify(traced.message.htmlTrace).length).toBeLessThan(mail.html.length / 5);
  });
});
