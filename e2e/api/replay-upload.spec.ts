import { expect, test } from '@/e2e/fixtures/test';

/**
 * A replay upload through `next start`, with the caps scripts/e2e.ts sets (1 MB, 500 rows):
 * a file within both is dry-run (the control); one row too many, a body over the byte cap
 * (declared, or chunked with no Content-Length) are refused 413 in words, and no replay is written.
 */

const header = 'notice_type,subscription_id,period_start,revision,recipient_email,recipient_time_zone,due_at,deadline_at,payload,anchor_at,note';
const payload = `"${JSON.stringify({ customer_name: 'Ada', plan_name: 'Pro', amount: '49.00', currency: 'EUR' }).replace(/"/g, '""')}"`;
const year = new Date().getUTCFullYear() + 1;
const file = (rows: number, note = '') =>
  [
    header,
    ...Array.from(
      { length: rows },
      (_, n) =>
        `renewal_notice_t72,sub_upload_${n},${year}-03-01,0,upload${n}@example.com,Europe/Berlin,${year}-02-26T08:00:00Z,${year}-02-27T08:00:00Z,${payload},${year}-03-01T00:00:00Z,${note}`,
    ),
  ].join('\n');

test('uploads are capped by rows and bytes, refused in words, and write nothing', async ({ apiAs, sql, baseURL }) => {
  const operator = await apiAs('operator');
  const headers = { origin: baseURL ?? '', 'content-type': 'application/json' };
  const replays = async () => Number((await sql<{ n: string }>('select count(*)::text as n from replays'))[0]?.n);
  const before = await replays();

  const fits = await operator.post('/api/console/replays/dry-run', { headers, data: { csv: file(500) } });
  expect(fits.status()).toBe(200);
  expect(((await fits.json()) as { data: { accepted: number } }).data.accepted).toBe(500);

  for (const path of ['/api/console/replays/dry-run', '/api/console/replays']) {
    const tooMany = await operator.post(path, { headers, data: { csv: file(501), reason: 'one row past the cap' } });
    expect(tooMany.status(), path).toBe(413);
    expect(((await tooMany.json()) as { error: { message: string } }).error.message).toContain('more than 500 rows (REPLAY_UPLOAD_MAX_ROWS)');
  }

  const big = JSON.stringify({ csv: file(300, 'x'.repeat(3_500)), reason: 'over a megabyte' });
  expect(big.length).toBeGreaterThan(1_000_000);
  const declared = await operator.post('/api/console/replays', { headers, data: big });
  expect(declared.status()).toBe(413);
  expect(((await declared.json()) as { error: { message: string } }).error.message).toContain('REPLAY_UPLOAD_MAX_BYTES');

  // Chunked, no Content-Length: cut off while streaming.
  const cookie = (await operator.storageState()).cookies.map((c) => `${c.name}=${c.value}`).join('; ');
  const bytes = new TextEncoder().encode(big);
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + 64 * 1024));
      offset += 64 * 1024;
    },
  });
  const chunked = await fetch(`${baseURL}/api/console/replays`, { method: 'POST', headers: { ...headers, cookie }, body, duplex: 'half' } as RequestInit);
  expect(chunked.status).toBe(413);
  expect(((await chunked.json()) as { error: { message: string } }).error.message).toContain('REPLAY_UPLOAD_MAX_BYTES');

  expect(await replays()).toBe(before);
});
