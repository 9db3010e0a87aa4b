import { Counter } from 'prom-client';
import { registry } from '@/lib/metrics/registry';

/** Replays are rare and few, so the batch id is a bounded label; it is never part of a key. */
export const replayWakeupsPublished = new Counter({
  name: 'notice_ledger_replay_wakeups_published_total',
  help: 'Wake-ups a replay run published, by batch.',
  labelNames: ['batch_id'] as const,
  registers: [registry],
});
