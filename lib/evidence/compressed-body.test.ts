import fc from 'fast-check';
import { brotliCompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyText, COMPRESS_FROM_BYTES, DAMAGED_BODY, storedBody } from '@/db/queries/evidence-body';
import { insertEvidenceEntries, listNoticeEntries } from '@/db/queries/evidence-record';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { chainAllPending } from './chain';
import { canonicalJson, sha256Hex } from './hash';
import { entryOf } from './record';
import { evidenceKeyRing } from './signing-keys';
import { verifyEvidenceChain } from './verify-chain';

/**
 * A long body (a send's rendered message) is stored Brotli-compressed with the hash its writer
 * computed (db/queries/evidence-body.ts). Readers get the exact text back; the chain links the
 * writer's hash, and the verification pass recomputes it from the body, so a compressed body or
 * a hash edited in the database is found as an edited text body is.
 */

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t?.drop();
});

const keys = evidenceKeyRing({ specs: [{ kid: 'k', secret: 'k'.repeat(40) }], noticeKeySecret: 'x'.repeat(32) });

const sendFacts = { html: '<p style="margin:0">Your plan renews on 1 March for 19,00 € — Grüße 😀</p>\n'.repeat(120), text: 'Renews 1 March.' };
/** A send's entry as the worker writes it: a rendered message of ~9 KB. */
const sendEntry = (noticeKey: string) => entryOf({ noticeKey, jobId: null, kind: 'notice.sent', body: sendFacts });
/** Its body's text, canonical JSON. */
const sendText = canonicalJson(sendFacts);

const stored = async (noticeKey: string) =>
  (
    await t.pool.query<{ body: string | null; body_brotli: Buffer | null; body_hash: string | null }>(
      'select body, body_brotli, body_hash from evidence_entries where notice_key = $1',
      [noticeKey],
    )
  ).rows[0];

describe('an evidence body in its stored form', () => {
  it('round-trips any text, compressed from 2 000 UTF-8 bytes on, with the SHA-256 of its bytes', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 400 }), fc.string({ unit: 'binary', minLength: 500, maxLength: 3_000 })), (body) => {
        const form = storedBody(body);
        const compressed = Buffer.byteLength(body, 'utf8') >= COMPRESS_FROM_BYTES;
        expect(form.brotli !== null).toBe(compressed);
        expect(bodyText(form.text, form.brotli)).toBe(body);
        if (form.brotli) expect(form.hash).toBe(sha256Hex(body));
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips a body larger than any before it, and a shorter one after it', () => {
    for (const body of ['€ – 😀 '.repeat(20_000), JSON.stringify({ html: 'x'.repeat(3_000) }), '😀'.repeat(700)]) {
      const form = storedBody(body);
      expect(form.hash).toBe(sha256Hex(body));
      expect(bodyText(form.text, form.brotli)).toBe(body);
    }
  });

  it('is written compressed by the send path, read back whole, chained on its hash, and verifies', async () => {
    const entry = sendEntry('k-whole');
    // entryOf made the stored form once; the writer takes it as it is.
    expect(entry.body.brotli).not.toBeNull();
    await insertEvidenceEntries(t.db, [entry]);
    const row = await stored('k-whole');
    expect(row?.body).toBeNull();
    expect(row?.body_hash).toBe(sha256Hex(sendText));
    expect(row?.body_brotli?.length).toBeLessThan(Buffer.byteLength(sendText) / 5);
    await chainAllPending(t.db);
    const [read] = await listNoticeEntries(t.db, { noticeKey: 'k-whole' });
    expect(read?.body).toBe(sendText);
    expect((await verifyEvidenceChain({ db: t.db, keys })).problems).toEqual([]);
  });

  describe('edited in the database', () => {
    const edits: Array<[string, (noticeKey: string) => Promise<void>]> = [
      [
        'another body, compressed as the writer would',
        async (noticeKey) => {
          const edited = Buffer.from(sendText.replace('19,00 €', '9,00 €'), 'utf8');
          await t.pool.query('update evidence_entries set body_brotli = $2 where notice_key = $1', [noticeKey, brotliCompressSync(edited)]);
        },
      ],
      [
        'one byte of the compressed body flipped',
        async (noticeKey) => {
          await t.pool.query(
            'update evidence_entries set body_brotli = set_byte(body_brotli, 40, (get_byte(body_brotli, 40) + 77) % 256) where notice_key = $1',
            [noticeKey],
          );
        },
      ],
    ];

    for (const [name, edit] of edits) {
      it(`after chaining: ${name}, found by the verification pass`, async () => {
        const noticeKey = `k-${name.slice(0, 12)}`;
        await insertEvidenceEntries(t.db, [sendEntry(noticeKey)]);
        await chainAllPending(t.db);
        expect((await verifyEvidenceChain({ db: t.db, keys })).problems).toEqual([]);
        await edit(noticeKey);
        const [read] = await listNoticeEntries(t.db, { noticeKey });
        expect(read?.body).not.toBe(sendText);
        expect((await verifyEvidenceChain({ db: t.db, keys })).problems).toEqual([
          expect.stringMatching(new RegExp(`^entry ${String(read?.seq)} \\(notice\\.sent, notice ${noticeKey.slice(0, 12)}.*does not match its hash`)),
        ]);
        // Put back, so that the next case starts from a chain that verifies.
        const original = storedBody(sendText);
        await t.pool.query('update evidence_entries set body_brotli = $2 where notice_key = $1', [noticeKey, original.brotli]);
        expect((await verifyEvidenceChain({ db: t.db, keys })).problems).toEqual([]);
      });
    }

    it('a flipped byte that no longer decompresses reads as a body that matches nothing, never as an error', () => {
      const form = storedBody(sendText);
      if (!form.brotli) throw new Error('not compressed');
      expect(bodyText(null, form.brotli.subarray(0, form.brotli.length - 9))).toBe(DAMAGED_BODY);
    });

    it("before chaining: a hash that is not the body's is chained as written, and the verification pass finds it", async () => {
      await insertEvidenceEntries(t.db, [sendEntry('k-hash')]);
      await t.pool.query("update evidence_entries set body_hash = repeat('0', 64) where notice_key = 'k-hash'");
      await chainAllPending(t.db);
      const [read] = await listNoticeEntries(t.db, { noticeKey: 'k-hash' });
      expect(read?.body).toBe(sendText);
      expect((await verifyEvidenceChain({ db: t.db, keys })).problems).toEqual([
        expect.stringMatching(new RegExp(`^entry ${String(read?.seq)} .*does not match its hash`)),
      ]);
    });
  });
});
