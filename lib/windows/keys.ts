import { createHmac } from 'node:crypto';
import { canonicalNoticeOf } from '@/lib/ledger/notice-key';
import type { NoticeConfig } from './load-config';

/**
 * A configured notice type's key: HMAC-SHA256 over the ledger's v1 canonical encoding with the
 * type's identity fields in their configured order. For the three original types that order is
 * the one every stored row was keyed by; keys.test.ts pins their keys to the hex they have today.
 */
export function noticeKeyFor(
  secret: string,
  config: NoticeConfig,
  { noticeType, identity, revision }: { noticeType: string; identity: Record<string, string>; revision: number },
): string {
  const type = config.noticeTypes[noticeType];
  if (!type) throw new Error(`unknown notice type "${noticeType}" in ${config.file}`);
  const canonical = canonicalNoticeOf({ type: noticeType, fields: type.identity, identity, revision });
  return createHmac('sha256', secret).update(canonical, 'utf8').digest('hex');
}
