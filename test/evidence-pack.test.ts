import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST as cancelRoute } from '@/app/r/[token]/cancel/route';
import { GET as pageRoute } from '@/app/r/[token]/route';
import { GET as evidenceRoute } from '@/app/api/v1/notices/[id]/evidence/route';
import { GET as keysRoute } from '@/app/.well-known/notice-ledger/keys.json/route';
import { deleteAttemptsBefore, deleteProviderEventsBefore } from '@/db/queries/retention';
import { createApiToken } from '@/lib/auth/api-tokens';
import { ingestEvents } from '@/lib/events/ingest';
import { createWakeupHandler, type SendPathSettings } from '@/lib/jobs/handle-wakeup';
import { createDomainRateLimiter } from '@/lib/jobs/rate-limit';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createLogger } from '@/lib/log';
import { createMailTransport } from '@/lib/mail/transport';
import { activeNoticeConfig } from '@/lib/windows/active';
import { patchEnv } from '@/test/fuzz/harness';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { oneTimeCodeIn, recipientLinkIn, tokenOf } from '@/testing/recipient';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { startLocalTsa } from '@/testing/tsa';
import { exportEvidenceForSupport } from '@/lib/console/evidence';
import { lookupNotices } from '@/lib/console/lookup';
import { verifyPackFile } from '@/scripts/evidence-cli';
import type { EvidencePack } from '@/lib/api/evidence';
import { chainAllPending } from '@/lib/evidence/chain';
import { exportNoticeEvidence } from '@/lib/evidence/export';
import { createEvidenceRecorder, parseEvidenceSelection } from '@/lib/evidence/record';
import { signChainHead } from '@/lib/evidence/sign';
import { evidenceKeyRing, publicKeySet, type EvidenceKeyRing } from '@/lib/evidence/signing-keys';
import { runEvidenceVerification, verifyEvidenceChain } from '@/lib/evidence/verify-chain';
import { evidenceChainBroken } from '@/lib/metrics/evidence';
import { verifyEvidencePack } from '@/lib/evidence/verify-pack';
import { entryHashOf, sha256Hex } from '@/lib/evidence/hash';
import { listChainedAfter } from '@/db/queries/evidence-record';

/**
 * A required notice's evidence from end to end, on a real database: the send path to the SMTP
 * sink, the provider's delivery event, the recipient's cancel through the page's own route, then
 * the chainer and the signer, and the pack from the producer API — verified, tampered with part by
 * part, edited in the database after signing, signed again after a key rotation, and exported
 * again after the attempts and provider events were pruned.
 */

const base = 'https://notices.test';
let t: TestDatabase;
let sink: SmtpSink;
let restoreEnv: () => void;
const oldKeys = evidenceKeyRing({ specs: [{ kid: 'old', secret: 'o'.repeat(40) }], noticeKeySecret: 'x'.repeat(32) });
const dir = mkdtempSync(path.join(os.tmpdir(), 'evidence-pack-'));

const settings: SendPathSettings = {
  mode: 'enforce',
  noticeConfig: activeNoticeConfig().config,
  retryBaseMs: 1_000,
  retryCapMs: 10_000,
  maxAttempts: 3,
  secret: process.env.NOTICE_KEY_SECRET ?? '',
  cancelBaseUrl: base,
  maxTokenWaitMs: 1_000,
};

async function sendRequiredNotice() {
  const limiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 });
  const mail = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'Notices <n@notices.test>', messageIdDomain: 'notices.test' });
  const { config, ruleSet } = activeNoticeConfig();
  const handler = createWakeupHandler({
    db: t.db,
    mail,
    rateLimiter: limiter,
    settings,
    workerId: 'evidence-test',
    logger: createLogger('test', 'silent'),
    evidence: createEvidenceRecorder({
      selection: parseEvidenceSelection('required'),
      context: { config, ruleSet, messageIdDomain: 'notices.test' },
    }),
  });
  const job = await insertTestJob(t.db, {
    fact: { type: 'auto_renewal_notice', identity: { subscription_id: `sub_${String(Date.now())}`, period_start: '2027-01-01' }, revision: 0 },
    category: 'required',
    // As the planner stores them (lib/windows/rules.ts ruleRef): id@version.
    ruleIds: ['US-CA/arl-annual@1'],
    ruleSetVersion: ruleSet.version,
  });
  await handler({ wakeup: { jobId: job.id }, messageId: 'm1', signal: new AbortController().signal });
  const [message] = await sink.waitFor((messages) => messages.some((m) => m.correlation === correlationOf(job.noticeKey)));
  if (!message) throw new Error('no message');
  return { job, message };
}

async function signAll(keys: EvidenceKeyRing, tsaUrl: string | null = null) {
  await chainAllPending(t.db);
  await signChainHead({ db: t.db, keys, tsaUrl });
}

async function apiPack(id: string, token: string): Promise<EvidencePack> {
  const response = await evidenceRoute(new Request(`${base}/api/v1/notices/${id}/evidence`, { headers: { authorization: `Bearer ${token}` } }), {
    params: Promise.resolve({ id }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as EvidencePack;
}

const jwks = (keys: EvidenceKeyRing) => publicKeySet(keys);

/** The HTML part of a raw message the SMTP sink received: quoted-printable decoded as UTF-8 bytes, line breaks as LF. */
function htmlPartOf(raw: string): string {
  const part = /Content-Type: text\/html[^\r\n]*\r?\nContent-Transfer-Encoding: quoted-printable\r?\n\r?\n([\s\S]*?)\r?\n--/i.exec(raw)?.[1];
  if (part === undefined) throw new Error('no quoted-printable HTML part');
  const bytes: number[] = [];
  const flat = part.replace(/=\r?\n/g, '');
  for (let i = 0; i < flat.length; i += 1) {
    if (flat[i] === '=' && /^[0-9A-F]{2}$/.test(flat.slice(i + 1, i + 3))) {
      bytes.push(parseInt(flat.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(flat.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8').replace(/\r\n/g, '\n');
}

let sent: Awaited<ReturnType<typeof sendRequiredNotice>>;
let token: string;
let pack: EvidencePack;

beforeAll(async () => {
  t = await createTestDatabase();
  sink = await startSmtpSink();
  restoreEnv = patchEnv({ DATABASE_URL: t.url, PUBLIC_BASE_URL: base, EVIDENCE_SIGNING_KEYS: `old:${'o'.repeat(40)}` });
  token = (await createApiToken(t.db, { name: 'evidence', createdBy: null, scopes: ['notices:read'], actor: 'test' })).token;
  sent = await sendRequiredNotice();
  // The provider says delivered; the recipient opens the page and asks to cancel with the mail's code.
  await ingestEvents(t.db, {
    events: [
      {
        provider: 'generic',
        eventId: `ev-${sent.job.id}`,
        type: 'delivered',
        rawType: 'delivered',
        correlationId: correlationOf(sent.job.noticeKey),
        messageId: sent.message.messageId,
        providerMessageId: null,
        recipient: sent.job.recipientEmail,
        bounceType: null,
        occurredAt: new Date(),
        details: {},
      },
    ],
  });
  const link = recipientLinkIn(sent.message.raw) ?? '';
  const pageToken = tokenOf(link);
  const headers = { 'user-agent': 'EvidenceTest/1.0', 'x-forwarded-for': '203.0.113.7' };
  expect((await pageRoute(new Request(link, { headers }), { params: Promise.resolve({ token: pageToken }) })).status).toBe(200);
  const cancel = await cancelRoute(
    new Request(`${link}/cancel`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: `code=${oneTimeCodeIn(sent.message.raw) ?? ''}`,
    }),
    { params: Promise.resolve({ token: pageToken }) },
  );
  expect(cancel.status).toBe(200);
  await signAll(oldKeys);
  pack = await apiPack(sent.job.id, token);
});

afterAll(async () => {
  restoreEnv?.();
  await sink?.stop();
  await t?.drop();
});

describe('the evidence pack', () => {
  it('holds everything the notice went through, and verifies', async () => {
    expect(pack.unsignedEntries).toBe(0);
    expect(pack.entries.map((entry) => entry.kind)).toEqual(['notice.sent', 'provider.event', 'recipient.page_view', 'recipient.cancel_request']);
    const record = pack.record as { fact: { noticeType: string; identityDigest: string }; shown: { cancelLink: string }; customer: { userAgent: string }[] };
    expect(record.fact.noticeType).toBe('auto_renewal_notice');
    expect(JSON.stringify(pack)).not.toContain(sent.job.identity.subscription_id);
    expect(record.shown.cancelLink).toBe(recipientLinkIn(sent.message.raw));
    expect(record.customer.map((action) => action.userAgent)).toEqual(['EvidenceTest/1.0', 'EvidenceTest/1.0']);
    expect((pack.message as { subject: string }).subject).toBe(sent.message.subject);
    expect(pack.stripe.cancellation_rebuttal).toContain('asked to cancel');
    const rule = activeNoticeConfig().ruleSet.rules.find((candidate) => candidate.id === 'US-CA/arl-annual');
    expect(pack.stripe.cancellation_policy_disclosure).toContain(`${rule?.title ?? '?'} (${rule?.sourceUrl ?? '?'})`);
    expect(await verifyEvidencePack(pack, { publicKeys: jwks(oldKeys) })).toMatchObject({ ok: true, failures: [] });
  });

  it('keeps the HTML as its template pieces, once, and what this notice filled in: the pack joins them back to the HTML the customer received', async () => {
    const sentBody = JSON.parse(pack.entries[0]?.body ?? '{}') as { message: Record<string, unknown> };
    expect(sentBody.message.html).toBeUndefined();
    expect(sentBody.message.htmlTrace).toMatchObject({ pieces: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // The layout's markup is not in the entry: a ~14 KB body before, now a few KB.
    expect(pack.entries[0]?.body.length).toBeLessThan(5_000);
    // The layout's pieces and the body template's.
    expect(Object.keys(pack.pieces ?? {})).toHaveLength(2);
    const html = (pack.message as { html: string }).html;
    expect(html.length).toBeGreaterThan(5_000);
    expect(html.replace(/\r\n/g, '\n')).toBe(htmlPartOf(sent.message.raw));
    // One row per template, however many notices name it.
    expect(Number((await t.pool.query<{ n: string }>('select count(*) as n from evidence_pieces')).rows[0]?.n)).toBe(2);
  });

  it('is the same pack by notice key, and the keys route publishes the key; the CLI verifies it with no database', async () => {
    const byKey = await apiPack(sent.job.noticeKey, token);
    expect({ ...byKey, exportedAt: '' }).toEqual({ ...pack, exportedAt: '' });
    const keys = (await (await keysRoute(new Request(`${base}/.well-known/notice-ledger/keys.json`))).json()) as unknown;
    expect(keys).toEqual(jwks(oldKeys));
    const file = path.join(dir, 'pack.json');
    const keyFile = path.join(dir, 'keys.json');
    writeFileSync(file, JSON.stringify(pack));
    writeFileSync(keyFile, JSON.stringify(keys));
    const lines: string[] = [];
    const io = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
    expect(await verifyPackFile([file, '--key', keyFile], io)).toBe(0);
    expect(lines.join('\n')).toContain('the pack holds: 4 entries');
  });

  it('is the same pack from the console lookup, audited, whose timeline shows each entry recorded and its signed head', async () => {
    const fromConsole = await exportEvidenceForSupport(t.db, { id: sent.job.noticeKey, actor: 'support@example.com', baseUrl: base });
    if (!fromConsole.ok) throw new Error(fromConsole.refusal.message);
    expect({ ...fromConsole.data, exportedAt: '' }).toEqual({ ...pack, exportedAt: '' });
    const audit = await t.pool.query(`select actor from audit_log where action = 'evidence.export' and target_id = $1`, [sent.job.noticeKey]);
    expect(audit.rows).toEqual([{ actor: 'support@example.com' }]);
    const found = await lookupNotices(t.db, { query: sent.job.noticeKey, secret: settings.secret, messageIdDomain: 'notices.test' });
    const timeline = found.ok ? (found.data.notices[0]?.timeline ?? []) : [];
    const recorded = timeline.filter((entry) => entry.title.startsWith('Evidence recorded'));
    expect(recorded.map((entry) => entry.title)).toEqual([
      'Evidence recorded: the message as sent',
      'Evidence recorded: a provider event',
      'Evidence recorded: the recipient opened the page',
      'Evidence recorded: the recipient asked to cancel',
    ]);
    expect(recorded.every((entry) => entry.facts.some((f) => f.label === 'signed head' && f.value !== 'not signed yet'))).toBe(true);
  });

  it('names the part that was changed: the record, the message, a chain entry, the signature', async () => {
    const tampered = (change: (copy: EvidencePack) => void) => {
      const copy = structuredClone(pack);
      change(copy);
      return verifyEvidencePack(copy, { publicKeys: jwks(oldKeys) });
    };
    const flip = (text: string, at: number) => `${text.slice(0, at)}${text[at] === 'a' ? 'b' : 'a'}${text.slice(at + 1)}`;
    const cases: [string, (copy: EvidencePack) => void, RegExp][] = [
      ['record', (copy) => ((copy.record.fact as { anchorAt: string }).anchorAt = '2020-01-01T00:00:00.000Z'), /^record:/],
      ['message', (copy) => ((copy.message as { html: string }).html = flip((copy.message as { html: string }).html, 100)), /^message:/],
      [
        'entry body',
        (copy) => (copy.entries[3] = { ...(copy.entries[3] as EvidencePack['entries'][number]), body: flip(copy.entries[3]?.body ?? '', 20) }),
        /^chain entry 4 \(recipient.cancel_request\): its content/,
      ],
      [
        'entry hash',
        (copy) => (copy.entries[1] = { ...(copy.entries[1] as EvidencePack['entries'][number]), prevHash: '0'.repeat(64) }),
        /^chain entry 2 .*its content/,
      ],
      ['inclusion path', (copy) => copy.entries[0]?.proof.path.reverse(), /^chain entry 1 .*inclusion path/],
      [
        'signature',
        (copy) =>
          (copy.signedHeads[0] = { ...(copy.signedHeads[0] as EvidencePack['signedHeads'][number]), signature: flip(copy.signedHeads[0]?.signature ?? '', 5) }),
        /^signed head 4: signature/,
      ],
      [
        'template pieces',
        (copy) => {
          const [digest, texts] = Object.entries(copy.pieces ?? {})[0] ?? ['', []];
          (copy.pieces ?? {})[digest] = texts.map((text, i) => (i === 0 ? flip(text, 10) : text));
        },
        /^template pieces [0-9a-f]{12}…: the template's static text differs/,
      ],
      ['template pieces left out', (copy) => delete copy.pieces, /^message: its HTML cannot be joined .*are not there/],
    ];
    for (const [name, change, failure] of cases) {
      const verdict = await tampered(change);
      expect(verdict.ok, name).toBe(false);
      expect(
        verdict.failures.some((line) => failure.test(line)),
        `${name}: ${verdict.failures.join(' | ')}`,
      ).toBe(true);
    }
    // Every byte of the rendered message's entry body counts.
    const body = pack.entries[0]?.body ?? '';
    for (const at of [0, Math.floor(body.length / 2), body.length - 1]) {
      expect((await tampered((copy) => (copy.entries[0] = { ...(copy.entries[0] as EvidencePack['entries'][number]), body: flip(body, at) }))).ok).toBe(false);
    }
  });

  it('keeps an old pack verifying after a key rotation, and signs new heads with the new key', async () => {
    const rotated = evidenceKeyRing({
      specs: [
        { kid: 'new', secret: 'n'.repeat(40) },
        { kid: 'old', secret: 'o'.repeat(40) },
      ],
      noticeKeySecret: 'x'.repeat(32),
    });
    const later = await sendRequiredNotice();
    const tsa = await startLocalTsa();
    await signAll(rotated, tsa.url);
    await tsa.stop();
    const fresh = (await exportNoticeEvidence(t.db, { id: later.job.id, baseUrl: base })) as { ok: true; data: EvidencePack };
    expect(fresh.data.signedHeads.map((head) => head.kid)).toEqual(['new']);
    expect(await verifyEvidencePack(fresh.data, { publicKeys: jwks(rotated) })).toMatchObject({
      ok: true,
      checked: { timestamps: 1, tsa: [expect.stringContaining('notice-ledger test TSA')] },
    });
    const stamped = structuredClone(fresh.data);
    const head = stamped.signedHeads[0] as EvidencePack['signedHeads'][number];
    head.timestampToken = Buffer.from(
      Buffer.from(head.timestampToken ?? '', 'base64').map((byte, i, all) => (i === all.length - 3 ? byte ^ 1 : byte)),
    ).toString('base64');
    expect((await verifyEvidencePack(stamped, { publicKeys: jwks(rotated) })).failures).toEqual([expect.stringMatching(/^signed head \d+: timestamp token:/)]);
    expect((await verifyEvidencePack(pack, { publicKeys: jwks(rotated) })).ok).toBe(true);
    // Control: without the old key the old pack does not verify.
    expect((await verifyEvidencePack(pack, { publicKeys: { keys: jwks(rotated).keys.filter((key) => key.kid === 'new') } })).failures).toEqual([
      'signed head 4: key old is not among the public keys',
    ]);
  });

  it('is whole after attempts and provider events are pruned under their own retention', async () => {
    const future = new Date(Date.now() + 86_400_000);
    expect(await deleteAttemptsBefore(t.db, { before: future, limit: 1_000 })).toBeGreaterThan(0);
    expect(await deleteProviderEventsBefore(t.db, { before: future, limit: 1_000 })).toBeGreaterThan(0);
    const again = await apiPack(sent.job.id, token);
    expect({ ...again, exportedAt: '' }).toEqual({ ...pack, exportedAt: '' });
    expect((await verifyEvidencePack(again, { publicKeys: jwks(oldKeys) })).ok).toBe(true);
  });

  it('finds a row edited after signing: in the verification pass and in a fresh export', async () => {
    const rotated = evidenceKeyRing({
      specs: [
        { kid: 'new', secret: 'n'.repeat(40) },
        { kid: 'old', secret: 'o'.repeat(40) },
      ],
      noticeKeySecret: 'x'.repeat(32),
    });
    await runEvidenceVerification({ db: t.db, keys: rotated });
    expect((await evidenceChainBroken.get()).values[0]?.value).toBe(0);
    await t.pool.query(
      `update evidence_entries set body = replace(body, 'EvidenceTest/1.0', 'Edited/1.0') where notice_key = $1 and kind = 'recipient.cancel_request'`,
      [sent.job.noticeKey],
    );
    const pass = await verifyEvidenceChain({ db: t.db, keys: rotated });
    expect(pass.problems).toEqual([expect.stringMatching(/^entry 4 \(recipient.cancel_request.*does not match its hash/)]);
    await runEvidenceVerification({ db: t.db, keys: rotated });
    expect((await evidenceChainBroken.get()).values[0]?.value).toBe(1);
    const edited = await apiPack(sent.job.id, token);
    const verdict = await verifyEvidencePack(edited, { publicKeys: jwks(rotated) });
    expect(verdict.ok).toBe(false);
    expect(verdict.failures).toContain('chain entry 4 (recipient.cancel_request): its content does not match its hash');
  });

  it('finds stored template pieces edited after the entries naming them were signed: in the verification pass and in a fresh export', async () => {
    const rotated = evidenceKeyRing({ specs: [{ kid: 'old', secret: 'o'.repeat(40) }], noticeKeySecret: 'x'.repeat(32) });
    const before = await verifyEvidenceChain({ db: t.db, keys: rotated });
    expect(before.problems.filter((problem) => problem.startsWith('template pieces'))).toEqual([]);
    const edited = await t.pool.query(`update evidence_pieces set texts = replace(texts, 'cancel', 'keep') where texts like '%cancel%'`);
    expect(edited.rowCount).toBe(1);
    const pass = await verifyEvidenceChain({ db: t.db, keys: rotated });
    expect(pass.problems).toContainEqual(expect.stringMatching(/^template pieces [0-9a-f]{12}…: their text does not match their digest$/));
    const verdict = await verifyEvidencePack(await apiPack(sent.job.id, token), { publicKeys: jwks(rotated) });
    expect(verdict.failures).toContainEqual(expect.stringMatching(/^template pieces [0-9a-f]{12}…: the template's static text differs/));
    await t.pool.query(`update evidence_pieces set texts = replace(texts, 'keep', 'cancel') where texts like '%keep%'`);
  });

  it('finds an edit whose writer also recomputed the entry hash: the next link and the signed head no longer agree', async () => {
    const rotated = evidenceKeyRing({
      specs: [
        { kid: 'new', secret: 'n'.repeat(40) },
        { kid: 'old', secret: 'o'.repeat(40) },
      ],
      noticeKeySecret: 'x'.repeat(32),
    });
    const [row] = (await listChainedAfter(t.db, { afterSeq: 3, limit: 1 })).filter((entry) => entry.seq === 4);
    if (!row) throw new Error('no entry 4');
    const entryHash = entryHashOf({
      seq: 4,
      prevHash: row.prevHash,
      noticeKey: row.noticeKey,
      kind: row.kind,
      recordedAt: row.recordedAt,
      bodyHash: sha256Hex(row.body),
    });
    await t.pool.query('update evidence_chain set entry_hash = $1 where seq = 4', [entryHash]);
    const pass = await verifyEvidenceChain({ db: t.db, keys: rotated });
    expect(pass.problems).toEqual([
      "entry 5: prev_hash is not entry 4's hash",
      'signed head 4: entries 1–4 are not the ones signed',
      'signed head 4: the head entry is not the one signed',
    ]);
    const verdict = await verifyEvidencePack(await apiPack(sent.job.id, token), { publicKeys: jwks(rotated) });
    expect(verdict.ok).toBe(false);
    expect(verdict.failures).toContain('chain entry 4 (recipient.cancel_request): its inclusion path does not lead to signed head 4');
  });
});
