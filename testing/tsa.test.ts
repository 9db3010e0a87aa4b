import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkTimestampToken, requestTimestamp } from '@/lib/evidence/timestamp';
import { startLocalTsa, type LocalTsa } from './tsa';

/** The local TSA's tokens, checked by OpenSSL itself (`openssl ts -verify`) and by the product's own check, with controls. */

let tsa: LocalTsa;
const dir = mkdtempSync(path.join(os.tmpdir(), 'tsa-'));

beforeAll(async () => {
  tsa = await startLocalTsa();
});

afterAll(async () => {
  await tsa?.stop();
});

function opensslVerify(dataFile: string, tokenFile: string, caFile: string): { ok: boolean; output: string } {
  try {
    const output = execFileSync('openssl', ['ts', '-verify', '-data', dataFile, '-in', tokenFile, '-token_in', '-CAfile', caFile], {
      encoding: 'utf8',
      stdio: 'pipe',
    });
    return { ok: true, output };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe('the local RFC 3161 TSA', () => {
  it('issues tokens that openssl ts -verify accepts for their data, and refuses for other data or another CA', async () => {
    const data = Buffer.from('{"type":"notice-ledger/evidence-head","toSeq":4}', 'utf8');
    const token = await requestTimestamp({ url: tsa.url, data });
    const files = { data: path.join(dir, 'data'), other: path.join(dir, 'other'), token: path.join(dir, 'token.der'), ca: path.join(dir, 'ca.pem') };
    writeFileSync(files.data, data);
    writeFileSync(files.other, Buffer.from('something else'));
    writeFileSync(files.token, Buffer.from(token, 'base64'));
    writeFileSync(files.ca, tsa.certificatePem);
    const verified = opensslVerify(files.data, files.token, files.ca);
    expect(verified, verified.output).toMatchObject({ ok: true });
    expect(verified.output).toContain('Verification: OK');
    expect(opensslVerify(files.other, files.token, files.ca).ok).toBe(false);
    const stranger = await startLocalTsa();
    const strangerCa = path.join(dir, 'stranger.pem');
    writeFileSync(strangerCa, stranger.certificatePem);
    await stranger.stop();
    expect(opensslVerify(files.data, files.token, strangerCa).ok).toBe(false);

    expect(await checkTimestampToken({ token, data })).toMatchObject({ ok: true, tsa: expect.stringContaining('notice-ledger test TSA') });
    expect(await checkTimestampToken({ token, data: Buffer.from('something else') })).toEqual({ ok: false, problem: 'the token is over other data' });
    const bytes = Buffer.from(token, 'base64');
    bytes[bytes.length - 5] = (bytes[bytes.length - 5] ?? 0) ^ 0xff;
    expect((await checkTimestampToken({ token: bytes.toString('base64'), data })).ok).toBe(false);
  });
});
