import { X509Certificate, createPublicKey, createVerify, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { snsEnvelope, type SnsEnvelope } from '@/lib/api/webhooks';
import type { Refusal } from '@/lib/http/refusal';

/**
 * Amazon SNS HTTP(S) notifications: the envelope SES event publishing arrives in, and the
 * check that it really came from SNS. The signature is RSA over a canonical "Key\nValue\n"
 * string (SHA1 for SignatureVersion 1, SHA256 for 2); the key comes from an X.509 certificate
 * we fetch from SigningCertURL — only for a topic the operator listed (SNS_TOPIC_ARNS), and only
 * over https from exactly sns.<the topic's region>.amazonaws.com, since a URL chosen by the sender
 * would let anyone sign with their own certificate.
 */

/**
 * `arn:<partition>:sns:<region>:<account>:<topic>`: the region decides the one host SNS signs
 * from (`sns.<region>.amazonaws.com`, `.com.cn` in the China partition), so a notification that
 * names us-east-1 cannot point at a certificate anywhere else.
 */
const topicArnPattern = /^arn:(aws|aws-cn|aws-us-gov):sns:([a-z]{2}(?:-[a-z]+)+-\d{1,2}):(\d{1,12}):([A-Za-z0-9_-]{1,256}(?:\.fifo)?)$/;

export function isSnsTopicArn(text: string): boolean {
  return topicArnPattern.test(text);
}

/** The host SNS uses for this topic's signing certificates and subscription links, or null for no SNS topic ARN. */
export function snsHostForTopic(topicArn: string): string | null {
  const match = topicArnPattern.exec(topicArn);
  if (!match) return null;
  return `sns.${match[2] ?? ''}.amazonaws.com${match[1] === 'aws-cn' ? '.cn' : ''}`;
}

/** https, no credentials or odd port, exactly `host`, a .pem path when `pem`. */
export function isTrustedSnsUrl(text: string, { pem, host }: { pem: boolean; host: string }): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' || url.username || url.password || (url.port !== '' && url.port !== '443')) return false;
  if (url.hostname !== host) return false;
  return pem ? url.pathname.endsWith('.pem') : true;
}

export function snsStringToSign(message: SnsEnvelope): string | null {
  const keys =
    message.Type === 'Notification'
      ? ['Message', 'MessageId', ...(message.Subject !== undefined ? ['Subject'] : []), 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  let text = '';
  for (const key of keys) {
    const value = message[key as keyof SnsEnvelope];
    if (value === undefined) return null;
    text += `${key}\n${value}\n`;
  }
  return text;
}

/** Returns the PEM at a (validated) URL. Injected in tests; the machine may have no network. */
export type SnsCertFetcher = (url: string) => Promise<string>;

export const fetchSnsCertificate: SnsCertFetcher = async (url) => {
  const response = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`certificate fetch answered ${response.status}`);
  const text = await response.text();
  if (text.length > 20_000) throw new Error('certificate too large');
  return text;
};

/**
 * SNS_CERT_DIR: the operator placed the certificates (a console with no egress to AWS). The
 * file is the URL's last path segment, so the URL decides nothing but which pinned file to read.
 */
export function readPinnedSnsCertificate(dir: string): SnsCertFetcher {
  return async (url) => {
    const name = path.posix.basename(new URL(url).pathname);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.pem$/.test(name)) throw new Error('certificate file name not allowed');
    const text = await readFile(path.join(dir, name), 'utf8');
    if (text.length > 20_000) throw new Error('certificate too large');
    return text;
  };
}

export type SnsKeyResolver = (url: string) => Promise<KeyObject>;

/**
 * Certificates rotate rarely and every notification names one: cache the parsed key per URL
 * (bounded, with a TTL), and forget failures so a transient fetch error is retried.
 */
export function createSnsKeyResolver({
  fetcher = fetchSnsCertificate,
  ttlMs = 6 * 3_600_000,
  maxEntries = 32,
  now = () => Date.now(),
}: { fetcher?: SnsCertFetcher; ttlMs?: number; maxEntries?: number; now?: () => number } = {}): SnsKeyResolver {
  const cache = new Map<string, { at: number; key: Promise<KeyObject> }>();
  return (url) => {
    const hit = cache.get(url);
    if (hit && now() - hit.at < ttlMs) return hit.key;
    if (cache.size >= maxEntries) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    const key = fetcher(url).then((pem) => {
      const certificate = new X509Certificate(pem);
      const at = now();
      if (Date.parse(certificate.validFrom) > at || Date.parse(certificate.validTo) < at) throw new Error('signing certificate is not valid now');
      return createPublicKey(certificate.publicKey.export({ type: 'spki', format: 'pem' }));
    });
    key.catch(() => cache.delete(url));
    cache.set(url, { at: now(), key });
    return key;
  };
}

let processResolver: SnsKeyResolver | undefined;
export function defaultSnsKeyResolver({ certDir }: { certDir?: string } = {}): SnsKeyResolver {
  processResolver ??= createSnsKeyResolver(certDir ? { fetcher: readPinnedSnsCertificate(certDir) } : {});
  return processResolver;
}

export type SnsCheck = { ok: true; message: SnsEnvelope; host: string } | { ok: false; refusal: Refusal };

export async function verifySnsMessage({
  value,
  resolveKey,
  allowedTopics,
  now = new Date(),
  toleranceMs = 3_600_000,
}: {
  value: unknown;
  resolveKey: SnsKeyResolver;
  allowedTopics: string[];
  now?: Date;
  toleranceMs?: number;
}): Promise<SnsCheck> {
  const parsed = snsEnvelope.safeParse(value);
  if (!parsed.success) return { ok: false, refusal: { kind: 'invalid_input', message: 'not an SNS message' } };
  const message = parsed.data;
  // Before anything is fetched: any AWS account can create a topic and have SNS sign for it, so
  // a valid signature proves only that some topic sent this. An empty list trusts no topic.
  if (!allowedTopics.includes(message.TopicArn))
    return {
      ok: false,
      refusal: { kind: 'forbidden', message: allowedTopics.length === 0 ? 'no SNS topic is trusted (SNS_TOPIC_ARNS)' : 'unexpected TopicArn' },
    };
  const host = snsHostForTopic(message.TopicArn);
  if (!host || !isTrustedSnsUrl(message.SigningCertURL, { pem: true, host }))
    return { ok: false, refusal: { kind: 'unauthenticated', message: "SigningCertURL is not an https URL on the topic's SNS host" } };
  // SNS keeps a notification's Timestamp across its own retries, so the window is wider than
  // a per-request signature's; duplicates inside it are absorbed by the (provider, event_id) key.
  if (Math.abs(now.getTime() - Date.parse(message.Timestamp)) > toleranceMs)
    return { ok: false, refusal: { kind: 'unauthenticated', message: 'timestamp outside the replay window' } };
  const stringToSign = snsStringToSign(message);
  if (stringToSign === null) return { ok: false, refusal: { kind: 'invalid_input', message: 'SNS message lacks a signed field' } };
  let key: KeyObject;
  try {
    key = await resolveKey(message.SigningCertURL);
  } catch {
    return { ok: false, refusal: { kind: 'unauthenticated', message: 'signing certificate unavailable' } };
  }
  const verifier = createVerify(message.SignatureVersion === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
  verifier.update(stringToSign, 'utf8');
  let valid = false;
  try {
    valid = verifier.verify(key, message.Signature, 'base64');
  } catch {
    valid = false;
  }
  if (!valid) return { ok: false, refusal: { kind: 'unauthenticated', message: 'signature mismatch' } };
  return { ok: true, message, host };
}
