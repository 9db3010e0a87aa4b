import { createHmac } from 'node:crypto';
import { activeNoticeConfig } from '@/lib/windows/active';
import type { NoticeFact } from '@/lib/windows/notice-fact';

/**
 * The v1 key derivation written the obvious way, frozen: the specification that
 * `noticeKey()` must match byte for byte (property-tested in notice-key.test.ts, compared in
 * bench/replay-dry-run.ts). Every stored ledger row was keyed by this; never use it on a hot path.
 * The fields, in order, are the configured type's identity list (their order for the three original
 * types is pinned in lib/windows/keys.test.ts).
 */
export function referenceCanonicalNotice(fact: NoticeFact): string {
  const fields = activeNoticeConfig().config.noticeTypes[fact.type]?.identity;
  if (!fields) throw new Error(`unknown notice type ${fact.type}`);
  const parts = ['notice-ledger/v1', fact.type];
  for (const field of fields) {
    const value = fact.identity[field];
    if (value === undefined) throw new Error(`identity field ${field} missing for ${fact.type}`);
    parts.push(field, value);
  }
  parts.push('revision', String(fact.revision));
  return parts.map((part) => `${Buffer.byteLength(part, 'utf8')}:${part}`).join('');
}

export function referenceNoticeKey(secret: string, fact: NoticeFact): string {
  return createHmac('sha256', secret).update(referenceCanonicalNotice(fact), 'utf8').digest('hex');
}
