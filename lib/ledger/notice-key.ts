import { createHmac } from 'node:crypto';
import { noticeTypes, type NoticeFact } from './notice-types';

/**
 * The canonical encoding is length-prefixed (`<bytes>:<utf-8>` per part), so no choice of
 * separators inside a value can make two different tuples encode alike: `a|b`+`c` and
 * `a`+`b|c` differ in their prefixes. Field order is fixed by the type's schema, not by the
 * caller's object, and the field names are encoded too.
 */
export function canonicalNotice(fact: NoticeFact): string {
  const fields = Object.keys(noticeTypes[fact.type].identity.shape);
  const parts = ['notice-ledger/v1', fact.type];
  for (const field of fields) {
    const value = fact.identity[field];
    if (value === undefined) throw new Error(`identity field ${field} missing for ${fact.type}`);
    parts.push(field, value);
  }
  parts.push('revision', String(fact.revision));
  return parts.map((part) => `${Buffer.byteLength(part, 'utf8')}:${part}`).join('');
}

/** HMAC-SHA256(secret, canonical(fact)) in lower-case hex: the notice's identity everywhere. */
export function noticeKey(secret: string, fact: NoticeFact): string {
  return createHmac('sha256', secret).update(canonicalNotice(fact), 'utf8').digest('hex');
}

/** What the provider echoes back: the first 32 hex of the key. */
export function correlationOf(noticeKeyHex: string): string {
  return noticeKeyHex.slice(0, 32);
}

export function messageIdFor(noticeKeyHex: string, domain: string): string {
  return `<${correlationOf(noticeKeyHex)}@${domain}>`;
}

/** `<corr@domain>` or `corr@domain` → corr, when it looks like ours. */
export function correlationFromMessageId(messageId: string): string | null {
  const match = /^<?([0-9a-f]{32})@[^>]+>?$/.exec(messageId.trim());
  return match?.[1] ?? null;
}
