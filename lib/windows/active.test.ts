import { describe, expect, it } from 'vitest';
import { noticeKey } from '@/lib/ledger/notice-key';
import { runScript } from '@/testing/run-script';

describe('activeNoticeConfig', () => {
  it('needs only NOTICE_CONFIG and QUIET_HOURS: a process with no other setting derives the same notice key', async () => {
    const fact = { type: 'renewal_notice_t72', identity: { subscription_id: 'sub_active', period_start: '2026-10-01' }, revision: 0 };
    // No NOTICE_KEY_SECRET, DATABASE_URL or NEXTAUTH_SECRET in the child: the launchers' seeds run like this.
    const run = await runScript({
      script: 'testing/print-notice-key.ts',
      args: ['a-secret', JSON.stringify(fact)],
      env: { PATH: process.env.PATH ?? '', HOME: '/tmp', NODE_ENV: 'test' },
    });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe(noticeKey('a-secret', fact));
  });
});
