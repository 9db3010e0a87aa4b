import { noticeSettings } from '@/lib/config';
import { parseQuietHours } from './quiet-hours';
import { loadNoticeConfig, type NoticeConfig, type RuleSet } from './load-config';

/**
 * The operator's notice configuration for this process: read from NOTICE_CONFIG once, on first
 * use, and validated then. The worker and the console call it at start-up, so a bad file stops
 * the process with the field it names instead of failing the first request that plans a notice.
 * A changed file takes effect on restart; each planned notice records the rule set version it
 * was planned under. QUIET_HOURS is the last fallback of every type's quiet hours (the type's
 * own, else the file's, else QUIET_HOURS), so the planner and the send path resolve them alike.
 */
let active: { config: NoticeConfig; ruleSet: RuleSet } | null = null;

export function activeNoticeConfig(): { config: NoticeConfig; ruleSet: RuleSet } {
  if (active) return active;
  const settings = noticeSettings();
  active = loadNoticeConfig(settings.NOTICE_CONFIG, { fallbackQuietHours: settings.QUIET_HOURS ? parseQuietHours(settings.QUIET_HOURS) : null });
  return active;
}

/** Every configured notice type's name, in configuration order (the console's and the metrics' rows). */
export function configuredNoticeTypeNames(): string[] {
  return Object.keys(activeNoticeConfig().config.noticeTypes);
}

/** A configured type's label, or the name itself for a type no longer configured. */
export function noticeTypeLabel(type: string): string {
  const types = activeNoticeConfig().config.noticeTypes;
  return Object.hasOwn(types, type) ? (types[type]?.label ?? type) : type;
}
