import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureProductionBuild } from '@/scripts/production-build';
import { startConsoleServer } from '@/testing/console-server';

/**
 * What the console decides at `next start` from its settings (the e2e run cannot vary them): it
 * does not start while an enabled webhook lacks what it trusts (lib/events/webhook-sources.ts),
 * and it pins https with HSTS when PUBLIC_BASE_URL is https (lib/http/security-headers.ts).
 */

const root = path.resolve(import.meta.dirname, '..');
const secrets = { NOTICE_KEY_SECRET: 'k'.repeat(40), NEXTAUTH_SECRET: 's'.repeat(40), LOG_LEVEL: 'warn' };

beforeAll(async () => {
  await ensureProductionBuild({ root, log: (line) => console.log(`console-security-startup: ${line}`) });
}, 15 * 60_000);

describe('next start in production', () => {
  it('exits 1 with the SES webhook enabled and no SNS_TOPIC_ARNS, naming the setting (any AWS topic would otherwise be believed)', async () => {
    // Next may print "Ready" (and even answer) before the hook's check has run: either way it must exit.
    const outcome = await startConsoleServer({ env: { ...secrets, WEBHOOK_PROVIDERS: 'ses' } }).then(
      async (server) => {
        const deadline = Date.now() + 30_000;
        while (!server.exit() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        const exit = server.exit();
        await server.stop();
        return `${JSON.stringify(exit)}\n${server.logTail()}`;
      },
      (error: unknown) => String(error),
    );
    expect(outcome).toContain('"code":1');
    expect(outcome).toContain('SNS_TOPIC_ARNS is required in production for the ses webhook');
  }, 90_000);

  it('sends HSTS on its pages when PUBLIC_BASE_URL is https', async () => {
    const server = await startConsoleServer({ env: { ...secrets, PUBLIC_BASE_URL: 'https://console.example.com' } });
    try {
      // The proxy's answer to a visitor without a session: a page response that reads no database.
      const response = await fetch(`${server.url}/quarantine`, { redirect: 'manual' });
      expect(response.status).toBe(307);
      expect(response.headers.get('strict-transport-security')).toBe('max-age=31536000');
      expect(response.headers.get('content-security-policy')).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]{16,}' 'strict-dynamic'/);
    } finally {
      await server.stop();
    }
  }, 90_000);
});
