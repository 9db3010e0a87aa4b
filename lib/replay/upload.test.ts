import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { noticeKey } from '@/lib/ledger/notice-key';
import { parseCsv, toCsv } from './csv';
import type { CsvRecord } from './csv-stream';
import { rejectionsCsv, validateUpload } from './upload';

const secret = 'unit-secret-0123456789abcdef0123456789abcdef';
const header =
  'notice_type,subscription_id,period_start,account_id,reconciliation_id,exception_id,revision,recipient_email,recipient_time_zone,due_at,deadline_at,payload,anchor_at';
const due = '2026-11-28T08:00:00Z';
const deadline = '2026-11-29T08:00:00Z';
const anchor = '2026-12-01T00:00:00Z';
/** A JSON object as one CSV field. */
const csvJson = (value: unknown) => `"${JSON.stringify(value).replace(/"/g, '""')}"`;
/** What the renewal and the payment recovery templates declare (config/notice-ledger.json `templates`). */
const renewal = { customer_name: 'Ada Lovelace', plan_name: 'Pro annual', amount: '49.00', currency: 'EUR' };
const recovery = { customer_name: 'Ada Lovelace', amount: '120.50', currency: 'EUR', reference: 'RC-2026-0042' };
/** Rows of `header`, each given the anchor column last. */
const withAnchor = (rows: string[]) => rows.map((row) => `${row},${anchor}`);

describe('parseCsv', () => {
  it('handles quotes, escaped quotes, commas and line breaks inside fields, CRLF and a BOM', () => {
    const records = parseCsv('\ufeffa,b\r\n"x, y","say ""hi"""\r\n"multi\nline",z\n\n3,4');
    expect(records).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['x, y', 'say "hi"'] },
      { line: 3, fields: ['multi\nline', 'z'] },
      { line: 6, fields: ['3', '4'] },
    ]);
  });

  it('round-trips through toCsv', () => {
    const rows = [
      ['a,b', 'c"d', 'e\nf'],
      ['', 'plain', '1'],
    ];
    expect(parseCsv(toCsv(rows)).map((record) => record.fields)).toEqual(rows);
  });

  it('neutralises spreadsheet formulas on export', () => {
    expect(toCsv([['=SUM(A1)', '-3', '@x']])).toBe("'=SUM(A1),-3,'@x\r\n");
  });

  it('escapes every cell OWASP lists: = + - @, tab and carriage return first, a sign before a formula too', () => {
    expect(toCsv([["-1+cmd|' /C calc'!A0", '+1+1', '-2.5', '0.25', '\tSUM(A1)', '\r=1', '1-2']])).toBe(
      "'-1+cmd|' /C calc'!A0,'+1+1,-2.5,0.25,'\tSUM(A1),\"'\r=1\",1-2\r\n",
    );
  });
});

/** The parser as it was (one string append per character), kept as the reference for the slicing one. */
function referenceParseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  let index = 0;
  const input = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const endRecord = () => {
    fields.push(field);
    field = '';
    if (!(fields.length === 1 && fields[0] === '')) records.push({ line: recordLine, fields });
    fields = [];
  };
  while (index < input.length) {
    const char = input[index];
    if (quoted) {
      if (char === '"') {
        if (input[index + 1] === '"') {
          field += '"';
          index += 2;
          continue;
        }
        quoted = false;
      } else {
        if (char === '\n') line += 1;
        field += char;
      }
      index += 1;
      continue;
    }
    if (char === '"' && field === '') {
      quoted = true;
    } else if (char === ',') {
      fields.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && input[index + 1] === '\n') index += 1;
      endRecord();
      line += 1;
      recordLine = line;
    } else {
      field += char;
    }
    index += 1;
  }
  if (field !== '' || fields.length > 0) endRecord();
  return records;
}

describe('parseCsv against the previous parser', () => {
  it('gives the same records and line numbers for any text of CSV-significant characters', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', ' ', ',', '"', '\n', '\r', '\ufeff', 'é', '\ud83d\ude00'), maxLength: 120 });
    fc.assert(
      fc.property(text, (input) => {
        expect(parseCsv(input)).toEqual(referenceParseCsv(input));
      }),
      { numRuns: 5000 },
    );
  });

  it('reads back what toCsv wrote', () => {
    const cell = fc.string({ unit: fc.constantFrom('x', ',', '"', '\n', '\r', ' ', '=', '-'), maxLength: 8 });
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 2, maxLength: 5 }), { maxLength: 6 }), (rows) => {
        expect(parseCsv(toCsv(rows)).map((record) => record.fields.map((value) => value.replace(/^'(?=[=+\-@\t\r])/, '')))).toEqual(rows);
      }),
    );
  });
});

describe('validateUpload', () => {
  it('accepts good rows with their keys and rejects each bad row with its line and reason', () => {
    const csv = [
      header,
      ...withAnchor([
        `renewal_notice_t72,sub_1,2026-12-01,,,,0,A@Example.com,Europe/Berlin,${due},${deadline},${csvJson(renewal)}`,
        `payment_recovery,,,acct_1,recon_1,exc_1,2,billing@example.com,,${due},${deadline},${csvJson(recovery)}`,
        `renewal_notice_t99,sub_2,2026-12-01,,,,0,a@example.com,,${due},${deadline},`,
        `renewal_notice_t72,,2026-12-01,,,,0,a@example.com,,${due},${deadline},`,
        `renewal_notice_t72,sub_3,2026-12-01,,,,x1,a@example.com,,${due},${deadline},`,
        `renewal_notice_t72,sub_4,2026-12-01,,,,0,not-an-email,,${due},${deadline},`,
        `renewal_notice_t72,sub_5,2026-12-01,,,,0,a@example.com,Mars/Olympus,${due},${deadline},`,
        `renewal_notice_t72,sub_6,2026-12-01,,,,0,a@example.com,,tomorrow,${deadline},`,
        `renewal_notice_t72,sub_7,2026-12-01,,,,0,a@example.com,,${deadline},${due},`,
        `renewal_notice_t72,sub_1,2026-12-01,,,,0,b@example.com,,${due},${deadline},${csvJson(renewal)}`,
        `renewal_notice_t72,sub_8,2026-12-01,,,,0,a@example.com,,${due},${deadline},[1]`,
      ]),
      'renewal_notice_t72,sub_9',
      `renewal_notice_t72,sub|x,2026-12-01,,,,0,a@example.com,,${due},${deadline},,${anchor}`,
    ].join('\n');
    const result = validateUpload({ csv, secret });
    if (!result.ok) throw new Error(result.error);
    expect(result.rows.map((row) => row.line)).toEqual([2, 3]);
    const [first, second] = result.rows;
    expect(first).toMatchObject({ recipientEmail: 'a@example.com', recipientTimeZone: 'Europe/Berlin', payload: renewal, subjectId: 'sub_1' });
    expect(first?.key).toBe(noticeKey(secret, { type: 'renewal_notice_t72', identity: { subscription_id: 'sub_1', period_start: '2026-12-01' }, revision: 0 }));
    expect(second?.fact).toEqual({
      type: 'payment_recovery',
      identity: { account_id: 'acct_1', reconciliation_id: 'recon_1', exception_id: 'exc_1' },
      revision: 2,
    });
    expect(second?.recipientTimeZone).toBe('UTC');
    expect(result.rejections.map((r) => [r.line, r.reason])).toEqual([
      [4, expect.stringMatching(/unknown notice_type "renewal_notice_t99"/)],
      [5, 'subscription_id is empty (identity field of renewal_notice_t72)'],
      [6, 'revision "x1" is not a whole number'],
      [7, expect.stringMatching(/recipient_email "not-an-email"/)],
      [8, expect.stringMatching(/recipient_time_zone "Mars\/Olympus"/)],
      [9, expect.stringMatching(/due_at "tomorrow"/)],
      [10, 'deadline_at is before due_at'],
      [11, 'same notice as line 2 (type, identity and revision)'],
      [12, 'payload must be a JSON object'],
      [13, 'has 2 fields, the header has 13'],
      [14, expect.stringMatching(/subscription_id/)],
    ]);
    expect(result.rejections[0]?.raw).toContain('renewal_notice_t99,sub_2');
  });

  it('rejects rows PostgreSQL could not store (NUL, unpaired surrogates, also inside payload JSON) and never echoes them', () => {
    const good = `,2026-12-01,,,,0,a@example.com,,${due},${deadline},`;
    const csv = [
      header,
      ...withAnchor([
        `renewal_notice_t72,sub\u0000x${good}`,
        `renewal_notice_t72,sub_\ud800${good}`,
        `renewal_notice_t72,sub_ok,2026-12-01,,,,0,a@example.com,,${due},${deadline},"{""a"":""\\u0000""}"`,
        `renewal_notice_t72,sub_ok2,2026-12-01,,,,0,a@example.com,,${due},${deadline},"{""a"":""\\ud800""}"`,
        `${'x'.repeat(63)}\ud83d\ude00,sub_3${good}`,
      ]),
    ].join('\n');
    const result = validateUpload({ csv, secret });
    if (!result.ok) throw new Error(result.error);
    expect(result.rows).toEqual([]);
    expect(result.rejections.map((r) => [r.line, r.reason.slice(0, 30)])).toEqual([
      [2, 'contains a NUL character or an'],
      [3, 'contains a NUL character or an'],
      [4, 'payload must not contain NUL o'],
      [5, 'payload must not contain NUL o'],
      [6, expect.stringMatching(/^unknown notice_type/)],
    ]);
    const unsafe = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    for (const rejection of result.rejections) {
      expect(unsafe.test(rejection.reason)).toBe(false);
      expect(unsafe.test(rejection.raw)).toBe(false);
    }
  });

  it('judges every row by its own time zone when zones repeat (checked once per distinct zone)', () => {
    const row = (sub: string, zone: string) =>
      `renewal_notice_t72,${sub},2026-12-01,,,,0,a@example.com,${zone},${due},${deadline},${csvJson(renewal)},${anchor}`;
    const csv = [
      header,
      row('s1', 'Mars/Olympus'),
      row('s2', 'Europe/Paris'),
      row('s3', 'Mars/Olympus'),
      row('s4', 'Europe/Paris'),
      row('s5', 'mars/olympus'),
    ].join('\n');
    const result = validateUpload({ csv, secret });
    if (!result.ok) throw new Error(result.error);
    expect(result.rows.map((r) => [r.line, r.recipientTimeZone])).toEqual([
      [3, 'Europe/Paris'],
      [5, 'Europe/Paris'],
    ]);
    expect(result.rejections.map((r) => [r.line, r.raw])).toEqual([
      [2, row('s1', 'Mars/Olympus')],
      [4, row('s3', 'Mars/Olympus')],
      [6, row('s5', 'mars/olympus')],
    ]);
  });

  it('refuses a file without the required header, and an empty one', () => {
    expect(validateUpload({ csv: 'a,b\n1,2', secret })).toEqual({
      ok: false,
      error: expect.stringMatching(/lacks notice_type, recipient_email, due_at, deadline_at/),
    });
    expect(validateUpload({ csv: '', secret })).toEqual({ ok: false, error: 'The file is empty.' });
  });

  it('exports the rejected rows as CSV that parses back to line, reason and row', () => {
    const csv = rejectionsCsv([{ line: 7, reason: 'due_at "x" is not an ISO timestamp', raw: 'renewal_notice_t72,"a,b"' }]);
    expect(parseCsv(csv).map((r) => r.fields)).toEqual([
      ['line', 'reason', 'row'],
      ['7', 'due_at "x" is not an ISO timestamp', 'renewal_notice_t72,"a,b"'],
    ]);
  });
});

describe('validateUpload with the configured notice types', () => {
  it('accepts the required types the code registry never had, keyed and with their subject', () => {
    const types = ['auto_renewal_notice', 'trial_conversion_notice', 'price_change_notice', 'pre_debit_notice'];
    const csv = [
      header,
      ...types.map((type) => `${type},sub_req,2026-12-01,,,,1,a@example.com,,${due},${deadline},${csvJson(renewal)},${anchor}`),
      `no_such_type,sub_1,2026-12-01,,,,0,a@example.com,,${due},${deadline},,`,
    ].join('\n');
    const result = validateUpload({ csv, secret });
    if (!result.ok) throw new Error(result.error);
    expect(result.rows.map((row) => [row.fact.type, row.subjectId])).toEqual(types.map((type) => [type, 'sub_req']));
    for (const row of result.rows)
      expect(row.key).toBe(noticeKey(secret, { type: row.fact.type, identity: { subscription_id: 'sub_req', period_start: '2026-12-01' }, revision: 1 }));
    expect(new Set(result.rows.map((row) => row.key)).size).toBe(types.length);
    expect(result.rejections.map((r) => r.reason)).toEqual([
      'unknown notice_type "no_such_type"; known: renewal_notice_t72, renewal_notice_t24, payment_recovery, auto_renewal_notice, trial_conversion_notice, price_change_notice, pre_debit_notice, billing_reminder',
    ]);
  });
});

describe('validateUpload checks what the templates need, as the producer API does', () => {
  const columns =
    'notice_type,subscription_id,period_start,account_id,reconciliation_id,exception_id,recipient_email,recipient_locale,recipient_phone,due_at,deadline_at,anchor_at,payload';
  const renewalRow = (sub: string, { locale = '', phone = '', anchorAt = anchor, payload = csvJson(renewal) } = {}) =>
    `renewal_notice_t72,${sub},2026-12-01,,,,a@example.com,${locale},${phone},${due},${deadline},${anchorAt},${payload}`;
  const recoveryRow = (exception: string, { phone = '', payload = csvJson(recovery) } = {}) =>
    `payment_recovery,,,acct_1,recon_1,${exception},billing@example.com,,${phone},${due},${deadline},,${payload}`;
  const validate = (rows: string[]) => {
    const result = validateUpload({ csv: [columns, ...rows].join('\n'), secret });
    if (!result.ok) throw new Error(result.error);
    return result;
  };

  it('refuses a row whose payload lacks a declared variable, has one of the wrong type, or whose template shows an anchor it lacks, naming line and field', () => {
    const { amount: _amount, ...withoutAmount } = renewal;
    const result = validate([
      renewalRow('s_missing', { payload: csvJson(withoutAmount) }),
      renewalRow('s_number', { payload: csvJson({ ...renewal, amount: 49 }) }),
      renewalRow('s_currency', { payload: csvJson({ ...renewal, currency: 'euro' }) }),
      renewalRow('s_no_anchor', { anchorAt: '' }),
      renewalRow('s_empty', { payload: '' }),
      recoveryRow('exc_no_reference', { payload: csvJson({ ...recovery, reference: undefined }) }),
      renewalRow('s_ok'),
    ]);
    expect(result.rows.map((row) => row.line)).toEqual([8]);
    expect(result.rejections.map((r) => [r.line, r.reason])).toEqual([
      [2, 'payload.amount: is required (decimal)'],
      [3, 'payload.amount: must be a decimal string such as "49.00"'],
      [4, 'payload.currency: must be an ISO 4217 currency code such as EUR (upper case)'],
      [5, expect.stringMatching(/^anchor_at: is required for renewal_notice_t72: its template shows the date/)],
      [
        6,
        'payload.customer_name: is required (string); payload.plan_name: is required (string); payload.amount: is required (decimal); payload.currency: is required (currency)',
      ],
      [7, 'payload.reference: is required (string)'],
    ]);
    expect(result.rejections[0]?.raw).toContain('s_missing');
  });

  it('accepts a row with what its template needs and keeps its anchor, canonical locale, E.164 phone and channel', () => {
    const result = validate([
      renewalRow('s_de', { locale: 'de-at' }),
      renewalRow('s_phone', { phone: '+1 (415) 555-0100' }),
      recoveryRow('exc_sms', { phone: '+14155550100' }),
      recoveryRow('exc_mail'),
    ]);
    expect(result.rejections).toEqual([]);
    expect(
      result.rows.map((row) => [
        row.subjectId || row.fact.identity.exception_id,
        row.anchorAt?.toISOString() ?? null,
        row.recipientLocale,
        row.recipientPhone,
        row.channel,
      ]),
    ).toEqual([
      ['s_de', '2026-12-01T00:00:00.000Z', 'de-AT', null, 'email'],
      // renewal_notice_t72 goes by email only: the phone is kept, the channel stays email.
      ['s_phone', '2026-12-01T00:00:00.000Z', null, '+14155550100', 'email'],
      // payment_recovery goes by SMS, else email (config/notice-ledger.json).
      [expect.any(String), null, null, '+14155550100', 'sms'],
      [expect.any(String), null, null, null, 'email'],
    ]);
  });

  it('refuses a locale, a phone or an anchor that is none, naming the column', () => {
    const result = validate([
      renewalRow('s_locale', { locale: 'not a locale' }),
      recoveryRow('exc_phone', { phone: '415 555 0100' }),
      recoveryRow('exc_digits', { phone: '+1 123' }),
      renewalRow('s_anchor', { anchorAt: 'next week' }),
    ]);
    expect(result.rows).toEqual([]);
    expect(result.rejections.map((r) => [r.line, r.reason])).toEqual([
      [2, 'recipient_locale "not a locale" is not a BCP 47 language tag such as en-US or de'],
      [3, expect.stringMatching(/^recipient_phone: must be an E\.164 number/)],
      [4, expect.stringMatching(/^recipient_phone: is not a valid phone number/)],
      [5, expect.stringMatching(/^anchor_at "next week" is not an ISO timestamp with offset/)],
    ]);
  });
});
