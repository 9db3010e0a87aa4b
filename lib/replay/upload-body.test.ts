import { describe, expect, it } from 'vitest';
import { replayCreateRequest } from '@/lib/api/console/replays';
import { createUploadValidator, validateUpload } from './upload';
import { readUploadBody, STREAMED_CSV } from './upload-body';

const secret = 'unit-secret-0123456789abcdef0123456789abcdef';
const header = 'notice_type,subscription_id,period_start,revision,recipient_email,recipient_time_zone,due_at,deadline_at,payload,anchor_at';
const payload = `"${JSON.stringify({ customer_name: 'Zoë "Z" 😀 Ng', plan_name: 'Pro', amount: '49.00', currency: 'EUR' }).replace(/"/g, '""')}"`;
const row = (n: number) =>
  `renewal_notice_t72,sub_${n},2026-12-01,0,zoe${n}@example.com,Europe/Berlin,2026-11-28T08:00:00Z,2026-11-29T08:00:00Z,${payload},2026-12-01T00:00:00Z`;
const file = (rows: number) => [header, ...Array.from({ length: rows }, (_, n) => row(n)), 'renewal_notice_t72,broken'].join('\r\n');

/** A request whose body arrives `size` bytes at a time, counting the pieces the reader pulled. */
function streamedRequest(body: string, size: number): { request: Request; pulled: () => number } {
  const bytes = new TextEncoder().encode(body);
  let offset = 0;
  let pulls = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls += 1;
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
  const request = new Request('http://console.test/api/console/replays/dry-run', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
  return { request, pulled: () => pulls };
}

const read = (body: string, { size = 7, maxBytes = 10_000_000, maxRows = 1_000 } = {}) => {
  const { request, pulled } = streamedRequest(body, size);
  return {
    result: readUploadBody(request, replayCreateRequest, { caps: { maxBytes, maxRows }, validator: () => createUploadValidator({ secret }) }),
    pulled,
  };
};

describe('readUploadBody', () => {
  it('validates the file as it arrives in 7-byte pieces (escapes, a surrogate pair and CRLF cut anywhere) exactly as the whole file', async () => {
    const csv = file(20);
    const { result } = read(JSON.stringify({ reason: 'upstream export', csv }));
    const answer = await result;
    expect(answer.ok).toBe(true);
    if (!answer.ok) return;
    expect(answer.data.input).toEqual({ reason: 'upstream export', csv: STREAMED_CSV });
    expect(answer.data.upload).toEqual(validateUpload({ csv, secret }));
    expect(answer.data.upload).toMatchObject({ ok: true, rows: expect.arrayContaining([expect.objectContaining({ line: 2 })]) });
    // The members may come in any order, with \u escapes for plain characters too.
    const escaped = JSON.stringify({ csv, reason: 'x'.repeat(5) }).replace(/,/g, '\\u002c');
    const reordered = await read(escaped.replace('"\\u002c"reason"', '","reason"'), { size: 3 }).result;
    expect(reordered.ok && reordered.data.upload).toEqual(validateUpload({ csv, secret }));
  });

  it('passes a filter request through its schema with no upload', async () => {
    const answer = await read(JSON.stringify({ filter: { source: 'billing' }, reason: 'lost wake-ups' })).result;
    expect(answer).toEqual({ ok: true, data: { input: { filter: { source: 'billing' }, reason: 'lost wake-ups' }, upload: null } });
  });

  it('refuses past the byte cap at once, in words, without reading the rest', async () => {
    const body = JSON.stringify({ reason: 'too big', csv: file(400) });
    const { result, pulled } = read(body, { size: 1_000, maxBytes: 20_000 });
    expect(await result).toMatchObject({
      ok: false,
      refusal: { kind: 'too_large', code: 'upload_too_large', message: expect.stringContaining('REPLAY_UPLOAD_MAX_BYTES') },
    });
    expect(pulled()).toBeLessThan(Math.ceil(body.length / 1_000) / 2);
  });

  it('refuses past the row cap at once, in words, without reading the rest', async () => {
    const body = JSON.stringify({ reason: 'too many', csv: file(400) });
    const { result, pulled } = read(body, { size: 1_000, maxRows: 10 });
    expect(await result).toMatchObject({
      ok: false,
      refusal: { kind: 'too_large', code: 'upload_too_many_rows', message: expect.stringContaining('10 rows') },
    });
    expect(pulled()).toBeLessThan(Math.ceil(body.length / 1_000) / 2);
    // The control: the same file under a cap it fits is read.
    expect((await read(body, { size: 1_000, maxRows: 401 }).result).ok).toBe(true);
  });

  it('refuses what is not a JSON object with one csv string: 400, never a throw', async () => {
    for (const body of [
      '',
      'nope',
      '[1]',
      '{"csv": "a\nb"}',
      '{"csv": "a", "csv": "b", "reason": "twice"}',
      '{"csv": "\\x", "reason": "bad"}',
      '{"reason": "abc",}',
      '{"csv": "a"',
    ]) {
      const answer = await read(body).result;
      expect(answer.ok, body).toBe(false);
      if (!answer.ok) expect(answer.refusal.kind, body).toBe('invalid_input');
    }
    const schemaMiss = await read(JSON.stringify({ csv: file(1) })).result;
    expect(schemaMiss).toMatchObject({ ok: false, refusal: { kind: 'invalid_input' } });
    const noFile = await read(JSON.stringify({ csv: '', reason: 'empty' })).result;
    expect(noFile).toMatchObject({ ok: true, data: { upload: { ok: false, error: 'The file is empty.' } } });
  });
});
