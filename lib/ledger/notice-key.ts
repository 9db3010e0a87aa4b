import { createHmac } from 'node:crypto';
import { activeNoticeConfig } from '@/lib/windows/active';
import type { NoticeConfig } from '@/lib/windows/load-config';
import type { NoticeFact } from '@/lib/windows/notice-fact';

/** One length-prefixed part: `<utf-8 bytes>:<value>`. */
function encodePart(part: string): string {
  return `${Buffer.byteLength(part, 'utf8')}:${part}`;
}

type CanonicalForm = { head: string; fields: readonly { name: string; encoded: string }[] };

/** Per configured type, the parts that never vary (version, type, field names), encoded once per configuration. */
const formsByConfig = new WeakMap<NoticeConfig, Map<string, CanonicalForm>>();

function canonicalForms(config: NoticeConfig): Map<string, CanonicalForm> {
  let forms = formsByConfig.get(config);
  if (!forms) {
    forms = new Map(
      Object.entries(config.noticeTypes).map(([type, definition]) => [
        type,
        { head: encodePart('notice-ledger/v1') + encodePart(type), fields: definition.identity.map((name) => ({ name, encoded: encodePart(name) })) },
      ]),
    );
    formsByConfig.set(config, forms);
  }
  return forms;
}

const encodedRevision = encodePart('revision');

/**
 * The canonical encoding is length-prefixed (`<bytes>:<utf-8>` per part), so no choice of
 * separators inside a value can make two different tuples encode alike: `a|b`+`c` and
 * `a`+`b|c` differ in their prefixes. Field order is the configured type's identity list
 * (NOTICE_CONFIG, lib/windows; pinned for the three original types by lib/windows/keys.test.ts),
 * not the caller's object's, and the field names are encoded too. Byte-identical to
 * `referenceCanonicalNotice` (property-tested); the constant parts are encoded once, which
 * is what made a 1 M-key replay dry run spend its time here (bench/replay-dry-run.ts).
 */
export function canonicalNotice(fact: NoticeFact, config: NoticeConfig = activeNoticeConfig().config): string {
  const form = Object.hasOwn(config.noticeTypes, fact.type) ? canonicalForms(config).get(fact.type) : undefined;
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
 * The same canonical encoding with the identity fields given by the caller, in key order
 * (lib/windows/keys.ts noticeKeyFor). With a configured type's own list it equals `canonicalNotice`.
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
export function noticeKey(secret: string, fact: NoticeFact, config: NoticeConfig = activeNoticeConfig().config): string {
  return createHmac('sha256', secret).update(canonicalNotice(fact, config), 'utf8').digest('hex');
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
