import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countKeysByLedgerStateInRange, textArrayLiteral } from '@/db/queries/replay-dry-run';
import { noticeLedger } from '@/db/schema';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { countKeysAgainstLedger, sortedDistinctChunks } from './dry-run';
import { dryRunVerdict, wouldSendOf } from './verdict';

const hexKey = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('hex'));
/** Keys as an upload could hand them over: mostly hex, some not, with repeats. */
const keyList = fc
  .array(fc.oneof({ weight: 4, arbitrary: hexKey }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) }), { maxLength: 300 })
  .chain((keys) =>
    fc
      .tuple(fc.constant(keys), fc.array(fc.nat(Math.max(0, keys.length - 1)), { maxLength: keys.length === 0 ? 0 : 50 }))
      .map(([unique, repeats]) => [...unique, ...repeats.map((index) => unique[index] ?? '')]),
  );

describe('sortedDistinctChunks', () => {
  it('returns every distinct key once, sorted, in chunks of at most the chunk size', () => {
    fc.assert(
      fc.property(keyList, fc.integer({ min: 1, max: 40 }), (keys, chunkSize) => {
        const chunks = sortedDistinctChunks(keys, chunkSize);
        const flat = chunks.flat();
        expect(new Set(flat).size).toBe(flat.length);
        expect(new Set(flat)).toEqual(new Set(keys));
        for (const chunk of chunks) {
          expect(chunk.length).toBeGreaterThan(0);
          expect(chunk.length).toBeLessThanOrEqual(chunkSize);
        }
        // Only the last chunk may be short: the chunks are as few as they can be.
        expect(chunks.length).toBe(Math.ceil(flat.length / chunkSize));
        const hex = flat.filter((key) => /^[0-9a-f]{4}/.test(key));
        expect(hex).toEqual([...hex].sort());
      }),
    );
  });

  it('handles the edges: nothing, one key, a full chunk, one over, only repeats', () => {
    const keys = Array.from({ length: 7 }, () => randomBytes(32).toString('hex'));
    const sorted = [...keys].sort();
    expect(sortedDistinctChunks([], 3)).toEqual([]);
    expect(sortedDistinctChunks([keys[0] ?? ''], 3)).toEqual([[keys[0]]]);
    expect(sortedDistinctChunks(keys.slice(0, 3), 3)).toEqual([[...keys.slice(0, 3)].sort()]);
    expect(sortedDistinctChunks(keys.slice(0, 4), 3).map((chunk) => chunk.length)).toEqual([3, 1]);
    expect(sortedDistinctChunks([...keys, ...keys, ...keys], 3)).toEqual([sorted.slice(0, 3), sorted.slice(3, 6), sorted.slice(6)]);
    expect(sortedDistinctChunks(Array<string>(5).fill(keys[1] ?? ''), 3)).toEqual([[keys[1]]]);
  });

  it('sorts a large hex list exactly as Array.sort does (the bucketed path)', () => {
    const keys = Array.from({ length: 20_000 }, () => randomBytes(32).toString('hex'));
    expect(sortedDistinctChunks([...keys, ...keys.slice(0, 500)], 3_000).flat()).toEqual([...keys].sort());
  });
});

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('textArrayLiteral', () => {
  it('round-trips any text through PostgreSQL as a text[] parameter', async () => {
    const values = ['plain', '', 'NULL', 'a,b', '{x}', '"quoted"', 'back\\slash', ' spaced ', 'é ü ∑ 🙂', 'new\nline'];
    const result = await t.db.execute<{ values: string[] }>(sql`select ${textArrayLiteral(values)}::text[] as values`);
    expect(result.rows[0]?.values).toEqual(values);
  });
});

describe('countKeysAgainstLedger', () => {
  const states = ['sent', 'sent', 'claimed', 'released', 'suppressed'] as const;
  let known: string[] = [];

  beforeAll(async () => {
    known = states.map(() => randomBytes(32).toString('hex'));
    await t.db.insert(noticeLedger).values(
      states.map((state, index) => ({
        noticeKey: known[index] ?? '',
        noticeType: 'renewal_notice_t72',
        identity: {},
        state,
        sentAt: state === 'sent' ? new Date() : null,
        claimedBy: 'test',
      })),
    );
  });

  it('counts distinct keys by ledger state across chunk boundaries, whatever the chunk size', async () => {
    const unknown = Array.from({ length: 6 }, () => randomBytes(32).toString('hex'));
    // Repeats of known and unknown keys, and one key that is not hex.
    const keys = [...known, ...unknown, known[0] ?? '', unknown[2] ?? '', 'not-hex', known[4] ?? '', 'not-hex'];
    const expected = { total: 12, newKeys: 7, existing: { sent: 2, claimed: 1, released: 1, suppressed: 1 }, blocked: {} };
    for (const chunkSize of [1, 2, 5, 11, 12, 13, 50_000]) {
      expect(await countKeysAgainstLedger(t.db, { keys, chunkSize })).toEqual(expected);
    }
  });

  it('counts nothing for no keys, and one key on its own', async () => {
    expect(await countKeysAgainstLedger(t.db, { keys: [] })).toEqual({ total: 0, newKeys: 0, existing: {}, blocked: {} });
    expect(await countKeysAgainstLedger(t.db, { keys: [known[2] ?? ''] })).toEqual({ total: 1, newKeys: 0, existing: { claimed: 1 }, blocked: {} });
    expect(await countKeysAgainstLedger(t.db, { keys: [randomBytes(32).toString('hex')] })).toEqual({ total: 1, newKeys: 1, existing: {}, blocked: {} });
  });

  it('runs inside a caller transaction, one statement after the other, without leaving it broken', async () => {
    const keys = [...known, randomBytes(32).toString('hex')];
    const counts = await t.db.transaction(async (tx) => {
      const inside = await countKeysAgainstLedger(tx, { keys, chunkSize: 2 });
      const after = await tx.execute<{ one: number }>(sql`select 1 as one`);
      return { inside, after: after.rows[0]?.one };
    });
    expect(counts).toEqual({ inside: { total: 6, newKeys: 1, existing: { sent: 2, claimed: 1, released: 1, suppressed: 1 }, blocked: {} }, after: 1 });
  });

  it('finds keys that need quoting in the array parameter', async () => {
    const odd = ['a"b', 'c\\d', 'NULL', '{e,f}'];
    await t.db
      .insert(noticeLedger)
      .values(odd.map((noticeKey) => ({ noticeKey, noticeType: 'renewal_notice_t72', identity: {}, state: 'claimed' as const, claimedBy: 'test' })));
    expect(await countKeysByLedgerStateInRange(t.db, { keys: [...odd, 'absent'] })).toEqual({ total: 5, newKeys: 1, existing: { claimed: 4 }, blocked: {} });
  });

  it('counts as would-send only keys whose job would reach a send, and names the others', async () => {
    const hour = 3_600_000;
    const job = (over: Parameters<typeof insertTestJob>[1] = {}) => insertTestJob(t.db, over);
    const sendable = await job();
    const suppressed = await job({ state: 'suppressed' });
    const cancelled = await job({ state: 'cancelled' });
    const failed = await job({ state: 'failed' });
    const pastWindow = await job({ dueAt: new Date(Date.now() - 3 * hour), deadlineAt: new Date(Date.now() - hour) });
    // The ledger refuses this one anyway (sent): its job's state does not count twice.
    const refused = await job({ state: 'suppressed' });
    // Released for resend, but its window has closed: the send path would suppress it window_missed.
    const releasedLate = await job({ dueAt: new Date(Date.now() - 3 * hour), deadlineAt: new Date(Date.now() - hour) });
    await t.db.insert(noticeLedger).values([
      { noticeKey: refused.noticeKey, noticeType: 'renewal_notice_t72', identity: {}, state: 'sent', sentAt: new Date(), claimedBy: 'test' },
      { noticeKey: releasedLate.noticeKey, noticeType: 'renewal_notice_t72', identity: {}, state: 'released', claimedBy: 'test' },
    ]);
    const keys = [sendable, suppressed, cancelled, failed, pastWindow, refused, releasedLate].map((row) => row.noticeKey);
    const unknown = randomBytes(32).toString('hex');
    for (const chunkSize of [1, 3, 50_000]) {
      const counts = await countKeysAgainstLedger(t.db, { keys: [...keys, unknown], chunkSize });
      expect(counts).toEqual({
        total: 8,
        newKeys: 6,
        existing: { sent: 1, released: 1 },
        blocked: { suppressed: 1, cancelled: 1, failed: 1, past_window: 2 },
      });
      // The sendable job and the key no job has yet.
      expect(wouldSendOf(counts)).toBe(2);
      expect(dryRunVerdict(counts).message).toContain('Not counted as sends, their job stops them: 1 cancelled, 1 failed, 2 past their window, 1 suppressed.');
    }
  });
});
