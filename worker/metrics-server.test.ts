import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { startMetricsServer } from './metrics-server';
import { queueNotUnderTest } from '@/testing/metrics-endpoints';

/**
 * Without WORKER_METRICS_TOKEN the worker's /metrics has no authentication, so where it listens is
 * the whole of its access control: loopback unless WORKER_METRICS_HOST says otherwise.
 */

let t: TestDatabase;
const logger = createLogger('metrics-server-test', 'silent');

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

function startAt(host: string) {
  return startMetricsServer({ queue: queueNotUnderTest, host, port: 0, db: t.db, quarantineAfterMs: 15 * 60_000, logger });
}

async function reachable(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

describe('worker metrics server bind address', () => {
  it('listens on the configured default, loopback, and nowhere else', async () => {
    const host = loadConfig({ NOTICE_KEY_SECRET: 'x'.repeat(32) }).WORKER_METRICS_HOST;
    const server = await startAt(host);
    try {
      expect(server.host).toBe('127.0.0.1');
      expect(await reachable(`http://127.0.0.1:${server.port}/metrics`)).toBe(true);
      // Another address of this machine (all of 127/8 is loopback on Linux): a server bound
      // to 0.0.0.0 answers there, one bound to 127.0.0.1 does not.
      expect(await reachable(`http://127.0.0.2:${server.port}/metrics`)).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('listens where configured: an IPv6 address, or every address', async () => {
    for (const [host, expected, alsoAt] of [
      ['::1', '::1', null],
      ['0.0.0.0', '0.0.0.0', '127.0.0.2'],
    ] as const) {
      const server = await startAt(loadConfig({ NOTICE_KEY_SECRET: 'x'.repeat(32), WORKER_METRICS_HOST: host }).WORKER_METRICS_HOST);
      try {
        expect(server.host, host).toBe(expected);
        const at = expected === '::1' ? '[::1]' : '127.0.0.1';
        expect(await reachable(`http://${at}:${server.port}/metrics`), host).toBe(true);
        if (alsoAt) expect(await reachable(`http://${alsoAt}:${server.port}/metrics`), host).toBe(true);
        else expect(await reachable(`http://127.0.0.1:${server.port}/metrics`), host).toBe(false);
      } finally {
        await server.close();
      }
    }
  });

  it('an address this machine does not have is a start-up error naming the variable', async () => {
    // 192.0.2.0/24 is TEST-NET-1: valid syntax, never assigned to a host.
    await expect(startAt('192.0.2.1')).rejects.toThrow(/WORKER_METRICS_HOST.*EADDRNOTAVAIL/);
  });
});

describe('WORKER_METRICS_TOKEN', () => {
  const token = 'worker-metrics-token-0123456789';

  it('with the token set, /metrics is 401 without it, with another or in another scheme, and 200 with it; the probes stay open', async () => {
    const configured = loadConfig({ NOTICE_KEY_SECRET: 'x'.repeat(32), WORKER_METRICS_TOKEN: token }).WORKER_METRICS_TOKEN;
    const server = await startMetricsServer({
      queue: queueNotUnderTest,
      host: '127.0.0.1',
      port: 0,
      db: t.db,
      quarantineAfterMs: 15 * 60_000,
      token: configured,
      logger,
    });
    try {
      const url = `http://127.0.0.1:${server.port}/metrics`;
      for (const authorization of [undefined, `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${token}`, token]) {
        const response = await fetch(url, { headers: authorization ? { authorization } : {} });
        expect(response.status, String(authorization)).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Bearer');
        expect(await response.text()).not.toContain('notice_ledger_');
      }
      const allowed = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toMatch(/^# TYPE notice_ledger_quarantined_claims gauge$/m);
      expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('refuses a token shorter than 16 characters at start-up', () => {
    expect(() => loadConfig({ NOTICE_KEY_SECRET: 'x'.repeat(32), WORKER_METRICS_TOKEN: 'short' })).toThrow(
      /WORKER_METRICS_TOKEN must be at least 16 characters/,
    );
  });
});
