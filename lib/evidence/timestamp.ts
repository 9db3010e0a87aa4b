import { createHash, randomBytes, webcrypto } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/**
 * RFC 3161 time-stamps on signed chain heads, through pkijs + asn1js: the request the worker
 * sends to TSA_URL, and the check `ledger evidence verify` makes of a token (the imprint is the
 * SHA-256 of the signed head's payload; the CMS signature verifies with the certificate the
 * token carries). Whether that TSA is one you trust is the reader's call: the check names it.
 */

const SHA256 = '2.16.840.1.101.3.4.2.1';

function engine(): pkijs.ICryptoEngine {
  return new pkijs.CryptoEngine({ name: 'node', crypto: webcrypto as unknown as Crypto });
}

const toArrayBuffer = (buffer: Buffer): ArrayBuffer => buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;

export function timestampRequestFor(data: Buffer): { der: Buffer; nonce: Buffer } {
  const nonce = randomBytes(8);
  nonce[0] = (nonce[0] ?? 0) & 0x7f;
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: SHA256 }),
      hashedMessage: new asn1js.OctetString({ valueHex: toArrayBuffer(createHash('sha256').update(data).digest()) }),
    }),
    certReq: true,
    nonce: new asn1js.Integer({ valueHex: toArrayBuffer(nonce) }),
  });
  return { der: Buffer.from(request.toSchema().toBER(false)), nonce };
}

export class TimestampError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TimestampError';
  }
}

/** Asks the TSA for a token on `data`; the token's DER, base64. Throws TimestampError saying why not. */
export async function requestTimestamp({ url, data, timeoutMs = 10_000 }: { url: string; data: Buffer; timeoutMs?: number }): Promise<string> {
  const { der } = timestampRequestFor(data);
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/timestamp-query' },
    body: new Uint8Array(der),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) throw new TimestampError(`the TSA answered HTTP ${String(response.status)}`);
  let parsed: pkijs.TimeStampResp;
  try {
    parsed = pkijs.TimeStampResp.fromBER(await response.arrayBuffer());
  } catch {
    throw new TimestampError('the TSA answer is not a TimeStampResp');
  }
  if (parsed.status.status !== 0 && parsed.status.status !== 1) throw new TimestampError(`the TSA refused: status ${String(parsed.status.status)}`);
  if (!parsed.timeStampToken) throw new TimestampError('the TSA granted no token');
  const token = Buffer.from(parsed.timeStampToken.toSchema().toBER(false));
  const check = await checkTimestampToken({ token: token.toString('base64'), data });
  if (!check.ok) throw new TimestampError(`the TSA's token does not hold: ${check.problem}`);
  return token.toString('base64');
}

export type TimestampCheck = { ok: true; genTime: Date; tsa: string } | { ok: false; problem: string };

/** The token is over `data` (SHA-256 imprint) and its CMS signature verifies with the certificate it carries. */
export async function checkTimestampToken({ token, data }: { token: string; data: Buffer }): Promise<TimestampCheck> {
  try {
    const info = pkijs.ContentInfo.fromBER(toArrayBuffer(Buffer.from(token, 'base64')));
    if (info.contentType !== pkijs.ContentInfo.SIGNED_DATA) return { ok: false, problem: 'not CMS SignedData' };
    const signed = new pkijs.SignedData({ schema: info.content });
    const content = signed.encapContentInfo.eContent;
    if (signed.encapContentInfo.eContentType !== '1.2.840.113549.1.9.16.1.4' || !content) return { ok: false, problem: 'no TSTInfo inside' };
    const tst = pkijs.TSTInfo.fromBER(content.getValue());
    if (tst.messageImprint.hashAlgorithm.algorithmId !== SHA256) return { ok: false, problem: 'the imprint is not SHA-256' };
    const imprint = Buffer.from(tst.messageImprint.hashedMessage.valueBlock.valueHexView);
    if (!imprint.equals(createHash('sha256').update(data).digest())) return { ok: false, problem: 'the token is over other data' };
    const verified = await signed.verify({ signer: 0, data: toArrayBuffer(data), checkChain: false, extendedMode: true }, engine());
    if (!verified.signatureVerified) return { ok: false, problem: 'the TSA signature does not verify' };
    const signer = verified.signerCertificate;
    const tsa = signer ? signer.subject.typesAndValues.map((tv) => `${tv.type}=${String(tv.value.valueBlock.value)}`).join(', ') : 'unknown';
    return { ok: true, genTime: tst.genTime, tsa };
  } catch (error) {
    return { ok: false, problem: `unreadable token (${error instanceof Error ? error.message.slice(0, 120) : 'error'})` };
  }
}
