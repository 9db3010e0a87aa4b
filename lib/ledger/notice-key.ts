import { createHmac } from 'node:crypto';
import { noticeTypes, type NoticeFact } from './notice-types';

/** One length-prefixed part: `<utf-8 bytes>:<value>`. */
function encodePart(part: string): string {
  return `${Buffer.byteLength(part, 'utf8')}:${part}`;
}

type CanonicalForm = { head: string; fields: readonly { name: string; encoded: string }[] };

/** Per type, the parts that never vary (version, type, field names), encoded once at start-up. */
const canonicalForms = new Map<string, CanonicalForm>(
  Object.entries(noticeTypes).map(([type, definition]) => [
    type,
    {
      head: encodePart('notice-ledger/v1') + encodePart(type),
      fields: Object.keys(definition.identity.shape).map((name) => ({ name, encoded: encodePart(name) })),
    },
  ]),
);

const encodedRevision = encodePart('revision');

/**
 * The canonical encoding is length-prefixed (`<bytes>:<utf-8>` per part), so no choice of
 * separators inside a value can make two different tuples encode alike: `a|b`+`c` and
 * `a`+`b|c` differ in their prefixes. Field order is fixed by the type's schema, not by the
 * caller's object, and the field names are encoded too. Byte-identical to
 * `referenceCanonicalNotice` (property-tested); the constant parts are encoded once, which
 * is what made a 1 M-key replay dry run spend its time here (bench/replay-dry-run.ts).
 */
export function canonicalNotice(fact: NoticeFact): string {
  const form = canonicalForms.get(fact.type);
  if (!form) throw new Error(`unknown notice type ${String(fact.type)}`);
  let canonical = form.head;
  for (const field of form.fields) {
    const value = fact.identity[field.name];
    if (value === undefined) throw new Error(`identity field ${field.name} missing for ${fact.type}`);
    canonical += field.encoded + encodePart(value);
  }
  return canonical + encodedRevision + encodePart(String(fact.revision));
}

/**
 * The same canonical encoding for a notice type named by configuration rather than by the
 * registry above (lib/windows): the caller gives the identity fields in key order. For the
 * registry's types, with the registry's order, it equals `canonicalNotice` (pinned in
 * lib/windows/keys.test.ts).
 */
export function canonicalNoticeOf({
  type,
  fields,
  identity,
  revision,
}: {
  type: string;
  fields: readonly string[];
  identity: Record<string, string>;
  revision: number;
}): string {
  let canonical = encodePart('notice-ledger/v1') + encodePart(type);
  for (const field of fields) {
    const value = identity[field];
    if (value === undefined) throw new Error(`identity field ${field} missing for ${type}`);
    canonical += encodePart(field) + encodePart(value);
  }
  return canonical + encodedRevision + encodePart(String(revision));
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
