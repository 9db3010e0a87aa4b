import { config } from '@/lib/config';
import type { NoticeConfig, RuleSet } from '@/lib/windows/load-config';
import { getWakeupPublisher } from '@/lib/queue';
import { activeNoticeConfig } from '@/lib/windows/active';
import type { WakeupPublisher } from './enqueue-notice';

/** What a producer request is planned with besides itself: the queue, the clock, the key secret, MAX_DELAY and the notice configuration. */
export type ProducerSettings = {
  publisher: WakeupPublisher;
  now: Date;
  secret: string;
  maxDelayMs: number;
  /** The operator's notice configuration (activeNoticeConfig()): which types exist, their identity and windows. */
  notices: { config: NoticeConfig; ruleSet: RuleSet };
};

/** The console process's: its one wake-up publisher, now, and the settings (the producer routes). */
export async function processProducerSettings(): Promise<ProducerSettings> {
  const settings = config();
  const publisher = await getWakeupPublisher();
  return { publisher, now: new Date(), secret: settings.NOTICE_KEY_SECRET, maxDelayMs: settings.MAX_DELAY, notices: activeNoticeConfig() };
}
